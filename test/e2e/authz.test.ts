// Authorization plugins (issue 14): a test plugin on a unix socket, named by its socket path in
// daemon.json. Every request and response goes through it; denials are 403 with the plugin's
// message; a plugin that is gone denies (fail closed); large and chunked bodies never skip it;
// hijacked exec start is covered; a reload adds and removes the plugin.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeBody, TestAuthzPlugin } from '../helpers/authz-plugin.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';

describe('authorization plugins', () => {
  let d: TestDaemon;
  let dir: string;
  let plugin: TestAuthzPlugin;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-authz-'));
    plugin = new TestAuthzPlugin(join(dir, 'testauthz.sock'));
    await plugin.start();
    d = await startDaemon({ config: { 'authorization-plugins': [plugin.socketPath] } });
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
    await plugin?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('allowed requests reach the plugin with method, URI, headers and the JSON body; responses too', async () => {
    const r = await d.docker(['run', '--name', 'allowed', 'busybox', 'echo', 'hi']);
    assert.equal(r.code, 0, r.stderr);
    const create = plugin.requestsFor('POST', '/containers/create')[0]!;
    assert.ok(create, 'the create went to the plugin');
    assert.equal((decodeBody(create.RequestBody) as { Image: string }).Image, 'busybox');
    assert.equal(create.RequestHeaders['Content-Type'], 'application/json');
    assert.equal(create.User, '');
    assert.deepEqual((await d.request('GET', '/v1.51/info')).json().Plugins.Authorization, [plugin.socketPath]);
    const res = plugin.responsesFor('POST', '/containers/create')[0]!;
    assert.equal(res.ResponseStatusCode, 201);
    assert.match((decodeBody(res.ResponseBody) as { Id: string }).Id, /^[0-9a-f]{64}$/);
  });

  test("a denial is a 403 with the plugin's message, and nothing happens", async () => {
    plugin.request = (q) =>
      q.RequestUri.includes('/containers/create') &&
      (decodeBody(q.RequestBody) as { Labels?: Record<string, string> } | null)?.Labels?.forbidden
        ? { Allow: false, Msg: 'no forbidden containers' }
        : { Allow: true };
    const r = await d.docker(['create', '--label', 'forbidden=1', '--name', 'denied', 'busybox']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /authorization denied by plugin testauthz: no forbidden containers/);
    assert.equal((await d.request('GET', '/containers/denied/json')).status, 404);
    const raw = await d.request('POST', '/containers/create', { body: { Image: 'busybox', Labels: { forbidden: '1' } } });
    assert.equal(raw.status, 403);
    plugin.request = () => ({ Allow: true });
  });

  test('a response the plugin refuses is not sent: 403 instead', async () => {
    plugin.response = (r) => (r.RequestUri.endsWith('/info') ? { Allow: false, Msg: 'info is secret' } : { Allow: true });
    const r = await d.request('GET', '/v1.51/info');
    assert.equal(r.status, 403);
    assert.equal(r.json().message, 'authorization denied by plugin testauthz: info is secret');
    plugin.response = () => ({ Allow: true });
  });

  test('bodies over 1 MiB and chunked bodies never skip the plugin', async () => {
    const big = { Image: 'busybox', Env: Array.from({ length: 40_000 }, (_v, i) => `VARIABLE_${i}=${'x'.repeat(40)}`) };
    plugin.request = (q) =>
      q.RequestUri.includes('/containers/create') && q.RequestBody === null ? { Allow: false, Msg: 'body not shown' } : { Allow: true };
    const r = await d.request('POST', '/containers/create', { body: big });
    assert.equal(r.status, 403, 'a body too large to show is decided without it, never let through');
    assert.match(r.json().message, /body not shown/);
    // Chunked: no Content-Length at all; the plugin still sees the whole body.
    plugin.request = (q) =>
      q.RequestUri.includes('/containers/create') &&
      (decodeBody(q.RequestBody) as { Labels?: Record<string, string> } | null)?.Labels?.sneaky
        ? { Allow: false, Msg: 'seen through' }
        : { Allow: true };
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          socketPath: d.socket,
          method: 'POST',
          path: '/containers/create',
          headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.write('{"Image":"busybox",');
      setTimeout(() => req.end('"Labels":{"sneaky":"1"}}'), 50);
    });
    assert.equal(status, 403);
    plugin.request = () => ({ Allow: true });
  });

  test('hijacked exec start goes through the plugin, with its body, and its response as a 101', async () => {
    assert.equal((await d.docker(['run', '-d', '--name', 'execme', 'busybox', 'sleep', '60'])).code, 0);
    const e = await d.docker(['exec', 'execme', 'echo', 'from-exec']);
    assert.equal(e.code, 0, e.stderr);
    assert.equal(e.stdout, 'from-exec\n');
    const start = plugin.requestsFor('POST', '/start').find((q) => q.RequestUri.includes('/exec/'))!;
    assert.ok(start, 'exec start reached the plugin');
    assert.equal((decodeBody(start.RequestBody) as { Detach: boolean }).Detach, false);
    await until('the exec start response', async () =>
      plugin.responsesFor('POST', '/exec/').some((r) => r.ResponseStatusCode === 101) ? true : undefined,
    );
  });

  test('a plugin that is gone denies (fail closed); back, it allows again', async () => {
    await plugin.stop();
    const r = await d.docker(['ps']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /plugin testauthz failed with error/);
    await plugin.start();
    assert.equal((await d.docker(['ps'])).code, 0);
  });

  test('a reload removes the plugin, and adds it back', async () => {
    await writeFile(d.configFile, JSON.stringify({ 'authorization-plugins': [] }));
    process.kill(d.pid, 'SIGHUP');
    await plugin.stop();
    await until('requests allowed without the plugin', async () => ((await d.request('GET', '/_ping')).status === 200 ? true : undefined));
    await plugin.start();
    const before = plugin.seen.length;
    await d.request('GET', '/version');
    assert.equal(plugin.seen.length, before, 'the plugin is no longer asked');
    await writeFile(d.configFile, JSON.stringify({ 'authorization-plugins': [plugin.socketPath] }));
    process.kill(d.pid, 'SIGHUP');
    await until('the plugin asked again', async () => {
      await d.request('GET', '/version');
      return plugin.seen.length > before ? true : undefined;
    });
  });
});
