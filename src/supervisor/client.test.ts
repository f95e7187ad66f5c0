import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { EngineError } from '../errors.ts';
import { SupervisorClient } from './client.ts';
import { ManagedContainerd } from './containerd-process.ts';
import { GrpcStatus, grpcCode } from './errors.ts';
import { makeTestEnv, waitFor, type TestEnv } from '../../test/helpers/supervisor-harness.ts';
import type { SupervisorEvent } from './types.ts';

let env: TestEnv;
let mc: ManagedContainerd;
let client: SupervisorClient;

before(async () => {
  env = await makeTestEnv('cl-');
  mc = new ManagedContainerd({ dataRoot: env.dataRoot, execRoot: env.execRoot, log: env.log });
  env.defer(() => mc.stop());
  await mc.start();
  client = new SupervisorClient(mc.address, { namespace: 'test' });
  env.defer(() => client.close());
  await client.ensureNamespace('test');
});

after(async () => {
  await env?.cleanup();
});

const digestOf = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
async function readAll(digest: string, c = client): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of c.contentRead(digest)) parts.push(p);
  return Buffer.concat(parts);
}

test('version and namespaces', async () => {
  const v = await client.version();
  assert.match(v.version, /^1\.6\./);
  assert.ok(v.revision);
  await client.ensureNamespace('test'); // again: ALREADY_EXISTS is fine
  await client.ensureNamespace('other', { purpose: 'test' });
  const names = (await client.namespaces.list()).map((n) => n.name).sort();
  assert.deepEqual(names, ['other', 'test']);
  assert.deepEqual((await client.namespaces.get('other')).labels, { purpose: 'test' });
  await client.namespaces.delete('other');
  assert.deepEqual(
    (await client.namespaces.list()).map((n) => n.name),
    ['test'],
  );
});

test('errors carry the error-table code, containerd message and gRPC code', async () => {
  await assert.rejects(client.containers.get('nope'), (err: unknown) => {
    assert.ok(err instanceof EngineError);
    assert.equal(err.code, 'NOT_FOUND');
    assert.equal(err.status, 404);
    assert.match(err.message, /container "nope" in namespace "test": not found/);
    assert.equal((err.cause as { code: number }).code, GrpcStatus.NOT_FOUND);
    return true;
  });
  // Without a namespace containerd answers FAILED_PRECONDITION → conflict.
  await assert.rejects(
    client.containers.list([], { namespace: null }),
    (err: EngineError) => err.code === 'CONFLICT' && /namespace is required/.test(err.message),
  );
  await assert.rejects(
    client.containers.create({ id: 'bad', runtime: { name: '' }, spec: { type_url: '', value: Buffer.alloc(0) } }),
    (err: EngineError) => err.code === 'INVALID_PARAMETER' && grpcCode(err) === GrpcStatus.INVALID_ARGUMENT,
  );
  const ac = new AbortController();
  const pending = client.tasks.wait('nope', '', { signal: ac.signal });
  ac.abort();
  await assert.rejects(pending, (err: EngineError) => grpcCode(err) === GrpcStatus.CANCELLED || grpcCode(err) === GrpcStatus.NOT_FOUND);
});

// Content without a lease (or a gc.root label, or a referencing image) is fair game for the next GC
// pass, which every delete schedules: the content tests hold a lease like real callers do.

