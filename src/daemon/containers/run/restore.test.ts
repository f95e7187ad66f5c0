// The reconciliation after a daemon restart, on fakes of containerd and the launcher: what happens
// to each record, and the per-container gates requests wait on (released one container at a time).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ContainerServiceDeps } from '../deps.ts';
import { LogDrivers } from '../io/log-drivers.ts';
import { ContainerRecords } from '../records.ts';
import { RunState } from './run-state.ts';
import { Lifecycle } from './lifecycle.ts';
import { initialState, type ContainerRecord } from '../record.ts';
import { Restorer } from './restore.ts';
import type { RunningTask } from './running-task.ts';
import type { ContainerVerifier } from '../create/verify.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-restore-'));
});
after(async () => rm(dir, { recursive: true, force: true }));

const STARTED = '2030-01-01T00:00:00.000000000Z';

function record(
  id: string,
  state: Partial<ContainerRecord['State']>,
  internal: Partial<ContainerRecord['Internal']> = {},
): ContainerRecord {
  return {
    Id: id,
    Name: `/${id}`,
    State: { ...initialState(), StartedAt: STARTED, ...state },
    RestartCount: 0,
    Image: 'sha256:i',
    ImageRef: 'busybox',
    Path: 'sleep',
    Args: ['60'],
    Config: {},
    HostConfig: { LogConfig: { Type: 'none', Config: {} }, RestartPolicy: { Name: 'no', MaximumRetryCount: 0 } },
    Mounts: [],
    Internal: { snapshotKey: id, snapshotter: 'overlayfs', runtime: 'runc', stoppedByUser: false, ...internal },
  } as unknown as ContainerRecord;
}

/** A deferred value the test resolves itself. */
function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

interface Fakes {
  calls: string[];
  stored: Map<string, ContainerRecord>;
  reattach: Map<string, Promise<RunningTask | undefined>>;
  exitCodes: Map<string, number>;
}

interface Parts {
  records: ContainerRecords;
  runs: RunState;
  d: ContainerServiceDeps;
}

function setUp(recs: ContainerRecord[], listed: string[]): { parts: Parts; restorer: Restorer; f: Fakes } {
  const f: Fakes = { calls: [], stored: new Map(recs.map((r) => [r.Id, r])), reattach: new Map(), exitCodes: new Map() };
  const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => quiet };
  const deps = {
    client: {
      containers: { list: async () => listed.map((id) => ({ id, snapshot_key: id, snapshotter: 'overlayfs' })) },
      snapshots: { remove: async (key: string) => void f.calls.push(`snapshot-rm ${key}`) },
    },
    store: {
      list: () => [...f.stored.values()],
      idByName: (name: string) => [...f.stored.values()].find((r) => r.Name === `/${name.replace(/^\//, '')}`)?.Id,
      idsByPrefix: (prefix: string) => (prefix ? [...f.stored.keys()].filter((id) => id.startsWith(prefix)).sort() : []),
      put: (r: ContainerRecord) => void f.stored.set(r.Id, structuredClone(r)),
      delete: (id: string) => void f.stored.delete(id),
    },
    launcher: {
      reattach: (r: ContainerRecord) => f.reattach.get(r.Id) ?? Promise.resolve(undefined),
      forget: async (id: string) => {
        f.calls.push(`forget ${id}`);
        return f.exitCodes.get(id);
      },
      cleanup: async (r: ContainerRecord) => void f.calls.push(`cleanup ${r.Id}`),
      removed: () => undefined,
      removeStaleRuntimeDirs: async (known: Set<string>) => void f.calls.push(`stale-dirs ${[...known].sort().join(',')}`),
    },
    rootfs: { remove: async (key: string) => void f.calls.push(`rootfs-rm ${key}`) },
    config: () => ({ 'shutdown-timeout': 15 }),
    log: quiet,
    containersDir: dir,
  } as unknown as ContainerServiceDeps;
  const records = new ContainerRecords(deps);
  const runs = new RunState();
  const logs = new LogDrivers(deps);
  const lifecycle = new Lifecycle(records, runs, logs, deps, {} as ContainerVerifier);
  return { parts: { records, runs, d: deps }, restorer: new Restorer(records, runs, logs, deps, lifecycle), f };
}

function fakeTask(pid: number): RunningTask {
  return { pid, exited: new Promise(() => undefined), ioDone: Promise.resolve(), detach: () => undefined };
}

