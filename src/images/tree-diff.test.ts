import assert from 'node:assert/strict';
import { linkSync, lutimesSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { TarWriter } from '../util/tar-writer.ts';
import { readXattrsOf, writeChangesTar } from './overlay-diff.ts';
import { readTar } from './tar-reader.ts';
import { CHANGE_DELETE, treeChanges } from './tree-diff.ts';

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'engine-treediff-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The same small tree under both roots, with the times an image's files have (whole seconds). */
function twin(): { oldRoot: string; newRoot: string } {
  const oldRoot = join(dir, 'old');
  const newRoot = join(dir, 'new');
  for (const r of [oldRoot, newRoot]) {
    mkdirSync(join(r, 'etc/keep'), { recursive: true });
    mkdirSync(join(r, 'bin'), { recursive: true });
    writeFileSync(join(r, 'etc/passwd'), 'root\n');
    writeFileSync(join(r, 'etc/keep/a'), 'a\n');
    writeFileSync(join(r, 'bin/tool'), 'same size');
    symlinkSync('tool', join(r, 'bin/alias'));
    lutimesSync(join(r, 'bin/alias'), 1704067200, 1704067200); // a symlink's own time, as an image's
    for (const p of ['etc/passwd', 'etc/keep/a', 'bin/tool', 'etc/keep', 'etc', 'bin']) utimesSync(join(r, p), 1704067200, 1704067200);
  }
  return { oldRoot, newRoot };
}

describe('two trees compared by metadata, as dockerd', () => {
  test('additions, deletions, modifications, parents listed before children; contents never read', async () => {
    const { oldRoot, newRoot } = twin();
    writeFileSync(join(newRoot, 'etc/keep/a'), 'a\nmore\n');
    rmSync(join(newRoot, 'etc/passwd'));
    mkdirSync(join(newRoot, 'new/sub'), { recursive: true });
    writeFileSync(join(newRoot, 'new/sub/f'), 'f');
    // Same size and mtime, other content: not a change (dockerd compares no contents either).
    writeFileSync(join(newRoot, 'bin/tool'), 'SAME SIZE');
    utimesSync(join(newRoot, 'bin/tool'), 1704067200, 1704067200);
    utimesSync(join(newRoot, 'bin'), 1704067200, 1704067200);
    const changes = (await treeChanges(oldRoot, newRoot)).map((c) => `${'CAD'[c.Kind]} ${c.Path}`);
    assert.deepEqual(changes, ['C /etc', 'C /etc/keep', 'C /etc/keep/a', 'D /etc/passwd', 'A /new', 'A /new/sub', 'A /new/sub/f']);
  });

  test('the change list as a layer tar: whiteouts, directory headers, contents, hard links within the layer', async () => {
    const { oldRoot, newRoot } = twin();
    rmSync(join(newRoot, 'etc/passwd'));
    writeFileSync(join(newRoot, 'etc/keep/b'), 'bee');
    linkSync(join(newRoot, 'etc/keep/b'), join(newRoot, 'etc/keep/b2'));
    symlinkSync('../bin/tool', join(newRoot, 'etc/link'));
    const changes = await treeChanges(oldRoot, newRoot);
    const xattrs = await readXattrsOf(changes.filter((c) => c.Kind !== CHANGE_DELETE).map((c) => join(newRoot, c.Path)));
    assert.ok(xattrs, 'getfattr is installed (Debian attr)');
    const chunks: Buffer[] = [];
    await writeChangesTar(newRoot, changes, xattrs, new TarWriter((c) => void chunks.push(Buffer.from(c))));
    const got: string[] = [];
    for await (const e of readTar([Buffer.concat(chunks)])) {
      let data = '';
      for await (const c of e.body) data += c.toString();
      got.push(`${e.header.kind}:${e.header.name}${e.header.linkname ? `->${e.header.linkname}` : ''}${data ? `=${data}` : ''}`);
    }
    assert.deepEqual(got, [
      'directory:etc/',
      'directory:etc/keep/',
      'file:etc/keep/b=bee',
      'link:etc/keep/b2->etc/keep/b',
      'symlink:etc/link->../bin/tool',
      'file:etc/.wh.passwd',
    ]);
  });
});
