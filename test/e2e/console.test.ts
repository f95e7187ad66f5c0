// Issue 28: the web console in a real browser (Debian's chromium, headless, through playwright-core)
// against a real daemon started with --console-addr: run a container from the page and see it
// running, its logs arrive line by line, `echo hi` in the terminal, stop it and see the state change
// without a reload, pull an image with per-layer progress, every control named (aria snapshot),
// and screenshots of each page into docs/console/.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { browserMissing, launchChromium, unnamedControls } from '../helpers/browser.ts';
import { REPO_ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { freePort } from '../helpers/ports.ts';
import { pushRawImage, sha256, startRegistry, type TestRegistry } from '../helpers/registry.ts';
import { tarToBuffer } from '../../src/util/tar-writer.ts';
import { until } from '../helpers/until.ts';

const SHOTS = join(REPO_ROOT, 'docs/console');
const skip = browserMissing();

describe('web console in a browser', { skip, timeout: 300_000 }, () => {
  let d: TestDaemon;
  let browser: Browser;
  let page: Page;
  let base: string;
  let registry: TestRegistry | undefined;

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    d = await startDaemon({ args: ['--console-addr', `127.0.0.1:${port}`] });
    await loadBusybox(d);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await mkdir(SHOTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await registry?.cleanup();
    await d?.cleanup();
  });

  const containers = async () =>
    (await d.request('GET', '/containers/json?all=1')).json<Array<{ Id: string; Names: string[]; State: string }>>();

  test('the overview shows the engine and the live event feed', async () => {
    await page.goto(`${base}/#/overview`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByText('API 1.51').waitFor();
    await d.request('POST', '/volumes/create', { body: { Name: 'feedvol' } });
    await page.locator('ol.events li', { hasText: 'feedvol' }).first().waitFor();
    await page.screenshot({ path: join(SHOTS, 'overview.png') });
  });

  test('a container created and run from the page runs, and its logs arrive line by line', async () => {
    await page.goto(`${base}/#/containers`);
    await page.getByRole('button', { name: 'Create…' }).click();
    await page.getByLabel('Image').fill('busybox');
    await page.getByLabel('Name', { exact: true }).fill('web');
    await page
      .getByLabel('Command')
      .fill(`sh -c 'trap "exit 0" TERM; i=0; while true; do echo line $i; echo oops $i >&2; i=$((i+1)); sleep 0.4; done'`);
    await page.getByLabel('Ports (host:container, one per line)').fill('127.0.0.1::8080');
    await page.getByLabel('Environment (KEY=value, one per line)').fill('GREETING=hello\nOTHER=x y');
    await page.getByLabel('Volumes (name-or-path:/dest, one per line)').fill('console-data:/data');
    await page.getByLabel('Restart policy').selectOption('on-failure');
    await page.getByRole('button', { name: 'Create and run' }).click();
    await page.waitForURL(/#\/containers\/[0-9a-f]{64}$/);
    await until('the page shows it running', async () =>
      (await page.getByTestId('container-state').textContent()) === 'running' ? true : undefined,
    );
    const list = await containers();
    assert.equal(list.find((c) => c.Names[0] === '/web')?.State, 'running', 'the daemon runs the container the page created');
    const made = (await d.request('GET', '/containers/web/json')).json<{
      Config: { Env: string[] };
      HostConfig: { RestartPolicy: { Name: string }; PortBindings: Record<string, Array<{ HostIp: string }>> };
      Mounts: Array<{ Name?: string; Destination: string }>;
      NetworkSettings: { Ports: Record<string, Array<{ HostIp: string; HostPort: string }> | null> };
    }>();
    assert.ok(made.Config.Env.includes('GREETING=hello') && made.Config.Env.includes('OTHER=x y'), made.Config.Env.join());
    assert.equal(made.HostConfig.RestartPolicy.Name, 'on-failure');
    assert.equal(made.HostConfig.PortBindings['8080/tcp']?.[0]?.HostIp, '127.0.0.1');
    assert.match(made.NetworkSettings.Ports['8080/tcp']?.[0]?.HostPort ?? '', /^[0-9]+$/, 'a host port was chosen');
    assert.ok(made.Mounts.some((m) => m.Name === 'console-data' && m.Destination === '/data'));

    const log = page.getByRole('log', { name: 'Container logs' });
    await log.getByText('line 1', { exact: true }).waitFor();
    const seenAt1 = await log.locator('.line.stdout').count();
    await log.getByText('line 4', { exact: true }).waitFor();
    const seenAt4 = await log.locator('.line.stdout').count();
    assert.ok(seenAt4 > seenAt1, `lines keep arriving while the page is open (${seenAt1} then ${seenAt4})`);
    assert.equal(await log.locator('.line.stderr', { hasText: 'oops 1' }).count(), 1, 'stderr lines are told apart');
    await page.getByLabel('Search the logs').fill('line 3');
    assert.equal(await log.locator('.line').count(), 1, 'search keeps only the matching line');
    await page.getByLabel('Search the logs').fill('');
    await page.screenshot({ path: join(SHOTS, 'container-logs.png') });
  });

  test('the terminal runs sh in the container: echo hi prints hi', async () => {
    const id = (await containers()).find((c) => c.Names[0] === '/web')!.Id;
    await page.goto(`${base}/#/containers/${id}/terminal`);
    await until('the terminal connects', async () =>
      (await page.getByTestId('terminal-status').textContent())?.includes('connected') ? true : undefined,
    );
    await page.locator('.term-box').click();
    await page.keyboard.type('echo hi\n');
    const rows = await until('hi on a line of its own', async () => {
      const lines = await page.locator('.xterm-rows > div').allTextContents();
      return lines.some((l) => l.trim() === 'hi') ? lines : undefined;
    });
    assert.ok(
      rows.some((l) => l.includes('echo hi')),
      'the typed command is echoed by the shell',
    );
    await page.screenshot({ path: join(SHOTS, 'terminal.png') });
  });

  test('the terminal follows the window size (POST /exec/{id}/resize)', async () => {
    const id = (await containers()).find((c) => c.Names[0] === '/web')!.Id;
    await page.setViewportSize({ width: 1000, height: 700 });
    await page.goto(`${base}/#/containers/${id}/terminal`);
    await until('the terminal connects', async () =>
      (await page.getByTestId('terminal-status').textContent())?.includes('connected') ? true : undefined,
    );
    await page.locator('.term-box').click();
    const size = async () => {
      await page.keyboard.type('clear; stty size\n');
      return until('stty size answers', async () => {
        const lines = await page.locator('.xterm-rows > div').allTextContents();
        const m = lines.map((l) => /^\s*(\d+) (\d+)\s*$/.exec(l)).find(Boolean);
        return m ? { rows: Number(m[1]), cols: Number(m[2]) } : undefined;
      });
    };
    const small = await size();
    await page.setViewportSize({ width: 1400, height: 900 });
    const big = await until('the size grows with the window', async () => {
      const s = await size();
      return s.cols > small.cols && s.rows > small.rows ? s : undefined;
    });
    assert.ok(big.cols > small.cols, `${JSON.stringify(small)} → ${JSON.stringify(big)}`);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  test('live stats: sparklines in the table, charts on the container page; processes; files', async () => {
    const id = (await containers()).find((c) => c.Names[0] === '/web')!.Id;
    await page.goto(`${base}/#/containers`);
    const mem = page.locator(`.vrow[data-id="${id}"] .c-mem .spark span`);
    await until('the memory sparkline shows a value', async () => ((await mem.textContent())?.match(/[0-9]+[KMG]/) ? true : undefined));
    // A second container with a published port, and a few seconds of samples, for the screenshot.
    const cache = await d.docker([
      'run',
      '-d',
      '--name',
      'cache',
      '-p',
      '127.0.0.1::80',
      'busybox',
      'sh',
      '-c',
      'while true; do sleep 1; done',
    ]);
    assert.equal(cache.code, 0, cache.stderr);
    await page.locator('.vrow', { hasText: 'cache' }).locator('.c-ports', { hasText: '→80/tcp' }).waitFor();
    await new Promise((r) => setTimeout(r, 6000));
    await until('the status ages with the page’s clock', async () =>
      /^Up \d+ seconds$/.test((await page.locator('.vrow', { hasText: 'cache' }).locator('.c-status').textContent()) ?? '')
        ? true
        : undefined,
    );
    await page.screenshot({ path: join(SHOTS, 'containers.png') });
    await page.goto(`${base}/#/containers/${id}/stats`);
    await until('four charts with data', async () => ((await page.locator('.chart .u-wrap').count()) === 4 ? true : undefined));
    await until('the charts have three samples', async () =>
      Number(await page.locator('.chart').first().getAttribute('data-points')) >= 3 ? true : undefined,
    );
    await page.screenshot({ path: join(SHOTS, 'stats.png') });

    await page.goto(`${base}/#/containers/${id}/top`);
    await page
      .locator('table td', { hasText: 'sleep' })
      .or(page.locator('table td', { hasText: 'sh -c' }))
      .first()
      .waitFor();

    await page.goto(`${base}/#/containers/${id}/files`);
    await page.getByLabel('Directory path').fill('/etc');
    await page.getByRole('button', { name: 'Go', exact: true }).click();
    await until('the files view shows /etc', async () =>
      (await page.getByTestId('files-dir').textContent()) === '/etc' ? true : undefined,
    );
    await page.getByRole('cell', { name: 'passwd', exact: true }).waitFor();
    await page
      .getByLabel('Upload files into this directory')
      .setInputFiles({ name: 'uploaded.txt', mimeType: 'text/plain', buffer: Buffer.from('from the browser\n') });
    await page.getByRole('cell', { name: 'uploaded.txt', exact: true }).waitFor();
    const cat = await d.docker(['exec', 'web', 'cat', '/etc/uploaded.txt']);
    assert.equal(cat.stdout, 'from the browser\n', cat.stderr);
    const dl = await page.evaluate(async (cid) => {
      const r = await fetch(`/api/v1.51/containers/${cid}/archive?path=/etc/uploaded.txt`);
      return { status: r.status, type: r.headers.get('content-type'), size: (await r.arrayBuffer()).byteLength };
    }, id);
    assert.deepEqual(dl, { status: 200, type: 'application/x-tar', size: 2048 }, 'the download link serves the file as a tar');
  });

  test('table sparklines stream for the running rows in view only: scrolling moves them, nobody looking closes them', async () => {
    // Fourteen running containers (spark-0 … spark-11, cache, web) and a window showing a few rows.
    for (let i = 0; i < 12; i += 4)
      await Promise.all(
        [i, i + 1, i + 2, i + 3].map(async (k) => {
          const r = await d.docker(['run', '-d', '--name', `spark-${k}`, 'busybox', 'sleep', '3600']);
          assert.equal(r.code, 0, r.stderr);
        }),
      );
    // The stats streams the page holds, seen from the browser's side: websockets by container id.
    const open = new Set<string>();
    const track = (ws: import('playwright-core').WebSocket) => {
      const id = /\/containers\/([0-9a-f]{64})\/stats/.exec(ws.url())?.[1];
      if (!id) return;
      open.add(id);
      ws.on('close', () => open.delete(id));
    };
    page.on('websocket', track);
    try {
      await page.setViewportSize({ width: 1280, height: 430 });
      await page.goto(`${base}/#/containers`);
      await page
        .getByTestId('row-count')
        .getByText(/^\d+ shown$/)
        .waitFor();
      // The running rows whose box meets the scrolled body's box.
      const runningInView = () =>
        page.locator('.vbody').evaluate((body) => {
          const b = body.getBoundingClientRect();
          return [...body.querySelectorAll<HTMLElement>('.vrow[data-state="running"]')]
            .filter((r) => {
              const box = r.getBoundingClientRect();
              return box.bottom > b.top && box.top < b.bottom;
            })
            .map((r) => r.dataset.id!)
            .sort();
        });
      const streams = (want: string[], what: string) =>
        until(what, async () => ([...open].sort().join() === want.join() ? true : undefined), 15_000).catch(() =>
          assert.fail(`${what}: open ${JSON.stringify([...open].sort())}, want ${JSON.stringify(want)}`),
        );
      const top = await runningInView();
      assert.ok(top.length >= 4 && top.length < 14, `a few running rows in view: ${top.length}`);
      await streams(top, 'a stream for each running row in view, none for the others');
      const web = (await containers()).find((c) => c.Names[0] === '/web')!.Id;
      assert.ok(!top.includes(web), 'web, the oldest, is out of view at the top');

      await page.locator('.vbody').evaluate((el) => (el.scrollTop = el.scrollHeight));
      await page.locator(`.vrow[data-id="${web}"]`).waitFor();
      const bottom = await runningInView();
      assert.ok(bottom.includes(web) && bottom.every((id) => !top.includes(id)), 'other rows in view after the scroll');
      await streams(bottom, 'the streams follow the scroll: the rows scrolled out closed theirs');
      const mem = page.locator(`.vrow[data-id="${web}"] .c-mem .spark span`);
      await until('the scrolled-in row’s memory sparkline shows a value', async () =>
        (await mem.textContent())?.match(/[0-9]+[KMG]/) ? true : undefined,
      );

      // Nobody looking: the page hidden (another tab in front), then another view of the console.
      const setHidden = (hidden: boolean) =>
        page.evaluate((h) => {
          Object.defineProperty(document, 'hidden', { configurable: true, get: () => h });
          document.dispatchEvent(new Event('visibilitychange'));
        }, hidden);
      await setHidden(true);
      await streams([], 'no stream while the page is hidden');
      await setHidden(false);
      await streams(bottom, 'the streams again once it is shown');
      await page.goto(`${base}/#/images`);
      await streams([], 'no stream once the table is not shown');
    } finally {
      page.off('websocket', track);
      await page.setViewportSize({ width: 1280, height: 800 });
      await d.docker(['rm', '-f', ...Array.from({ length: 12 }, (_, k) => `spark-${k}`)]);
    }
  });

  test('stop from the page: the state changes without a reload, in the container page and the table', async () => {
    const id = (await containers()).find((c) => c.Names[0] === '/web')!.Id;
    await page.goto(`${base}/#/containers`);
    const row = page.locator(`.vrow[data-id="${id}"]`);
    await until('the row shows running', async () => ((await row.getAttribute('data-state')) === 'running' ? true : undefined));
    await row.getByRole('checkbox').check();
    await page.getByRole('button', { name: 'Stop selected containers' }).click();
    await until('the row shows exited', async () => ((await row.getAttribute('data-state')) === 'exited' ? true : undefined), 30_000);
    await until('the status says how it exited', async () =>
      /^Exited \(0\) (Less than a second|1 second|\d+ seconds) ago$/.test((await row.locator('.c-status').textContent()) ?? '')
        ? true
        : undefined,
    );
    assert.equal((await containers()).find((c) => c.Id === id)?.State, 'exited');
    // Started again from outside the page (the CLI): the page follows the event.
    const started = await d.docker(['start', 'web']);
    assert.equal(started.code, 0, started.stderr);
    await until('the row shows running again', async () => ((await row.getAttribute('data-state')) === 'running' ? true : undefined));
    await page.goto(`${base}/#/containers/${id}/logs`);
    await page.getByRole('button', { name: 'Stop web' }).click();
    await until(
      'the header shows exited',
      async () => ((await page.getByTestId('container-state').textContent()) === 'exited' ? true : undefined),
      30_000,
    );
  });

  test('pull an image from a registry with a progress bar per layer; tag and push it', async () => {
    registry = await startRegistry();
    // Three layers of random bytes (nothing the daemon has already), 3 MiB each.
    const layers = [];
    const diffIds = [];
    for (let i = 0; i < 3; i++) {
      const tar = await tarToBuffer((tw) => tw.file(`layer-${i}.bin`, randomBytes(3 << 20)));
      diffIds.push(sha256(tar));
      layers.push({ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', data: gzipSync(tar, { level: 1 }) });
    }
    const config = { architecture: 'amd64', os: 'linux', config: { Cmd: ['sh'] }, rootfs: { type: 'layers', diff_ids: diffIds } };
    await pushRawImage(`http://${registry.host}`, 'console/layers', 'v1', { config, layers });
    const ref = `${registry.host}/console/layers:v1`;
    await page.goto(`${base}/#/images`);
    await page.getByLabel('Pull image').fill(ref);
    await page.getByRole('button', { name: 'Pull', exact: true }).click();
    await page
      .getByTestId('pull-status')
      .getByText(/Downloaded newer image|Image is up to date/)
      .waitFor({ timeout: 60_000 });
    const bars = page.locator('ul.layers progress');
    assert.equal(await bars.count(), 3, 'one progress bar per layer');
    assert.equal(await page.locator('ul.layers li', { hasText: 'Pull complete' }).count(), 3, 'each layer downloaded and complete');
    for (const bar of await bars.all()) {
      const [value, max] = await Promise.all([bar.getAttribute('value'), bar.getAttribute('max')]);
      assert.equal(value, max, 'every layer bar ends full');
    }
    await page.locator(`tr[data-image="${ref}"]`).waitFor();
    const inspect = await d.request('GET', `/images/${ref}/json`);
    assert.equal(inspect.status, 200, 'the daemon has the pulled image');
    await page.screenshot({ path: join(SHOTS, 'images.png') });

    // Tag it under another repository and push that from the page, through the page's dialogs: a
    // refused tag shows the daemon's own message in the dialog, which stays open; Escape cancels; Tab
    // stays inside the dialog; Enter submits.
    const pushed = `${registry.host}/console/pushed:v2`;
    const row = page.locator(`tr[data-image="${ref}"]`);
    const tagButton = page.getByRole('button', { name: `Tag ${ref}` });
    const dialog = page.getByRole('dialog', { name: `Tag ${ref}` });
    await tagButton.click();
    await dialog.waitFor();
    const input = dialog.getByLabel('New tag (repository:tag)');
    assert.ok(await input.evaluate((el) => el === document.activeElement), 'the dialog’s first field has the focus');
    const inside: boolean[] = [];
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press(i % 3 === 2 ? 'Shift+Tab' : 'Tab');
      inside.push(await page.evaluate(() => !!document.activeElement?.closest('dialog[open]')));
    }
    assert.deepEqual(inside, Array(6).fill(true), 'Tab and Shift+Tab keep the focus inside the dialog');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.ok(await tagButton.evaluate((el) => el === document.activeElement), 'the focus goes back to the Tag button');

    await tagButton.click();
    await input.fill('Bad Repo:v1');
    await input.press('Enter');
    const refused = await d.request('POST', `/images/${encodeURIComponent(ref)}/tag?repo=${encodeURIComponent('Bad Repo')}&tag=v1`);
    assert.equal(refused.status, 400, refused.text());
    await dialog.getByRole('alert').getByText(refused.json<{ message: string }>().message, { exact: true }).waitFor();
    assert.ok(await dialog.isVisible(), 'a refused tag leaves the dialog open');
    await input.fill(pushed);
    await input.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    await row.getByText(pushed).waitFor();

    await row.getByRole('button', { name: /^Push / }).click();
    const pushDialog = page.getByRole('dialog', { name: /^Push / });
    await pushDialog.getByLabel('Tag to push').selectOption(pushed);
    await pushDialog.getByRole('button', { name: 'Push', exact: true }).click();
    await pushDialog.waitFor({ state: 'detached', timeout: 60_000 });
    const tags = await until('the registry has the pushed tag', async () => {
      const r = (await (await fetch(`http://${registry!.host}/v2/console/pushed/tags/list`)).json()) as { tags?: string[] };
      return r.tags?.length ? r.tags : undefined;
    });
    assert.deepEqual(tags, ['v2']);
  });

  test('build an image from a Dockerfile typed in the page, its log streaming', async () => {
    await page.goto(`${base}/#/images`);
    await page.getByRole('button', { name: 'Build an image…' }).click();
    await page.getByLabel('Dockerfile').fill('FROM busybox\nRUN echo built-in-console > /built.txt\n');
    await page.getByRole('textbox', { name: 'Tag', exact: true }).fill('console-built:v1');
    await page.getByRole('button', { name: 'Build', exact: true }).click();
    const log = page.getByRole('log', { name: 'Build log' });
    await log.getByText(/Successfully tagged console-built:v1/).waitFor({ timeout: 60_000 });
    await page.locator('tr[data-image="console-built:v1"]').waitFor();
    const r = await d.docker(['run', '--rm', 'console-built:v1', 'cat', '/built.txt']);
    assert.equal(r.stdout, 'built-in-console\n', r.stderr);
  });

  test('networks and volumes: created and removed from the page, the lists follow', async () => {
    await page.goto(`${base}/#/networks`);
    await page.getByLabel('Name').fill('console-net');
    await page.getByRole('button', { name: 'Create network' }).click();
    await page.getByRole('cell', { name: 'console-net', exact: true }).waitFor();
    assert.equal((await d.request('GET', '/networks/console-net')).status, 200);
    const row = page.locator('tr', { has: page.getByRole('cell', { name: 'console-net', exact: true }) });
    await page.getByRole('button', { name: 'Connect a container to console-net' }).click();
    const connect = page.getByRole('dialog', { name: 'Connect a container to console-net' });
    await connect.getByLabel('Container (name or ID)').fill('no-such-container');
    await connect.getByRole('button', { name: 'Connect', exact: true }).click();
    await connect
      .getByRole('alert')
      .getByText(/No such container/)
      .waitFor();
    await connect.getByLabel('Container (name or ID)').fill('web');
    await connect.getByRole('button', { name: 'Connect', exact: true }).click();
    await connect.waitFor({ state: 'detached' });
    await row.getByRole('cell', { name: 'web', exact: true }).waitFor();
    const inspect = (await d.request('GET', '/containers/web/json')).json<{ NetworkSettings: { Networks: Record<string, unknown> } }>();
    assert.ok('console-net' in inspect.NetworkSettings.Networks, 'the daemon connected web to console-net');
    await page.getByRole('button', { name: 'Disconnect a container from console-net' }).click();
    const disconnect = page.getByRole('dialog', { name: 'Disconnect a container from console-net' });
    await disconnect.getByLabel('Container').selectOption('web');
    await disconnect.getByRole('button', { name: 'Disconnect', exact: true }).click();
    await row.getByRole('cell', { name: 'web', exact: true }).waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Remove network console-net' }).click();
    await page.getByRole('cell', { name: 'console-net', exact: true }).waitFor({ state: 'detached' });
    assert.equal((await d.request('GET', '/networks/console-net')).status, 404);

    await page.goto(`${base}/#/volumes`);
    await page.getByLabel('Name').fill('console-vol');
    await page.getByRole('button', { name: 'Create volume' }).click();
    await page.getByRole('cell', { name: 'console-vol', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Inspect volume console-vol' }).click();
    await page.locator('.tree .key', { hasText: 'Mountpoint' }).waitFor();
    await page.getByRole('button', { name: 'Remove volume console-vol' }).click();
    await page.getByRole('cell', { name: 'console-vol', exact: true }).waitFor({ state: 'detached' });
    assert.equal((await d.request('GET', '/volumes/console-vol')).status, 404);
  });

  test('the table is virtualised: hundreds of rows, few in the DOM; search; remove many at once', async () => {
    const N = 300;
    for (let i = 0; i < N; i += 20)
      await Promise.all(
        Array.from({ length: Math.min(20, N - i) }, (_, k) =>
          d.request('POST', `/containers/create?name=bulk-${i + k}`, { body: { Image: 'busybox', Cmd: ['true'] } }),
        ),
      );
    const total = (await containers()).length;
    await page.goto(`${base}/#/containers`);
    await until(
      `${total} rows counted`,
      async () => ((await page.getByTestId('row-count').textContent()) === `${total} shown` ? true : undefined),
      30_000,
    ).catch(async (err: Error) => assert.fail(`${err.message}: the page says ${await page.getByTestId('row-count').textContent()}`));
    const inDom = await page.locator('.vbody .vrow').count();
    assert.ok(inDom > 5 && inDom < 80, `${inDom} rows in the DOM for ${total}`);
    await page.locator('.vbody').evaluate((el) => (el.scrollTop = el.scrollHeight));
    await page.locator(`.vbody .vrow[aria-rowindex="${total}"]`).waitFor();

    await page.getByLabel('Search containers').fill('bulk-123');
    await page.getByTestId('row-count').getByText('1 shown', { exact: true }).waitFor();
    // bulk-29 and bulk-290 … bulk-299: eleven rows selected at once and removed.
    await page.getByLabel('Search containers').fill('bulk-29');
    await page.getByTestId('row-count').getByText('11 shown', { exact: true }).waitFor();
    await page.getByLabel('Select all shown containers').check();
    // What the browser says of a request that got no answer (a failed fetch only says "Failed to fetch").
    const failedRequests: string[] = [];
    page.on('requestfailed', (r) => failedRequests.push(`${r.method()} ${r.url()}: ${r.failure()?.errorText}`));
    await page.getByRole('button', { name: 'Remove selected containers' }).click();
    await until(
      'the removed rows gone',
      async () => ((await page.getByTestId('row-count').textContent()) === '0 shown' ? true : undefined),
      60_000,
    ).catch(async (err: Error) =>
      assert.fail(
        `${err.message}: the page says ${await page.getByTestId('row-count').textContent()}, ${await page.locator('.error').allTextContents()}; ` +
          `the browser's failed requests: ${JSON.stringify(failedRequests)}; the daemon's last output:\n${d.output.slice(-6000)}`,
      ),
    );
    const left = (await containers()).filter((c) => c.Names[0]!.startsWith('/bulk-29'));
    assert.equal(left.length, 0, 'every selected container was removed');
    assert.equal((await containers()).length, total - 11, 'and nothing else');
  });

  test('every control on every page has an accessible name', async () => {
    const id = (await containers()).find((c) => c.Names[0] === '/web')!.Id;
    const pages = [
      'overview',
      'containers',
      'images',
      'networks',
      'volumes',
      'cluster',
      `containers/${id}/logs`,
      `containers/${id}/files`,
      `containers/${id}/inspect`,
    ];
    for (const p of pages) {
      await page.goto(`${base}/#/${p}`);
      await page.locator('main h1').first().waitFor();
      if (p === 'containers') await page.getByRole('button', { name: 'Create…' }).click();
      const unnamed = await unnamedControls(page);
      assert.deepEqual(unnamed, [], `unnamed controls on #/${p}`);
    }
    // The dialogs: every field and button named, the dialog itself named by its title.
    await page.goto(`${base}/#/images`);
    await page.getByRole('button', { name: 'Tag busybox:latest' }).click();
    await page.getByRole('dialog', { name: 'Tag busybox:latest' }).waitFor();
    assert.deepEqual(await unnamedControls(page), [], 'unnamed controls in the tag dialog');
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Push busybox:latest' }).click();
    await page.getByRole('dialog', { name: 'Push busybox:latest' }).waitFor();
    assert.deepEqual(await unnamedControls(page), [], 'unnamed controls in the push dialog');
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    // Keyboard: Tab reaches the navigation's links and Enter follows them.
    await page.goto(`${base}/#/overview`);
    await page.locator('main h1').first().waitFor();
    const focused: string[] = [];
    for (let i = 0; i < 5 && focused.at(-1) !== 'Containers'; i++) {
      await page.keyboard.press('Tab');
      focused.push(await page.evaluate(() => document.activeElement?.textContent ?? ''));
    }
    assert.equal(focused.at(-1), 'Containers', `Tab went through ${JSON.stringify(focused)}`);
    await page.keyboard.press('Enter');
    await page.waitForURL(/#\/containers$/);
  });

  test('an open page keeps working across a daemon restart (the session secret is kept)', async () => {
    await page.goto(`${base}/#/containers`);
    await page.getByTestId('row-count').waitFor();
    await d.stop();
    await d.restart();
    const r = await d.docker(['create', '--name', 'after-restart', 'busybox', 'true']);
    assert.equal(r.code, 0, r.stderr);
    const row = page.locator('.vrow', { hasText: 'after-restart' });
    await row.waitFor({ timeout: 30_000 });
    await row.getByRole('checkbox').check();
    await page.getByRole('button', { name: 'Remove selected containers' }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await d.request('GET', '/containers/after-restart/json')).status, 404, 'the page drove the restarted daemon');
  });

  test('closing the page leaves nothing running in the daemon: no event listener, no stream', async () => {
    const listeners = async () => (await d.request('GET', '/info')).json<{ NEventsListener: number }>().NEventsListener;
    const id = (await containers()).find((c) => c.Names[0] === '/web')!.Id;
    await d.docker(['start', 'web']);
    await page.goto(`${base}/#/containers/${id}/stats`);
    await until('the page listens to events', async () => ((await listeners()) >= 1 ? true : undefined));
    await page.close();
    await until('no event listener once the page is gone', async () => ((await listeners()) === 0 ? true : undefined));
  });
});
