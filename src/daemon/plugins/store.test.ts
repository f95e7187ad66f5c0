// The plugins' files: records saved and loaded (no file yet means no plugins; a damaged file is an
// error naming it, never an empty list), blobs by digest, and blob clean-up keeping what is referenced.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PluginFiles, type PluginRecord } from './store.ts';

describe('plugin files', () => {
  let dir: string;
  let files: PluginFiles;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-plugin-files-'));
    files = new PluginFiles(join(dir, 'plugins'));
    await files.init();
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('records: none at first, then what was saved; no temporary file stays behind', async () => {
    assert.deepEqual(await files.load(), []);
    const rec = {
      Id: 'a'.repeat(64),
      Name: 'x:latest',
      Enabled: true,
      configDigest: 'sha256:' + '0'.repeat(64),
      layers: [],
    } as unknown as PluginRecord;
    await files.save([rec]);
    assert.deepEqual(await files.load(), [rec]);
    assert.deepEqual(
      (await readdir(files.root)).filter((n) => n.includes('.tmp-')),
      [],
    );
  });

  test('a damaged records file is an error naming it', async () => {
    const other = new PluginFiles(join(dir, 'damaged'));
    await other.init();
    await writeFile(join(other.root, 'plugins.json'), '{"plugins": [');
    await assert.rejects(other.load(), new RegExp(`${join(other.root, 'plugins.json')} are not valid JSON`));
  });

  test('blobs by digest; clean-up keeps only what is referenced', async () => {
    const a = await files.putBlob(Buffer.from('config a'));
    const b = await files.putBlob(Buffer.from('layer b'));
    assert.match(a, /^sha256:[0-9a-f]{64}$/);
    assert.equal((await files.readBlob(a)).toString(), 'config a');
    assert.equal(await files.hasBlob(b, 7), true);
    assert.equal(await files.hasBlob(b, 8), false, 'a size mismatch is not the blob');
    await files.dropBlobsExcept(new Set([a]));
    assert.equal(await files.hasBlob(a), true);
    assert.equal(await files.hasBlob(b), false);
    assert.throws(() => files.blobPath('md5:abc'), /not a sha256 digest/);
  });
});