test('each record is made to match containerd: adopted, exit recorded, leftovers cleaned, removal finished', async () => {
  const { parts, restorer, f } = setUp(
    [
      record('alive', { Status: 'running', Running: true, Pid: 10 }),
      record('died', { Status: 'running', Running: true, Pid: 11 }),
      record('doomed', { Status: 'removing' }, { removing: true }),
      record('halfstarted', { Status: 'created', StartedAt: '0001-01-01T00:00:00Z' }),
      record('quiet', { Status: 'exited', ExitCode: 1 }),
    ],
    ['alive', 'halfstarted', 'stranger'],
  );
  f.reattach.set('alive', Promise.resolve(fakeTask(10)));
  f.exitCodes.set('died', 3);
  await restorer.restore(true);

  assert.equal(parts.records.find('alive').State.Running, true);
  assert.equal(parts.runs.tasks.get('alive')?.pid, 10, 'the surviving task is watched again');
  const died = parts.records.find('died').State;
  assert.deepEqual([died.Status, died.Running, died.ExitCode, died.Pid], ['exited', false, 3, 0]);
  assert.equal(f.stored.get('died')?.State.Status, 'exited', 'the exit is persisted');
  assert.throws(() => parts.records.find('doomed'), /No such container/);
  assert.equal(f.stored.has('doomed'), false);
  assert.ok(f.calls.includes('rootfs-rm doomed'));
  assert.ok(
    f.calls.includes('forget halfstarted') && f.calls.includes('cleanup halfstarted'),
    'a task created but never recorded as started is cleaned up',
  );
  assert.ok(
    !f.calls.includes('forget quiet') && !f.calls.includes('cleanup quiet'),
    'a stopped container with nothing left is not touched',
  );
  assert.deepEqual(parts.records.find('quiet').State.ExitCode, 1);
  // A containerd container the store does not know goes, with its snapshot.
  assert.ok(f.calls.includes('forget stranger') && f.calls.includes('snapshot-rm stranger'));
  assert.ok(!f.calls.includes('forget alive'), 'a re-attached task is left alone');
  assert.equal(parts.records.reconciling.size, 0, 'every gate released');
});

test("a request waits for its own container's reconciliation only", async () => {
  const slowTask = deferred<RunningTask | undefined>();
  const { parts, restorer, f } = setUp(
    [record('slow', { Status: 'running', Running: true, Pid: 20 }), record('fast', { Status: 'running', Running: true, Pid: 21 })],
    ['slow'],
  );
  f.reattach.set('slow', slowTask.promise);
  f.exitCodes.set('fast', 137);
  const done = restorer.restore(true);
  assert.equal(parts.records.reconciling.size, 2, 'gated before restore() returns');

  let slowAnswered = false;
  const slow = parts.records.ready('slow').then((r) => {
    slowAnswered = true;
    return r;
  });
  const fast = await parts.records.ready('fast');
  assert.equal(fast.State.Status, 'exited', 'the fast one is answered with its reconciled state');
  assert.equal(fast.State.ExitCode, 137);
  await new Promise((r) => setImmediate(r));
  assert.equal(slowAnswered, false, 'the slow one still waits');

  slowTask.resolve(undefined); // its task turns out to be gone
  const rec = await slow;
  assert.equal(rec.State.Status, 'exited');
  assert.equal(rec.State.ExitCode, 255, 'no exit status known: 255, as dockerd');
  await done;
  assert.equal(parts.records.reconciling.size, 0);
});

test('a failure while reconciling one container is logged and releases its gate', async () => {
  const { parts, restorer, f } = setUp([record('broken', { Status: 'running', Running: true, Pid: 30 })], []);
  f.reattach.set('broken', Promise.resolve(undefined));
  (parts.d.launcher as unknown as { cleanup: () => Promise<void> }).cleanup = async () => {
    throw new Error('umount failed');
  };
  await restorer.restore(false);
  const r = await parts.records.ready('broken');
  assert.equal(r.State.Status, 'exited', 'the exit is recorded although the clean-up failed');
});

test('without live-restore: a re-attached container is known at once (running, its pid); actions wait for its stop', async () => {
  const { parts, restorer, f } = setUp([record('kept', { Status: 'running', Running: true, Pid: 40 })], ['kept']);
  const exit = deferred<{ status: number; at: string; oom: boolean }>();
  f.reattach.set('kept', Promise.resolve({ ...fakeTask(40), exited: exit.promise }));
  const signals: number[] = [];
  (parts.d.client as unknown as { tasks: unknown }).tasks = { kill: async (_id: string, sig: number) => void signals.push(sig) };
  // What a daemon killed during the clean-up after the exit (containerd's task delete) finds on disk.
  let storedAtCleanup: string | undefined;
  (parts.d.launcher as unknown as { cleanup: (r: ContainerRecord) => Promise<void> }).cleanup = async (r) => {
    storedAtCleanup = `${f.stored.get(r.Id)?.State.Status} ${f.stored.get(r.Id)?.State.ExitCode}`;
  };
  const done = restorer.restore(false);

  const known = await parts.records.known('kept');
  assert.deepEqual([known.State.Status, known.State.Pid], ['running', 40], 'inspect sees the real state: still running');
  let acted = false;
  const action = parts.records.ready('kept').then((r) => ((acted = true), r));
  await until(() => signals.length > 0);
  assert.deepEqual(signals, [15], 'the stop at start-up sent SIGTERM');
  await new Promise((r) => setImmediate(r));
  assert.equal(acted, false, 'an action waits for the stop at start-up');

  parts.runs.hub('kept').endLog(); // its output ends with it (no FIFO here)
  exit.resolve({ status: 143, at: '2030-01-01T00:00:01Z', oom: false });
  const after = await action;
  assert.deepEqual([after.State.Status, after.State.ExitCode, after.State.Pid], ['exited', 143, 0]);
  assert.equal(f.stored.get('kept')?.State.ExitCode, 143);
  assert.equal(storedAtCleanup, 'exited 143', 'the exit is on disk before the task is deleted');
  await done;
  assert.equal(parts.records.unknownState.size + parts.records.reconciling.size, 0, 'every gate released');
});

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
}