test('content: write, read back, info, update, delete; an existing blob is a success', async () => {
  const small = Buffer.from('hello content store\n');
  const d = digestOf(small);
  await client.withLease(async (lease) => {
    const res = await client.contentWrite(`test-${d}`, small, { labels: { a: '1' }, lease });
    assert.deepEqual(res, { digest: d, size: small.length, existed: false });
    assert.ok((await readAll(d)).equals(small));
    assert.ok((await client.contentReadAll(d)).equals(small));
    let info = await client.contentInfo(d);
    assert.equal(info.size, String(small.length));
    assert.deepEqual(info.labels, { a: '1' });

    // Second write of the same blob: ALREADY_EXISTS at the STAT, reported as existed, labels merged.
    const again = await client.contentWrite(`test2-${d}`, small, { labels: { b: '2' }, lease });
    assert.deepEqual(again, { digest: d, size: small.length, existed: true });
    assert.deepEqual((await client.contentInfo(d)).labels, { a: '1', b: '2' });

    info = await client.contentUpdate({ digest: d, labels: {} }, ['labels.a']);
    assert.deepEqual(info.labels, { b: '2' });
    const ranged: Buffer[] = [];
    for await (const p of client.contentRead(d, { offset: 6, size: 7 })) ranged.push(p);
    assert.equal(Buffer.concat(ranged).toString(), 'content');

    // Held by another namespace ("shared" blob): STAT answers offset == total, and a bare COMMIT
    // (with the labels) adds it to that namespace.
    await client.ensureNamespace('test-b');
    const b = tracedView('test-b');
    await b.view.withLease(async (leaseB) => {
      const inB = await b.view.contentWrite(`test4-${d}`, small, { labels: { c: '3' }, lease: leaseB });
      assert.deepEqual(inB, { digest: d, size: small.length, existed: false });
      assert.deepEqual(b.actions, ['STAT', 'COMMIT']);
      assert.deepEqual((await b.view.contentInfo(d)).labels, { c: '3' });
    });

    await client.contentDelete(d);
    await assert.rejects(client.contentInfo(d), (err: EngineError) => err.code === 'NOT_FOUND');
    await assert.rejects(readAll(d), (err: EngineError) => err.code === 'NOT_FOUND');
    // Re-uploading a deleted blob works whether or not GC has removed the file yet.
    const back = await client.contentWrite(`test3-${d}`, small, { lease });
    assert.equal(back.existed, false);
    assert.ok((await readAll(d)).equals(small));
  });
});

/** A client view that records the action of every Content.Write request it sends. */
function tracedView(namespace: string): { view: SupervisorClient; actions: string[] } {
  const view = client.withNamespace(namespace);
  const actions: string[] = [];
  const orig = view.bidiStream.bind(view);
  view.bidiStream = ((service: 'content', method: string, opts?: object) => {
    const stream = orig(service, method, opts);
    const write = stream.write.bind(stream) as (req: { action: string }) => boolean;
    (stream as { write: unknown }).write = (req: { action: string }) => {
      actions.push(req.action);
      return write(req);
    };
    return stream;
  }) as typeof view.bidiStream;
  return { view, actions };
}

test('content: multi-MiB blobs from a Buffer and from an uneven stream; a wrong digest is refused', async () => {
  await client.withLease(async (lease) => {
    const big = randomBytes(3 * 1024 * 1024 + 12345);
    const d = digestOf(big);
    const traced = tracedView('test');
    const t0 = performance.now();
    const res = await traced.view.contentWrite(`big-${d}`, big, { lease });
    console.log(`Content.Write ${big.length} B: ${(performance.now() - t0).toFixed(1)} ms`);
    assert.deepEqual(traced.actions, ['STAT', 'WRITE', 'WRITE', 'WRITE', 'WRITE', 'COMMIT'], '1 MiB chunks, commit without data');
    assert.deepEqual(res, { digest: d, size: big.length, existed: false });
    assert.ok((await readAll(d)).equals(big));

    const other = randomBytes(2 * 1024 * 1024 + 7);
    async function* uneven() {
      for (let i = 0; i < other.length; i += 300_001) yield other.subarray(i, Math.min(i + 300_001, other.length));
    }
    const streamed = await client.contentWrite('streamed-1', uneven(), { lease }); // no expected, no total
    assert.deepEqual(streamed, { digest: digestOf(other), size: other.length, existed: false });
    assert.ok((await readAll(streamed.digest)).equals(other));
    const again = await client.contentWrite('streamed-2', uneven(), { total: other.length, lease });
    assert.equal(again.existed, true);
    assert.equal(again.digest, digestOf(other));

    await assert.rejects(
      client.contentWrite('wrong', Buffer.from('abc'), { expected: digestOf(Buffer.from('abd')), lease }),
      (err: EngineError) => err.code === 'CONFLICT' && /unexpected commit digest/.test(err.message),
    );
  });
});

