// Issue 28: the web console cannot be driven from another origin. A page served by a second local
// HTTP server (another port: the same site, so the SameSite cookie does go along; and another host
// name: another site) is loaded in the same browser as an open console and tries every way a web
// page has to reach the daemon: fetch (no-cors and cors), a form POST, websockets to attach, to
// stats and to the exec bridge. Nothing may be created or attached. Raw requests check the rest:
// no cookie, a DNS-rebinding Host, a foreign Origin with the right cookie, and no CORS header
// ever. Under --tlsverify the console is HTTPS and wants the client certificate, as the API does.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserMissing, launchChromium } from '../helpers/browser.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { freePort } from '../helpers/ports.ts';
import { makeCerts, tlsDaemonArgs, type TestCerts } from '../helpers/tls-certs.ts';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function raw(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

// The attacker's page: every attempt's outcome lands in window.results.
function attackPage(target: string, victimId: string): string {
  return `<!doctype html><html><body><form id="f" method="POST" action="${target}/api/v1.51/containers/create?name=evil-form" enctype="text/plain" target="sink">
<input name='{"Image":"busybox","x":"' value='"}'></form><iframe name="sink"></iframe>
<script>
const results = {};
window.results = results;
const body = JSON.stringify({ Image: 'busybox', Cmd: ['true'] });
const tryWs = (name, url) => new Promise((resolve) => {
  const ws = new WebSocket(url);
  let opened = false;
  ws.onopen = () => { opened = true; ws.send('echo pwned\\n'); };
  ws.onerror = () => resolve(results[name] = opened ? 'opened' : 'failed');
  ws.onclose = () => resolve(results[name] = opened ? 'opened' : 'failed');
  setTimeout(() => resolve(results[name] = opened ? 'opened' : 'timeout'), 5000);
});
(async () => {
  try {
    const r = await fetch('${target}/api/v1.51/containers/create?name=evil-nocors', { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'Content-Type': 'text/plain' }, body });
    results.nocors = 'sent:' + r.type;
  } catch (e) { results.nocors = 'failed'; }
  try {
    const r = await fetch('${target}/api/v1.51/containers/json?all=1', { credentials: 'include' });
    results.corsRead = 'read:' + (await r.text()).slice(0, 40);
  } catch (e) { results.corsRead = 'failed'; }
  try {
    const r = await fetch('${target}/api/v1.51/containers/create?name=evil-cors', { method: 'POST', credentials: 'include', headers: { 'Content-Type': 'application/json' }, body });
    results.cors = 'status:' + r.status;
  } catch (e) { results.cors = 'failed'; }
  document.getElementById('f').submit();
  await tryWs('attachWs', '${target.replace('http', 'ws')}/api/v1.51/containers/${victimId}/attach/ws?stream=1&stdin=1&stdout=1');
  await tryWs('statsWs', '${target.replace('http', 'ws')}/api/v1.51/containers/${victimId}/stats?stream=1');
  results.done = true;
})();
</script></body></html>`;
}

describe('web console: other origins cannot drive the daemon', { timeout: 180_000 }, () => {
  let d: TestDaemon;
  let port: number;
  let victim: string;
  let evil: Server;
  let evilPort: number;
  let attackHtml = '';

  before(async () => {
    port = await freePort();
    d = await startDaemon({ args: ['--console-addr', `127.0.0.1:${port}`] });
    await loadBusybox(d);
    const r = await d.docker(['run', '-d', '-i', '--name', 'victim', 'busybox', 'sh']);
    assert.equal(r.code, 0, r.stderr);
    victim = r.stdout.trim();
    evilPort = await freePort();
    evil = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(attackHtml));
    await new Promise<void>((resolve) => evil.listen(evilPort, '127.0.0.1', resolve));
  });
  after(async () => {
    evil?.close();
    await d?.cleanup();
  });

  const names = async () => (await d.request('GET', '/containers/json?all=1')).json<Array<{ Names: string[] }>>().map((c) => c.Names[0]);

  test('raw requests: no session cookie, a rebinding Host, a foreign Origin are refused; no CORS headers', async () => {
    const page = await raw(port, 'GET', '/', { Host: `127.0.0.1:${port}` });
    assert.equal(page.status, 200);
    const cookie = String(page.headers['set-cookie'] ?? '');
    assert.match(cookie, /^engine_console=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict/);
    const session = cookie.split(';')[0]!;
    assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);

    const ok = await raw(port, 'GET', '/api/v1.51/version', {
      Host: `127.0.0.1:${port}`,
      Cookie: session,
      'Sec-Fetch-Site': 'same-origin',
    });
    assert.equal(ok.status, 200, ok.body);
    assert.equal(JSON.parse(ok.body).ApiVersion, '1.51');

    const refused: Array<[string, Record<string, string>, number]> = [
      ['no cookie', { Host: `127.0.0.1:${port}` }, 403],
      ['a wrong cookie', { Host: `127.0.0.1:${port}`, Cookie: 'engine_console=' + 'A'.repeat(43) }, 403],
      ['a rebinding Host', { Host: `attacker.example:${port}`, Cookie: session }, 421],
      ['a foreign Origin', { Host: `127.0.0.1:${port}`, Cookie: session, Origin: `http://127.0.0.1:${evilPort}` }, 403],
      ['a same-site request', { Host: `127.0.0.1:${port}`, Cookie: session, 'Sec-Fetch-Site': 'same-site' }, 403],
    ];
    for (const [what, headers, status] of refused) {
      const r = await raw(
        port,
        'POST',
        '/api/v1.51/containers/create?name=raw-evil',
        { ...headers, 'Content-Type': 'application/json' },
        '{"Image":"busybox"}',
      );
      assert.equal(r.status, status, `${what}: ${r.body}`);
      assert.equal(r.headers['access-control-allow-origin'], undefined, `${what}: no CORS header`);
    }
    const preflight = await raw(port, 'OPTIONS', '/api/v1.51/containers/create', {
      Host: `127.0.0.1:${port}`,
      Origin: `http://127.0.0.1:${evilPort}`,
      'Access-Control-Request-Method': 'POST',
    });
    assert.notEqual(preflight.status, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], undefined);
    assert.ok(!(await names()).includes('/raw-evil'), 'nothing was created');
  });

  test('a page of another origin in the same browser as an open console gets nowhere', { skip: browserMissing() }, async () => {
    let browser: Browser | undefined;
    try {
      browser = await launchChromium();
      const context = await browser.newContext();
      const consolePage = await context.newPage();
      await consolePage.goto(`http://127.0.0.1:${port}/#/containers`);
      await consolePage.locator(`.vrow[data-id="${victim}"]`).waitFor();
      assert.ok(
        (await context.cookies()).some((c) => c.name === 'engine_console'),
        'the console page holds its session',
      );

      for (const attacker of [`http://127.0.0.1:${evilPort}`, `http://localhost:${evilPort}`]) {
        attackHtml = attackPage(`http://127.0.0.1:${port}`, victim);
        const page = await context.newPage();
        await page.goto(`${attacker}/`);
        await page.waitForFunction(() => (window as unknown as { results?: { done?: boolean } }).results?.done === true, undefined, {
          timeout: 30_000,
        });
        const results = await page.evaluate(() => (window as unknown as { results: Record<string, unknown> }).results);
        assert.equal(results.corsRead, 'failed', `${attacker}: a cross-origin read fails`);
        assert.equal(results.cors, 'failed', `${attacker}: a cross-origin JSON POST fails`);
        assert.notEqual(results.attachWs, 'opened', `${attacker}: the attach websocket does not open`);
        assert.notEqual(results.statsWs, 'opened', `${attacker}: the console's stats websocket does not open`);
        await page.close();
      }
      await new Promise((r) => setTimeout(r, 500)); // the form's navigation lands in its frame
      const after = await names();
      for (const n of ['/evil-form', '/evil-nocors', '/evil-cors']) assert.ok(!after.includes(n), `${n} was not created`);
      const logs = await d.docker(['logs', 'victim']);
      assert.ok(!logs.stdout.includes('pwned'), 'nothing reached the attached container');

      // The console page itself still works in the same browser: it is the cookie and the origin, not the browser, that count.
      const created = await consolePage.evaluate(async () => {
        const r = await fetch('/api/v1.51/containers/create?name=from-console', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ Image: 'busybox' }),
        });
        return r.status;
      });
      assert.equal(created, 201);
      assert.ok((await names()).includes('/from-console'));
    } finally {
      await browser?.close();
    }
  });
});

