// The web console's goals (issue 28), measured on a real daemon and Debian's chromium (headless):
//   - assets: the gzipped bytes the page loads (goal ≤ 300 KiB);
//   - idle cost: engined's RSS settled after start-up, without and with --console-addr and no
//     browser (goal ≤ +2 MiB), runs interleaved;
//   - with N created containers (1 000 by default): navigation start → the containers table shown
//     with every row counted and its first rows in the DOM, and a search keystroke → the filtered
//     table (goal: interactive ≤ 300 ms after load);
//   - a state change: the daemon's event time (timeNano, same host clock) → the row's state in the
//     page's DOM, for starts and kills of a container in view (goal ≤ 100 ms).
//
//   bin/node dist/bench/console.js [--containers N] [--loads N] [--changes N] [--rss-runs N] [--settle S]
import { readdirSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { browserMissing, launchChromium } from '../test/helpers/browser.ts';
import { REPO_ROOT, startDaemon, type TestDaemon } from '../test/helpers/daemon.ts';
import { loadBusybox } from '../test/helpers/images.ts';
import { freePort } from '../test/helpers/ports.ts';
import { rssMiB } from './lib/proc.ts';
import { median } from './lib/stats.ts';

function opt(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
}
const N = opt('containers', 1000);
const LOADS = opt('loads', 5);
const CHANGES = opt('changes', 10);
const RSS_RUNS = opt('rss-runs', 3);
const SETTLE_S = opt('settle', 8);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const fmt = (xs: number[]) => `median ${median(xs).toFixed(1)}, min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)}`;

function assetSizes(): { files: Record<string, number>; totalKiB: number } {
  const dir = join(REPO_ROOT, 'dist/console');
  const files: Record<string, number> = {};
  for (const name of readdirSync(dir)) if (name.endsWith('.gz')) files[name] = statSync(join(dir, name)).size;
  return { files, totalKiB: Object.values(files).reduce((a, b) => a + b, 0) / 1024 };
}

async function idleRss(withConsole: boolean): Promise<number> {
  const args = withConsole ? ['--console-addr', `127.0.0.1:${await freePort()}`] : [];
  const d = await startDaemon({ args });
  try {
    await sleep(SETTLE_S * 1000);
    return rssMiB(d.child.pid);
  } finally {
    await d.cleanup();
  }
}

/** The daemon's own event stream, from node: the timeNano of each container event, by id and action. */
function watchEvents(d: TestDaemon, seen: Map<string, number>): () => void {
  const req = request({ socketPath: d.socket, path: '/events?filters=' + encodeURIComponent('{"type":["container"]}') }, (res) => {
    let rest = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      for (const l of lines) {
        if (!l.trim()) continue;
        const e = JSON.parse(l) as { Action: string; Actor: { ID: string }; timeNano: number };
        seen.set(`${e.Actor.ID} ${e.Action}`, e.timeNano / 1e6);
      }
    });
  });
  req.on('error', () => undefined); // cut at the end of the bench
  req.end();
  return () => req.destroy();
}

