// Issue 28: the console meets the daemon's authorization plugins as any client does. The plugin
// sees the console's requests exactly as a socket client's (no /api prefix, no console cookie), and
// its denials reach the page: a create refused shows the plugin's message and makes nothing; an
// exec start refused (the terminal's bridged request) shows it in the terminal.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { TestAuthzPlugin } from '../helpers/authz-plugin.ts';
import { browserMissing, launchChromium } from '../helpers/browser.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { freePort } from '../helpers/ports.ts';
import { until } from '../helpers/until.ts';

describe('web console under an authorization plugin', { skip: browserMissing(), timeout: 180_000 }, () => {
  let d: TestDaemon;
  let dir: string;
  let plugin: TestAuthzPlugin;
  let browser: Browser;
  let base: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'console-authz-'));
    plugin = new TestAuthzPlugin(join(dir, 'testauthz.sock'));
    await plugin.start();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    d = await startDaemon({ args: ['--console-addr', `127.0.0.1:${port}`], config: { 'authorization-plugins': [plugin.socketPath] } });
    await loadBusybox(d);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await d?.cleanup();
    await plugin?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('the plugin sees plain API paths; its denials of a create and of an exec start reach the page', async () => {
    // Strict rules on the path as a socket client sends it: a prefixed path would slip past them.
    plugin.request = (q) =>
      /^\/v[0-9.]+\/containers\/create\?name=denied$/.test(q.RequestUri)
        ? { Allow: false, Msg: 'no containers named denied' }
        : /^\/v[0-9.]+\/exec\/[0-9a-f]+\/start$/.test(q.RequestUri)
          ? { Allow: false, Msg: 'no shells today' }
          : { Allow: true };
    const page = await browser.newPage();
    await page.goto(`${base}/#/containers`);
    await page.getByRole('button', { name: 'Create…' }).click();
    await page.getByLabel('Name', { exact: true }).fill('denied');
    await page.getByLabel('Command').fill('sleep 3600');
    await page.getByRole('button', { name: 'Create and run' }).click();
    await page.getByRole('alert').getByText('authorization denied by plugin testauthz: no containers named denied').waitFor();
    assert.equal((await d.request('GET', '/containers/denied/json')).status, 404, 'nothing was created');
    const seen = plugin.requestsFor('POST', '/containers/create');
    assert.ok(seen.length > 0 && seen.every((q) => q.RequestUri.startsWith('/v1.51/')), JSON.stringify(seen.map((q) => q.RequestUri)));
    assert.ok(
      seen.every((q) => !Object.keys(q.RequestHeaders).some((h) => h.toLowerCase() === 'cookie')),
      'the console cookie never reaches the plugin',
    );

    const run = await d.docker(['run', '-d', '--name', 'allowed', 'busybox', 'sleep', '3600']);
    assert.equal(run.code, 0, run.stderr);
    await page.goto(`${base}/#/containers/${run.stdout.trim()}/terminal`);
    await until('the terminal shows the refusal', async () => {
      const text = (await page.locator('.xterm-rows').textContent()) ?? '';
      return text.includes('no shells today') ? text : undefined;
    });
    assert.ok(
      plugin.requestsFor('POST', '/exec/').some((q) => /^\/v1\.51\/exec\/[0-9a-f]+\/start$/.test(q.RequestUri)),
      "the terminal's exec start went through the plugin",
    );
    await page.close();
  });
});