describe('web console under --tlsverify: HTTPS with a client certificate, as the API', { timeout: 120_000 }, () => {
  let d: TestDaemon;
  let port: number;
  let certs: TestCerts;
  let work: string;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'console-tls-'));
    certs = await makeCerts(join(work, 'certs'));
    port = await freePort();
    d = await startDaemon({ args: [...tlsDaemonArgs(certs, await freePort()), '--console-addr', `127.0.0.1:${port}`] });
  });
  after(async () => {
    await d?.cleanup();
    await rm(work, { recursive: true, force: true });
  });

  const get = (path: string, headers: Record<string, string>, withCert: boolean) =>
    new Promise<Raw>((resolve, reject) => {
      const ca = readFileSync(certs.ca);
      const client = withCert
        ? { cert: readFileSync(join(certs.clientDir, 'cert.pem')), key: readFileSync(join(certs.clientDir, 'key.pem')) }
        : {};
      const req = httpsRequest({ host: '127.0.0.1', port, path, headers, ca, ...client }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      });
      req.on('error', reject);
      req.end();
    });

  test('without a client certificate nothing is served; with one the page and the API answer', async () => {
    await assert.rejects(get('/', { Host: `127.0.0.1:${port}` }, false), 'the handshake fails without a client certificate');
    const page = await get('/', { Host: `127.0.0.1:${port}` }, true);
    assert.equal(page.status, 200);
    const cookie = String(page.headers['set-cookie']);
    assert.match(cookie, /; Secure$/);
    const version = await get(
      '/api/v1.51/version',
      { Host: `127.0.0.1:${port}`, Cookie: cookie.split(';')[0]!, Origin: `https://127.0.0.1:${port}` },
      true,
    );
    assert.equal(version.status, 200, version.body);
    const http = await raw(port, 'GET', '/', { Host: `127.0.0.1:${port}` }).catch((err: Error) => err);
    assert.ok(http instanceof Error || http.status === 400, 'plain HTTP is not served');
  });
});
