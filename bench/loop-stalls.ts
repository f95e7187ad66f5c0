// The longest synchronous stretch of the daemon's event loop per request at the body limits (issue 12:
// /_ping within 50 ms while any other request runs). The daemon runs with ENGINE_DEBUG_LOOP_STALL_MS,
// so it logs every loop turn longer than that with the requests in flight; each request here runs
// alone while /_ping is polled, and the report gives the longest stall logged during it, the CPU time
// the loop's thread used in its longest stall (the synchronous work itself: on a loaded shared
// machine most of a stall's wall time is other processes' turn) and the slowest /_ping (wall clock).
// Usage, after a build: bin/node dist/bench/loop-stalls.js [containers=2000] [--bodies=labels,env,string]
// [--cpu-prof=<dir>] (containers=0 skips the many-containers part)
import { loadavg } from 'node:os';
import { MAX_JSON_BODY } from '../src/api/http.ts';
import { MAX_ARRAY_ENTRIES, MAX_MAP_ENTRIES } from '../src/oci/wire-schema.ts';
import { startDaemon, type HttpResult, type RequestOptions } from '../test/helpers/daemon.ts';
import { loadBusybox } from '../test/helpers/images.ts';

const many = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 2000);
const only = process.argv
  .find((a) => a.startsWith('--bodies='))
  ?.slice('--bodies='.length)
  .split(',');
// --cpu-prof=<dir>: also a V8 CPU profile of the daemon (written when it stops), for attribution.
const prof = process.argv.find((a) => a.startsWith('--cpu-prof='))?.slice('--cpu-prof='.length);
const d = await startDaemon({
  env: { ENGINE_DEBUG_LOOP_STALL_MS: '5', ...(prof ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${prof} --cpu-prof-interval=200` } : {}) },
});
const rows: Array<[string, number, number, number, string]> = [];

/** Runs one request while /_ping is polled; records the longest loop stall logged and the slowest ping. */
async function measure(name: string, method: string, path: string, opts: RequestOptions = {}): Promise<HttpResult> {
  await new Promise((r) => setTimeout(r, 100));
  const mark = d.output.length;
  const req = d.request(method, path, { timeoutMs: 120_000, ...opts });
  let done = false;
  void req.finally(() => (done = true)).catch(() => undefined);
  let ping = 0;
  while (!done) {
    const t = performance.now();
    await d.request('GET', '/_ping');
    ping = Math.max(ping, performance.now() - t);
  }
  const r = await req;
  await new Promise((res) => setTimeout(res, 100));
  let stall = 0;
  let cpu = 0;
  for (const line of d.output.slice(mark).split('\n')) {
    const m = /event loop stalled.*?\bms=([\d.]+).*?\bcpuMs=([\d.]+)/.exec(line);
    if (m) {
      stall = Math.max(stall, Number(m[1]));
      cpu = Math.max(cpu, Number(m[2]));
    }
  }
  rows.push([name, stall, cpu, Math.round(ping), loadavg()[0]!.toFixed(1)]);
  if (r.status >= 300) throw new Error(`${name}: ${r.status} ${r.text().slice(0, 300)}`);
  return r;
}

const json = (body: unknown): RequestOptions => ({
  body: Buffer.from(JSON.stringify(body)),
  headers: { 'Content-Type': 'application/json' },
});

try {
  await loadBusybox(d);
  const bodies: Array<[string, Record<string, unknown>]> = [
    [
      'labels',
      { Image: 'busybox', Labels: Object.fromEntries(Array.from({ length: MAX_MAP_ENTRIES }, (_v, i) => [`l.key.${i}`, `v${i}`])) },
    ],
    ['env', { Image: 'busybox', Env: Array.from({ length: MAX_ARRAY_ENTRIES }, (_v, i) => `V${i}=${i}`) }],
    ['string', { Image: 'busybox', Labels: { big: 'x'.repeat(MAX_JSON_BODY - 1024) } }],
  ];
  for (const [name, body] of bodies) {
    if (only && !only.includes(name)) continue;
    const since = Math.floor(Date.now() / 1000);
    const c = await measure(`create (${name})`, 'POST', '/containers/create', json(body));
    const id = c.json<{ Id: string }>().Id;
    await measure(`inspect (${name})`, 'GET', `/containers/${id}/json`);
    await measure(`list (${name})`, 'GET', '/containers/json?all=1');
    await measure(`events of the create (${name})`, 'GET', `/events?since=${since}&until=${Math.floor(Date.now() / 1000) + 1}`);
    // An image whose config carries the container's (commit keeps its labels and Env).
    await measure(`commit (${name})`, 'POST', `/commit?container=${id}&repo=big&tag=${name}`, json({}));
    await measure(`image inspect (${name})`, 'GET', `/images/big:${name}/json`);
    await measure(`image history (${name})`, 'GET', `/images/big:${name}/history`);
    await measure(`image list (${name})`, 'GET', '/images/json');
    await measure(`image rm (${name})`, 'DELETE', `/images/big:${name}`);
    await measure(`rm (${name})`, 'DELETE', `/containers/${id}`);
  }
  // A 4 MiB line in the log.
  const l = await d.request(
    'POST',
    '/containers/create',
    json({ Image: 'busybox', Cmd: ['sh', '-c', 'head -c 4194304 /dev/zero | tr "\\0" x; echo'] }),
  );
  const lid = l.json<{ Id: string }>().Id;
  await d.request('POST', `/containers/${lid}/start`);
  await d.request('POST', `/containers/${lid}/wait`, { timeoutMs: 60_000 });
  await measure('logs of a 4 MiB line', 'GET', `/containers/${lid}/logs?stdout=1&stderr=1`);
  await measure('logs of a 4 MiB line (timestamps)', 'GET', `/containers/${lid}/logs?stdout=1&timestamps=1`);
  await d.request('DELETE', `/containers/${lid}`);
  // Many containers.
  if (many > 0) await manyContainers();
} finally {
  console.log('request | longest loop stall (ms) | most CPU in one stall (ms) | slowest /_ping (ms) | load');
  for (const [name, stall, cpu, ping, load] of rows) console.log(`${name} | ${stall} | ${cpu} | ${ping} | ${load}`);
  await d.cleanup();
}

/** docker ps, its filters, the events replay and a prune with `many` containers. */
async function manyContainers(): Promise<void> {
  for (let i = 0; i < many; i++) {
    const r = await d.request('POST', '/containers/create', json({ Image: 'busybox', Labels: { n: String(i), app: 'bench' } }));
    if (r.status !== 201) throw new Error(`create ${i}: ${r.status}`);
  }
  await measure(`list of ${many} containers`, 'GET', '/containers/json?all=1');
  await measure(
    `list of ${many} containers (filtered)`,
    'GET',
    `/containers/json?all=1&filters=${encodeURIComponent('{"label":["app=bench"]}')}`,
  );
  await measure(`events of ${many} creates`, 'GET', `/events?since=0&until=${Math.floor(Date.now() / 1000) + 1}`);
  await measure(`prune of ${many} containers`, 'POST', '/containers/prune', { timeoutMs: 600_000 }); // containerd, under load
}
