// Issue 12 (start-up after a crash): the API answers at once after a restart while containers are
// still being reconciled in the background; a request on a container still being reconciled waits
// for that container only and then sees its real state. The slow container is made slow without
// timing: it ignores SIGTERM (sleep as PID 1) and has a long stop timeout, so the stop at start-up
// (no live-restore) lasts until the test kills its process itself.
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

  test('/_ping and other containers answer at once; a request on the slow container waits, then sees it stopped', async () => {
    // StopTimeout of an hour: its stop at start-up cannot end by itself during the test.
    const slow = await createStarted(d, 'slow', { Cmd: ['sleep', '3600'], StopTimeout: 3600 });
    const done = await d.request('POST', '/containers/create?name=done', { body: { Image: 'busybox', Cmd: ['true'] } });
    assert.equal(done.status, 201, done.text());
    const pid = (await inspect(d, 'slow')).State.Pid as number;
    assert.ok(pid > 0);

    await d.kill9();
    await d.restart(); // resolves at the first /_ping 200

    let answered: HttpResult | undefined;
    const pending = d.request('GET', '/containers/slow/json', { timeoutMs: 300_000 }).then((r) => (answered = r));
    const listing = d.request('GET', '/containers/json?all=1', { timeoutMs: 300_000 });
    // The record still says running; once reconciled it is not, so an exec is refused.
    const exec = d.request('POST', '/containers/slow/exec', { body: { Cmd: ['true'] }, timeoutMs: 300_000 });

    // Served while /slow is still being stopped: the API, and requests on other containers.
    assert.equal((await d.request('GET', '/_ping')).status, 200);
    assert.equal((await d.request('GET', '/version')).status, 200);
    const other = await inspect(d, 'done');
    assert.equal(other.State.Status, 'created');
    assert.equal((await d.request('GET', '/images/json')).status, 200);
    await tick();
    assert.equal(answered, undefined, 'inspect of the container being reconciled waits for it');
    assert.ok(process.kill(pid, 0), 'its process still runs (the stop at start-up is under way)');

    // End the stop from outside: the container's reconciliation finishes and the request answers.
    process.kill(pid, 'SIGKILL');
    const r = await pending;
    assert.equal(r.status, 200, r.text());
    const state = r.json().State;
    assert.equal(state.Status, 'exited');
    assert.equal(state.Running, false);
    assert.equal(state.ExitCode, 137);
    assert.equal(r.json().Id, slow);

    const e = await exec;
    assert.equal(e.status, 409, `exec create after the reconciliation: ${e.status} ${e.text()}`);
    assert.match(e.json().message, /is not running/);

    // docker ps waits for the reconciliation too, so it never shows a stale "running".
    const list = await listing;
    assert.equal(list.status, 200);
    const rows = list.json<Array<{ Id: string; State: string }>>();
    assert.equal(rows.find((c) => c.Id === slow)?.State, 'exited');
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