test('content: an interrupted upload resumes from the server offset', async () => {
  await client.withLease(async (lease) => {
    const blob = randomBytes(4 * 1024 * 1024);
    const d = digestOf(blob);
    async function* failing() {
      yield blob.subarray(0, 1 << 20);
      yield blob.subarray(1 << 20, 2 << 20);
      // The break comes once the server has written both chunks (a fixed wait was too short under load).
      await waitFor('both chunks written', async () => {
        const s = await client.contentStatus(`resume-${d}`);
        return s && Number(s.offset) === 2 << 20 ? s : null;
      });
      throw new Error('source broke');
    }
    await assert.rejects(client.contentWrite(`resume-${d}`, failing(), { expected: d, total: blob.length, lease }), /source broke/);
    const status = await waitFor('ingest status', async () => {
      const s = await client.contentStatus(`resume-${d}`);
      return s && Number(s.offset) > 0 ? s : null;
    });
    assert.equal(Number(status.offset), 2 << 20);
    const traced = tracedView('test');
    const res = await traced.view.contentWrite(`resume-${d}`, blob, { lease });
    assert.deepEqual(res, { digest: d, size: blob.length, existed: false });
    assert.deepEqual(traced.actions, ['STAT', 'WRITE', 'WRITE', 'COMMIT'], 'only the missing 2 MiB are sent');
    assert.ok((await readAll(d)).equals(blob));
  });
});

test('withLease holds a lease for the callback and deletes it afterwards, also on failure', async () => {
  let seen = '';
  const out = await client.withLease(async (lease) => {
    seen = lease;
    const l = (await client.leases.list()).find((x) => x.id === lease);
    assert.ok(l);
    assert.ok(Date.parse(l.labels['containerd.io/gc.expire']!) > Date.now());
    return 42;
  });
  assert.equal(out, 42);
  assert.ok(!(await client.leases.list()).some((x) => x.id === seen));
  await assert.rejects(
    client.withLease(async (lease) => {
      seen = lease;
      throw new Error('inner');
    }),
    /inner/,
  );
  assert.ok(!(await client.leases.list()).some((x) => x.id === seen));
});

test('snapshots: prepare, mounts, stat, list, commit, view, remove', async () => {
  await client.withLease(async (lease) => {
    const mounts = await client.snapshots.prepare({ key: 'snap-a', parent: '' }, { lease });
    assert.equal(mounts[0]!.type, 'bind');
    assert.deepEqual(await client.snapshots.mounts('snap-a'), mounts);
    assert.equal((await client.snapshots.stat('snap-a')).kind, 'ACTIVE');
    await client.snapshots.commit({ name: 'snap-a-committed', key: 'snap-a', labels: { x: 'y' } }, { lease });
    const st = await client.snapshots.stat('snap-a-committed');
    assert.equal(st.kind, 'COMMITTED');
    assert.deepEqual(st.labels, { x: 'y' });
    const view = await client.snapshots.view({ key: 'snap-v', parent: 'snap-a-committed' }, { lease });
    assert.ok(view[0]!.options.includes('ro'));
    const names = (await client.snapshots.list()).map((s) => s.name).sort();
    assert.deepEqual(names, ['snap-a-committed', 'snap-v']);
    await client.snapshots.remove('snap-v');
    await client.snapshots.remove('snap-a-committed');
    await assert.rejects(client.snapshots.stat('snap-a'), (err: EngineError) => err.code === 'NOT_FOUND');
  });
});

test('subscribe: decoded events, ready only once live', async () => {
  const events: SupervisorEvent[] = [];
  const everything: SupervisorEvent[] = [];
  const sub = client.subscribe(['namespace==test', 'topic~="/snapshot/"'], (e) => events.push(e));
  const all = client.subscribe([], (e) => everything.push(e));
  try {
    await Promise.all([sub.ready, all.ready]);
    await client.withLease(async (lease) => {
      await client.snapshots.prepare({ key: 'ev-1', parent: '' }, { lease });
      await client.snapshots.remove('ev-1');
    });
    await waitFor('events', () => events.length >= 2);
    const [prep, rm] = events;
    assert.equal(prep!.topic, '/snapshot/prepare');
    assert.equal(prep!.type, 'containerd.events.SnapshotPrepare');
    assert.equal(prep!.namespace, 'test');
    assert.deepEqual(prep!.event, { key: 'ev-1', parent: '' });
    assert.ok(prep!.timestamp instanceof Date && Math.abs(prep!.timestamp.getTime() - Date.now()) < 60_000);
    assert.equal(rm!.topic, '/snapshot/remove');
    assert.ok(!events.some((e) => e.topic.startsWith('/engine/')), 'probe events are not delivered');
    await client.ensureNamespace('ev-ns');
    await waitFor('unfiltered events', () => everything.some((e) => e.topic === '/namespaces/create'));
    assert.ok(everything.some((e) => e.topic === '/snapshot/prepare'));
    assert.ok(!events.some((e) => e.topic === '/namespaces/create'), 'filtered subscription stays filtered');
  } finally {
    all.close();
    sub.close();
  }
});
