// Issues 12 and 23 (start-up after a crash): the API answers at once after a restart while
// containers are still being reconciled in the background; inspect and ps answer with each
// container's real state as soon as containerd has been asked about it, and an action on a container
// still being stopped at start-up waits for that container only, then applies to its real state.
// The slow container is made slow without timing: it ignores SIGTERM (sleep as PID 1) and has a long
// stop timeout, so the stop at start-up (no live-restore) lasts until the test kills its process.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type HttpResult, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';

const tick = () => new Promise((r) => setImmediate(r));

async function inspect(d: TestDaemon, ref: string): Promise<any> {
  const r = await d.request('GET', `/containers/${ref}/json`);
  assert.equal(r.status, 200, `inspect ${ref}: ${r.text()}`);
  return r.json();
}

async function createStarted(d: TestDaemon, name: string, body: Record<string, unknown>): Promise<string> {
  const c = await d.request('POST', `/containers/create?name=${name}`, { body: { Image: 'busybox', ...body } });
  assert.equal(c.status, 201, c.text());
  const id = c.json<{ Id: string }>().Id;
  const s = await d.request('POST', `/containers/${id}/start`);
  assert.equal(s.status, 204, s.text());
  return id;
}

describe('restart after kill -9: reconcile in the background', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => d?.cleanup());

  test('/_ping, inspect and ps answer at once with the true state; an action on the container being stopped waits, then sees it stopped', async () => {
    // StopTimeout of an hour: its stop at start-up cannot end by itself during the test.
    const slow = await createStarted(d, 'slow', { Cmd: ['sleep', '3600'], StopTimeout: 3600 });
    const done = await d.request('POST', '/containers/create?name=done', { body: { Image: 'busybox', Cmd: ['true'] } });
    assert.equal(done.status, 201, done.text());
    const pid = (await inspect(d, 'slow')).State.Pid as number;
    assert.ok(pid > 0);

    await d.kill9();
    await d.restart(); // resolves at the first /_ping 200

    // An action waits until the stop at start-up is over: then the container is not running.
    let answered: HttpResult | undefined;
    const exec = d.request('POST', '/containers/slow/exec', { body: { Cmd: ['true'] }, timeoutMs: 300_000 }).then((r) => (answered = r));

    // Served while /slow is still being stopped: the API, and the real state of every container —
    // /slow runs (its process lives, being stopped), with the pid it had.
    assert.equal((await d.request('GET', '/_ping')).status, 200);
    assert.equal((await d.request('GET', '/version')).status, 200);
    assert.equal((await inspect(d, 'done')).State.Status, 'created');
    const now = (await inspect(d, 'slow')).State;
    assert.ok(process.kill(pid, 0), 'its process still runs (the stop at start-up is under way)');
    assert.deepEqual([now.Status, now.Running, now.Pid], ['running', true, pid]);
    const list = await d.request('GET', '/containers/json?all=1');
    assert.equal(list.status, 200);
    assert.equal(list.json<Array<{ Id: string; State: string }>>().find((c) => c.Id === slow)?.State, 'running');
    assert.equal((await d.request('GET', '/images/json')).status, 200);
    await tick();
    assert.equal(answered, undefined, 'an exec on the container being stopped at start-up waits for the stop');

    // End the stop from outside: the container's reconciliation finishes and the exec is answered.
    process.kill(pid, 'SIGKILL');
    const e = await exec;
    assert.equal(e.status, 409, `exec create after the reconciliation: ${e.status} ${e.text()}`);
    assert.match(e.json().message, /is not running/);
    const state = (await inspect(d, 'slow')).State;
    assert.equal(state.Status, 'exited');
    assert.equal(state.Running, false);
    assert.equal(state.ExitCode, 137);
    const after = await d.request('GET', '/containers/json?all=1');
    assert.equal(after.json<Array<{ Id: string; State: string }>>().find((c) => c.Id === slow)?.State, 'exited');
  });

  test('a start requested during the reconciliation waits, then applies to the real state', async () => {
    const id = await createStarted(d, 'slow2', { Cmd: ['sleep', '3600'], StopTimeout: 3600 });
    const pid = (await inspect(d, 'slow2')).State.Pid as number;
    await d.kill9();
    await d.restart();

    // Before the gate the recorded state says running (a start would be 304); once the start-up
    // stop is over it is exited, so the start waits for it and really starts the container again.
    const start = d.request('POST', '/containers/slow2/start', { timeoutMs: 300_000 });
    assert.equal((await d.request('GET', '/_ping')).status, 200);
    process.kill(pid, 'SIGKILL');
    const r = await start;
    assert.equal(r.status, 204, `start after the reconciliation: ${r.status} ${r.text()}`);
    const now = await inspect(d, id);
    assert.equal(now.State.Running, true);
    assert.notEqual(now.State.Pid, pid);
    const rm = await d.request('DELETE', `/containers/${id}?force=1`);
    assert.equal(rm.status, 204, rm.text());
  });
});