async function main(): Promise<void> {
  const missing = browserMissing();
  if (missing) throw new Error(missing);
  const sizes = assetSizes();
  console.log(`assets (gzipped): ${JSON.stringify(sizes.files)} total ${sizes.totalKiB.toFixed(1)} KiB (goal ≤ 300)`);

  const rss: { without: number[]; with: number[] } = { without: [], with: [] };
  for (let i = 0; i < RSS_RUNS; i++) {
    for (const w of i % 2 ? [true, false] : [false, true]) (w ? rss.with : rss.without).push(await idleRss(w));
    console.log(`idle RSS run ${i + 1}: without ${rss.without.at(-1)!.toFixed(1)} MiB, with ${rss.with.at(-1)!.toFixed(1)} MiB`);
  }
  if (RSS_RUNS > 0)
    console.log(
      `idle RSS after ${SETTLE_S} s: without --console-addr ${fmt(rss.without)} MiB; with ${fmt(rss.with)} MiB; difference of medians ${(median(rss.with) - median(rss.without)).toFixed(2)} MiB (goal ≤ 2)`,
    );

  const port = await freePort();
  const d = await startDaemon({ args: ['--console-addr', `127.0.0.1:${port}`] });
  const browser = await launchChromium();
  const seen = new Map<string, number>();
  const stopEvents = watchEvents(d, seen);
  try {
    await loadBusybox(d);
    const t0 = Date.now();
    let made = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (made < N) {
          made++;
          const r = await d.request('POST', '/containers/create', { body: { Image: 'busybox', Cmd: ['sleep', '3600'] } });
          if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text()}`);
        }
      }),
    );
    console.log(`${N} containers created in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`http://127.0.0.1:${port}/#/overview`); // the session cookie, and the browser's cache warm

    const shown: number[] = [];
    const filtered: number[] = [];
    const phases: Record<string, number[]> = { 'app.js': [], 'containers/json': [] };
    for (let i = 0; i < LOADS; i++) {
      await page.goto('about:blank');
      await page.goto(`http://127.0.0.1:${port}/#/containers`);
      const at = await page.waitForFunction(
        (n) =>
          document.querySelector('[data-testid=row-count]')?.textContent === `${n} shown` &&
          document.querySelectorAll('.vbody .vrow').length > 0 &&
          performance.now(),
        N,
        { polling: 'raf' },
      );
      shown.push((await at.jsonValue()) as number);
      const ends = await page.evaluate(() =>
        performance
          .getEntriesByType('resource')
          .map((e) => [(e as PerformanceResourceTiming).name, (e as PerformanceResourceTiming).responseEnd] as const),
      );
      for (const [name, end] of ends) {
        if (name.endsWith('/app.js')) phases['app.js']!.push(end);
        if (name.includes('/containers/json?all=1')) phases['containers/json']!.push(end);
      }
      const rows = await page.locator('.vbody .vrow').count();
      // Interactive: a search keystroke, to the filtered table on screen.
      const ms = await page.evaluate(async () => {
        const input = document.querySelector<HTMLInputElement>('input[type=search]')!;
        const start = performance.now();
        input.value = 'zzz-none';
        input.dispatchEvent(new Event('input', { bubbles: true }));
        for (;;) {
          await new Promise(requestAnimationFrame);
          if (document.querySelector('[data-testid=row-count]')?.textContent === '0 shown') return performance.now() - start;
        }
      });
      filtered.push(ms);
      if (i === 0) console.log(`rows in the DOM for ${N} containers: ${rows}`);
    }
    console.log(`containers page, navigation start → table with all ${N} counted and rows drawn: ${fmt(shown)} ms (goal ≤ 300)`);
    for (const [what, xs] of Object.entries(phases)) if (xs.length) console.log(`  of which ${what} received at: ${fmt(xs)} ms`);
    console.log(`search keystroke → filtered table drawn: ${fmt(filtered)} ms`);

    // State changes of the newest container (the table's first row).
    await page.goto('about:blank');
    await page.goto(`http://127.0.0.1:${port}/#/containers`);
    await page.waitForFunction((n) => document.querySelector('[data-testid=row-count]')?.textContent === `${n} shown`, N);
    const id = await page.locator('.vbody .vrow').first().getAttribute('data-id');
    await page.evaluate((cid) => {
      const w = window as unknown as { changes: Array<{ state: string; at: number }> };
      w.changes = [];
      new MutationObserver(() => {
        const row = document.querySelector(`.vrow[data-id="${cid}"]`);
        const state = row?.getAttribute('data-state') ?? '';
        if (state !== w.changes.at(-1)?.state) w.changes.push({ state, at: Date.now() });
      }).observe(document.querySelector('.vbody')!, { subtree: true, attributes: true, attributeFilter: ['data-state'], childList: true });
    }, id);
    const latency: number[] = [];
    for (let i = 0; i < CHANGES; i++) {
      for (const [action, path, state] of [
        ['start', 'start', 'running'],
        ['die', 'kill', 'exited'],
      ] as const) {
        seen.clear();
        await d.request('POST', `/containers/${id}/${path}`);
        const handle = await page.waitForFunction(
          (s) => (window as unknown as { changes: Array<{ state: string; at: number }> }).changes.findLast((c) => c.state === s)?.at,
          state,
          { timeout: 10_000 },
        );
        const domAt = (await handle.jsonValue()) as number;
        await page.evaluate(() => ((window as unknown as { changes: unknown[] }).changes.length = 0));
        for (let k = 0; k < 100 && !seen.has(`${id} ${action}`); k++) await sleep(10);
        const eventAt = seen.get(`${id} ${action}`);
        if (eventAt !== undefined) latency.push(domAt - eventAt);
        await sleep(200);
      }
    }
    console.log(`event (daemon timeNano) → row state in the DOM, ${latency.length} changes: ${fmt(latency)} ms (goal ≤ 100)`);
    const rssAfter = rssMiB(d.child.pid);
    console.log(`engined RSS with ${N} containers and the page open: ${rssAfter.toFixed(1)} MiB`);
  } finally {
    stopEvents();
    await browser.close();
    await d.cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
