// Issue 12: hostile input never wedges the daemon or reaches a record; dockerd's answers where
// clients depend on them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';

describe('hostile request bodies', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => d?.cleanup());

  test('an Env of 100 000 entries is created in under a second while /_ping keeps answering', async () => {
    const env = Array.from({ length: 100_000 }, (_v, i) => `VARIABLE_${i}=value-${i}`);
    const started = Date.now();
    const create = d.request('POST', '/containers/create', { body: { Image: 'busybox', Env: env } });
    const pings: number[] = [];
    let done = false;
    void create.finally(() => (done = true));
    while (!done) {
      const t = Date.now();
      await d.request('GET', '/_ping');
      pings.push(Date.now() - t);
    }
    const r = await create;
    assert.equal(r.status, 201, r.text());
    assert.ok(Date.now() - started < 1000 + 500, `create took ${Date.now() - started} ms`);
    const inspect = (await d.request('GET', `/containers/${r.json().Id}/json`)).json();
    assert.equal(inspect.Config.Env.filter((e: string) => e.startsWith('VARIABLE_')).length, 100_000);
    assert.ok(Math.max(0, ...pings) < 500, `slowest /_ping during the create: ${Math.max(...pings)} ms`);
  });

  test('a malformed update is a 400 naming the field and never reaches the record', async () => {
    const c = await d.request('POST', '/containers/create?name=upd', { body: { Image: 'busybox', Cmd: ['sleep', '60'] } });
    assert.equal(c.status, 201);
    // Sent as text: deeply nested JSON is exactly what a hostile client writes by hand.
    const deep = `{"CpusetCpus":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    for (const [body, field] of [[deep, 'CpusetCpus'], [{ Memory: 'lots' }, 'Memory'], [{ RestartPolicy: { Name: 7 } }, 'RestartPolicy.Name'], [{ BlkioWeight: 70000 }, 'BlkioWeight']] as const) {
      const r = await d.request('POST', '/containers/upd/update', { body, headers: { 'Content-Type': 'application/json' } });
      assert.equal(r.status, 400, `${field}: ${r.text().slice(0, 200)}`);
      assert.match(r.json().message, new RegExp(field.replace('.', '\\.')));
    }
    const ok = await d.request('POST', '/containers/upd/update', { body: { Memory: 64 * 1024 * 1024, RestartPolicy: { Name: 'on-failure', MaximumRetryCount: 2 } } });
    assert.equal(ok.status, 200, ok.text());
    const hc = (await d.request('GET', '/containers/upd/json')).json().HostConfig;
    assert.equal(hc.Memory, 64 * 1024 * 1024);
    assert.ok(!Array.isArray(hc.CpusetCpus), 'the nested array never reached the record');
    assert.deepEqual(hc.RestartPolicy, { Name: 'on-failure', MaximumRetryCount: 2 });
    const rm = await d.docker(['rm', '-f', 'upd']);
    assert.equal(rm.code, 0, rm.stderr);
  });
});
