// Exec routes on a recording fake backend: create 201, inspect, resize's required integers, a
// detached start (200, no stream), and a hijacked start streaming frames until the process ends.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import type { ExecInspectResponse, OutputSink } from '../../types/exec.ts';
import { frame } from '../stream-framing.ts';
import { registerExecRoutes, type ExecBackend } from './exec.ts';

/** An exec's inspect view: one that ran `sh -c 'exit 2'` in container c1 and exited. */
const inspectView: ExecInspectResponse = {
  ID: 'e1',
  Running: false,
  ExitCode: 2,
  ProcessConfig: { tty: false, entrypoint: 'sh', arguments: ['-c', 'exit 2'], privileged: false },
  OpenStdin: false,
  OpenStderr: true,
  OpenStdout: true,
  CanRemove: false,
  ContainerID: 'c1',
  DetachKeys: '',
  Pid: 42,
};

describe('exec routes', () => {
  const { backend, calls } = fakeBackend<ExecBackend>({
    create: { Id: 'e1' },
    inspect: inspectView,
    resize: undefined,
    checkStartable: { tty: false, openStdin: false },
    start: async (_id: string, _opts: unknown, sink: OutputSink | null) => {
      if (sink)
        setImmediate(() => {
          sink('stdout', Buffer.from('hello'));
          sink('stderr', Buffer.from('oops'));
        });
      return {
        tty: false,
        detachKeys: Buffer.alloc(0),
        closeStdin: async () => undefined,
        done: new Promise<number>((r) => setTimeout(() => r(0), 30)),
      };
    },
  });
  const h = new RouteHarness((r) =>
    registerExecRoutes(r, backend, { detachWatcher: () => ({ push: (b: Buffer) => ({ forward: b, detach: false }) }) }),
  );
  after(() => h.close());

  test("create answers 201 with the ID; inspect is the backend's view", async () => {
    const r = await h.request('POST', '/containers/c1/exec', { body: { Cmd: ['true'], AttachStdout: true } });
    assert.equal(r.status, 201);
    assert.deepEqual(r.json, { Id: 'e1' });
    assert.deepEqual(calls.at(-1)?.args, ['c1', { Cmd: ['true'], AttachStdout: true }]);
    const inspected = await h.request('GET', '/exec/e1/json');
    assert.equal(inspected.text, JSON.stringify(inspectView));
  });

  test('resize needs integer h and w', async () => {
    assert.equal((await h.request('POST', '/exec/e1/resize?h=24&w=80')).status, 200);
    assert.deepEqual(calls.at(-1)?.args, ['e1', 24, 80]);
    assert.equal((await h.request('POST', '/exec/e1/resize?h=x&w=80')).status, 400);
    assert.equal((await h.request('POST', '/exec/e1/resize?w=80')).status, 400);
  });

  test('a detached start answers 200 at once; a hijacked one streams frames until the process ends', async () => {
    const d = await h.request('POST', '/exec/e1/start', { body: { Detach: true } });
    assert.equal(d.status, 200);
    assert.equal(calls.at(-1)?.args[2], null, 'no output sink for a detached start');
    const s = await h.hijack('POST', '/exec/e1/start', { Detach: false, Tty: false });
    assert.match(s.head, /^HTTP\/1\.1 101 UPGRADED/);
    assert.match(s.head, /multiplexed-stream/);
    assert.deepEqual(await s.rest(), Buffer.concat([frame('stdout', Buffer.from('hello')), frame('stderr', Buffer.from('oops'))]));
  });

  test('wrong JSON types in the create and start bodies are 400s naming the field', async () => {
    const before = calls.length;
    const c = await h.request('POST', '/containers/c1/exec', { body: { Cmd: ['true'], Tty: 'yes' } });
    assert.equal(c.status, 400);
    assert.match(c.json.message, /ExecOptions\.Tty of type bool/);
    const e = await h.request('POST', '/containers/c1/exec', { body: { Cmd: 'true', Env: [1] } });
    assert.equal(e.status, 400);
    const s = await h.request('POST', '/exec/e1/start', { body: { Detach: 'no' } });
    assert.equal(s.status, 400);
    assert.match(s.json.message, /ExecStartOptions\.Detach of type bool/);
    assert.equal(calls.length, before, 'nothing reached the backend');
  });
  test('API 1.42: ConsoleSize (create and start) and the multiplexed media type from, not before', async () => {
    await h.request('POST', '/v1.41/containers/c1/exec', { body: { Cmd: ['true'], ConsoleSize: [10, 20] } });
    assert.deepEqual(calls.at(-1)?.args[1], { Cmd: ['true'] });
    await h.request('POST', '/v1.42/containers/c1/exec', { body: { Cmd: ['true'], ConsoleSize: [10, 20] } });
    assert.deepEqual(calls.at(-1)?.args[1], { Cmd: ['true'], ConsoleSize: [10, 20] });
    await h.request('POST', '/v1.41/exec/e1/start', { body: { Detach: true, ConsoleSize: [10, 20] } });
    assert.deepEqual(calls.at(-1)?.args[1], { consoleSize: undefined });
    await h.request('POST', '/v1.42/exec/e1/start', { body: { Detach: true, ConsoleSize: [10, 20] } });
    assert.deepEqual(calls.at(-1)?.args[1], { consoleSize: [10, 20] });
    const old = await h.hijack('POST', '/v1.41/exec/e1/start', { Detach: false, Tty: false });
    assert.match(old.head, /raw-stream/);
    await old.rest();
  });
});

describe("exec start framing (dockerd: the start body's Tty decides, not the exec's)", () => {
  // An exec created with a TTY: its process writes everything to stdout.
  const { backend } = fakeBackend<ExecBackend>({
    create: { Id: 'e1' },
    inspect: inspectView,
    resize: undefined,
    checkStartable: { tty: true, openStdin: false },
    start: async (_id: string, _opts: unknown, sink: OutputSink | null) => {
      if (sink) setImmediate(() => sink('stdout', Buffer.from('from a tty')));
      return {
        tty: true,
        detachKeys: Buffer.alloc(0),
        closeStdin: async () => undefined,
        done: new Promise<number>((r) => setTimeout(() => r(0), 30)),
      };
    },
  });
  const h = new RouteHarness((r) =>
    registerExecRoutes(r, backend, { detachWatcher: () => ({ push: (b: Buffer) => ({ forward: b, detach: false }) }) }),
  );
  after(() => h.close());

  test('a TTY exec started with Tty:false is multiplexed; with Tty:true it is raw', async () => {
    const framed = await h.hijack('POST', '/exec/e1/start', { Detach: false, Tty: false });
    assert.match(framed.head, /multiplexed-stream/);
    assert.deepEqual(await framed.rest(), frame('stdout', Buffer.from('from a tty')));
    const raw = await h.hijack('POST', '/exec/e1/start', { Detach: false, Tty: true });
    assert.match(raw.head, /raw-stream/);
    assert.deepEqual(await raw.rest(), Buffer.from('from a tty'));
  });
});
