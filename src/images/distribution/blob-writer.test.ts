// writeBlob against a real containerd: the direct path (file beside the blobs + bare COMMIT) and the
// Content.Write path give the same result; a blob whose bytes do not match is never stored.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { SupervisorClient } from '../../supervisor/client.ts';
import { ManagedContainerd } from '../../supervisor/containerd-process.ts';
import { makeTestEnv, type TestEnv } from '../../../test/helpers/supervisor-harness.ts';
import { blobSyncsDone, BlobVerificationError, cleanIngestLeftovers, writeBlob } from './blob-writer.ts';
import { cachedBytes } from '../../../test/helpers/page-cache.ts';

let env: TestEnv;
let client: SupervisorClient;
let contentRoot: string;

before(async () => {
  env = await makeTestEnv('bw-');
  const mc = new ManagedContainerd({ dataRoot: env.dataRoot, execRoot: env.execRoot, log: env.log });
  env.defer(() => mc.stop());
  await mc.start();
  client = new SupervisorClient(mc.address, { namespace: 'test' });
  env.defer(() => client.close());
  await client.ensureNamespace('test');
  contentRoot = join(env.dataRoot, 'containerd', 'io.containerd.content.v1.content');
});
after(async () => env?.cleanup());

const digestOf = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
async function* chunks(b: Buffer, size = 64 << 10): AsyncIterable<Buffer> {
  for (let i = 0; i < b.length; i += size) yield b.subarray(i, i + size);
}

for (const direct of [true, false]) {
  test(`stores a verified blob with labels under the lease (${direct ? 'direct into the content directory' : 'Content.Write'})`, async () => {
    const data = randomBytes(3 << 20);
    const digest = digestOf(data);
    // Count what goes through Content.Write: nothing on the direct path (containerd finds the blob).
    let streamed = 0;
    const spy = Object.create(client) as SupervisorClient;
    spy.contentWrite = (ref, src, o) =>
      client.contentWrite(
        ref,
        (async function* () {
          for await (const c of src as AsyncIterable<Uint8Array>) {
            streamed += c.length;
            yield c;
          }
        })(),
        o,
      );
    await client.withLease(async (lease) => {
      let ended = false;
      await writeBlob(
        { client: spy, lease, ...(direct ? { contentRoot } : {}) },
        `t-${digest}`,
        digest,
        data.length,
        chunks(data),
        { 'x.test/label': 'v' },
        () => {
          ended = true;
        },
      );
      assert.ok(ended);
      assert.equal(streamed, direct ? 0 : data.length);
      const info = await client.contentInfo(digest);
      assert.equal(Number(info.size), data.length);
      assert.equal(info.labels['x.test/label'], 'v');
      assert.ok((await client.contentReadAll(digest)).equals(data));
    });
    assert.deepEqual(
      readdirSync(join(contentRoot, 'blobs', 'sha256')).filter((n) => n.startsWith('.engine-ingest-')),
      [],
      'no temporary file left',
    );
  });

  test(`refuses bytes that do not match the digest or the size (${direct ? 'direct' : 'Content.Write'})`, async () => {
    const data = randomBytes(1 << 20);
    const claimed = digestOf(randomBytes(16));
    await client.withLease(async (lease) => {
      await assert.rejects(
        writeBlob({ client, lease, ...(direct ? { contentRoot } : {}) }, `bad-${claimed}`, claimed, data.length, chunks(data), {}),
        (e: Error) => (direct ? e instanceof BlobVerificationError : /digest|precondition/i.test(e.message)),
      );
      await assert.rejects(
        writeBlob(
          { client, lease, ...(direct ? { contentRoot } : {}) },
          `short-${claimed}`,
          digestOf(data),
          data.length + 1,
          chunks(data),
          {},
        ),
      );
    });
    await assert.rejects(client.contentInfo(claimed));
    assert.equal(existsSync(join(contentRoot, 'blobs', 'sha256', claimed.slice(7))), false);
  });
}

test('a stored blob leaves the page cache once its background sync is done', async () => {
  const data = randomBytes(4 << 20);
  const digest = digestOf(data);
  // Checked under the lease: once it ends, containerd's GC may remove the blob.
  await client.withLease(async (lease) => {
    await writeBlob({ client, lease, contentRoot }, `pc-${digest}`, digest, data.length, chunks(data), {});
    await blobSyncsDone();
    assert.equal(cachedBytes(join(contentRoot, 'blobs', 'sha256', digest.slice(7))), 0);
  });
});

test('leftover temporary files are cleaned', async () => {
  const { writeFile } = await import('node:fs/promises');
  const leftover = join(contentRoot, 'blobs', 'sha256', '.engine-ingest-deadbeef');
  await writeFile(leftover, 'x');
  await cleanIngestLeftovers(contentRoot);
  assert.equal(existsSync(leftover), false);
});
