// Issue 28: the console's cluster page on a one-node cluster, in a real browser: the node and a
// service with its replicas shown, scaled from the page (the daemon's tasks follow), the page
// following the change from the events stream.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserMissing, launchChromium, unnamedControls } from '../helpers/browser.ts';
import { REPO_ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { freePort } from '../helpers/ports.ts';
import { until } from '../helpers/until.ts';

describe('web console: a service scaled on a one-node cluster', { skip: browserMissing(), timeout: 240_000 }, () => {
  let d: TestDaemon;
  let browser: Browser;
  let port: number;

  before(async () => {
    port = await freePort();
    d = await startDaemon({ args: ['--console-addr', `127.0.0.1:${port}`] });
    await loadBusybox(d);
    const listen = await freePort();
    const init = await d.docker(['swarm', 'init', '--advertise-addr', '127.0.0.1', '--listen-addr', `127.0.0.1:${listen}`]);
    assert.equal(init.code, 0, init.stderr);
    const svc = await d.docker([
      'service',
      'create',
      '--detach',
      '--no-resolve-image',
      '--name',
      'web',
      '--replicas',
      '1',
      '--stop-grace-period',
      '1s',
      'busybox',
      'sleep',
      '3600',
    ]);
    assert.equal(svc.code, 0, svc.stderr);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await d?.docker(['swarm', 'leave', '--force']);
    await d?.cleanup();
  });

  const running = async () => {
    const tasks = (
      await d.request('GET', '/v1.51/tasks?filters=' + encodeURIComponent('{"service":["web"],"desired-state":["running"]}'))
    ).json<Array<{ Status: { State: string } }>>();
    return tasks.filter((t) => t.Status.State === 'running').length;
  };

  test('the page shows the node and 1/1, scales the service to 3 (3/3), rolls it back (1/1), shows service logs', async () => {
    await until('the first task runs', async () => ((await running()) === 1 ? true : undefined), 60_000);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`http://127.0.0.1:${port}/#/cluster`);
    await page.getByRole('table', { name: 'Nodes' }).getByText('manager').waitFor();
    const replicas = page.locator('tr[data-service="web"] [data-testid="replicas"]');
    await until('1/1 shown', async () => ((await replicas.textContent()) === '1/1' ? true : undefined));
    assert.deepEqual(await unnamedControls(page), [], 'every control on the cluster page is named');
    // Scaled through the page's dialog: named controls, the current count filled in, Enter submits.
    await page.getByRole('button', { name: 'Scale web' }).click();
    const dialog = page.getByRole('dialog', { name: 'Scale web' });
    const field = dialog.getByRole('spinbutton', { name: 'Replicas' });
    assert.equal(await field.inputValue(), '1', 'the dialog starts from the current replicas');
    assert.deepEqual(await unnamedControls(page), [], 'every control of the scale dialog is named');
    await field.fill('3');
    await field.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    await until('3/3 shown without a reload', async () => ((await replicas.textContent()) === '3/3' ? true : undefined), 90_000);
    assert.equal(await running(), 3, 'the daemon runs three tasks');
    const spec = (await d.request('GET', '/v1.51/services/web')).json<{ Spec: { Mode: { Replicated: { Replicas: number } } } }>();
    assert.equal(spec.Spec.Mode.Replicated.Replicas, 3);
    await page.screenshot({ path: join(REPO_ROOT, 'docs/console/cluster.png') });

    // Roll back to the previous spec: one replica again, on the page and in the daemon.
    await page.getByRole('button', { name: 'Roll back web' }).click();
    await until('1/1 shown after the rollback', async () => ((await replicas.textContent()) === '1/1' ? true : undefined), 90_000);
    const back = (await d.request('GET', '/v1.51/services/web')).json<{ Spec: { Mode: { Replicated: { Replicas: number } } } }>();
    assert.equal(back.Spec.Mode.Replicated.Replicas, 1);

    // An image the daemon refuses (blank): its own message in the dialog, which stays open; Escape
    // closes it.
    await page.getByRole('button', { name: 'Update the image of web' }).click();
    const imageDialog = page.getByRole('dialog', { name: 'Update the image of web' });
    await imageDialog.getByLabel('Image').fill('   ');
    await imageDialog.getByLabel('Image').press('Enter');
    const current = (await d.request('GET', '/v1.51/services/web')).json<{
      Version: { Index: number };
      Spec: { TaskTemplate: { ContainerSpec: { Image: string } } };
    }>();
    const bad = structuredClone(current.Spec);
    bad.TaskTemplate.ContainerSpec.Image = '';
    const direct = await d.request('POST', `/v1.51/services/web/update?version=${current.Version.Index}`, { body: bad });
    assert.equal(direct.status, 400, direct.text());
    await imageDialog.getByRole('alert').getByText(direct.json<{ message: string }>().message, { exact: true }).waitFor();
    await page.keyboard.press('Escape');
    await imageDialog.waitFor({ state: 'detached' });

    // Service logs: the tasks' output through GET /services/{id}/logs.
    const svc = await d.docker([
      'service',
      'create',
      '--detach',
      '--no-resolve-image',
      '--name',
      'talker',
      'busybox',
      'sh',
      '-c',
      'echo hello-from-task; sleep 3600',
    ]);
    assert.equal(svc.code, 0, svc.stderr);
    await page.locator('tr[data-service="talker"] [data-testid="replicas"]').getByText('1/1').waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Logs of talker' }).click();
    await page.getByRole('log', { name: 'Logs of talker' }).getByText('hello-from-task').waitFor({ timeout: 30_000 });
  });
});
