// The container records: lookups by ID, prefix and name, and the per-container gate a request
// waits on while a daemon restart is still reconciling that container; the log drivers' attributes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EngineError } from '../../errors.ts';
import type { ContainerServiceDeps } from './deps.ts';
import { logAttrs } from './io/log-drivers.ts';
import { ContainerRecords } from './records.ts';
import { initialState, type ContainerRecord } from './record.ts';

function record(id: string, name: string): ContainerRecord {
  return {
    Id: id,
    Name: name,
    State: initialState(),
    Config: { Labels: { tier: 'web' }, Env: ['A=1', 'FLAG'] },
    HostConfig: {},
    Image: 'sha256:i',
    ImageRef: 'busybox',
    Path: 'sh',
    Args: ['-c', 'echo hi'],
    Created: '2026-01-02T03:04:05.000000006Z',
    Internal: {},
  } as unknown as ContainerRecord;
}

function context(recs: ContainerRecord[]): ContainerRecords {
  // The store's name and ID-prefix indexes, over the same records.
  const store = {
    list: () => recs,
    idByName: (name: string) => recs.find((r) => r.Name === `/${name.replace(/^\//, '')}`)?.Id,
    idsByPrefix: (prefix: string) =>
      prefix
        ? recs
            .map((r) => r.Id)
            .filter((id) => id.startsWith(prefix))
            .sort()
        : [],
  } as unknown as ContainerServiceDeps['store'];
  return new ContainerRecords({ store });
}

const A = 'abc1' + '0'.repeat(60);
const B = 'abc2' + '0'.repeat(60);

test('find: full ID, unique prefix, name with or without slash; ambiguous prefix 400, unknown 404', () => {
  const ctx = context([record(A, '/web'), record(B, '/db')]);
  assert.equal(ctx.find(A).Name, '/web');
  assert.equal(ctx.find('abc2').Id, B);
  assert.equal(ctx.find('db').Id, B);
  assert.equal(ctx.find('/web').Id, A);
  assert.throws(
    () => ctx.find('abc'),
    (e: unknown) => e instanceof EngineError && e.status === 400 && /multiple IDs found with provided prefix: abc/.test(e.message),
  );
  assert.throws(
    () => ctx.find('nope'),
    (e: unknown) => e instanceof EngineError && e.status === 404 && e.message === 'No such container: nope',
  );
});

test("records are copies of the store's (the store keeps its own)", () => {
  const stored = record(A, '/web');
  const ctx = context([stored]);
  ctx.find(A).State.Running = true;
  assert.equal(stored.State.Running, false);
});

test("ready waits for the container's own reconciliation only, then sees its state", async () => {
  const ctx = context([record(A, '/web'), record(B, '/db')]);
  let release!: () => void;
  ctx.reconciling.set(A, new Promise<void>((r) => (release = r)));
  let webReady = false;
  const web = ctx.ready('web').then((r) => {
    webReady = true;
    return r;
  });
  // Another container answers at once although /web is still being reconciled.
  assert.equal((await ctx.ready('db')).Id, B);
  await new Promise((r) => setImmediate(r));
  assert.equal(webReady, false, 'the request on /web waits');
  ctx.find(A).State = { ...ctx.find(A).State, Status: 'exited', ExitCode: 137 };
  ctx.reconciling.delete(A);
  release();
  const rec = await web;
  assert.equal(rec.State.Status, 'exited');
  assert.equal(rec.State.ExitCode, 137);
});

test('ready: a container removed while being reconciled (AutoRemove) is a 404', async () => {
  const ctx = context([record(A, '/gone')]);
  let release!: () => void;
  ctx.reconciling.set(A, new Promise<void>((r) => (release = r)));
  const pending = ctx.ready('gone');
  ctx.byId.delete(A);
  release();
  await assert.rejects(pending, (e: unknown) => e instanceof EngineError && e.status === 404);
});

test("logAttrs: name, image, labels and env for the log drivers' tag and attrs options", () => {
  assert.deepEqual(logAttrs(record(A, '/web')), {
    name: 'web',
    image: 'busybox',
    imageId: 'sha256:i',
    command: 'sh -c echo hi',
    created: '2026-01-02T03:04:05.000000006Z',
    'label:tier': 'web',
    'env:A': '1',
    'env:FLAG': '',
  });
});
