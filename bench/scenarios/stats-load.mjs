// Daemon CPU while the docker CLI watches 100 running `sleep` containers: engined vs dockerd 20.10.
// CPU = utime+stime from /proc/<pid>/stat over a 30 s window, for the daemon, its containerd and
// the shims of its containers. Usage: node stats-load.mjs [engined|dockerd|both] [containers] [windowS]
// `containers` may be a rising list (`0,100,1000`): the same daemon grows to each count in turn and is
// measured at each, and the last lines give the cost per container between the counts (flat = the
// same per container at both).
import { readFileSync, readdirSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { Engined } from '../../dist/bench/targets/engined.js';
import { Dockerd } from '../../dist/bench/targets/dockerd.js';
import { run } from '../../dist/test/helpers/daemon.js';
import { rssMiB } from '../../dist/bench/lib/proc.js';

const which = process.argv[2] ?? 'both';
const COUNTS = String(process.argv[3] ?? 100).split(',').map(Number);
const WINDOW_S = Number(process.argv[4] ?? 30);
const HZ = 100;

function ticks(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime, stime (fields 14, 15)
  } catch { return 0; }
}
function shimPids(dir) {
  const out = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const cmd = readFileSync(`/proc/${e}/cmdline`, 'utf8');
      if (cmd.startsWith('/usr/bin/containerd-shim') || cmd.includes('containerd-shim-runc-v2')) { if (cmd.includes(dir)) out.push(Number(e)); }
    } catch {}
  }
  return out;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function pool(n, width, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => { while (next < n) await fn(next++); }));
}

async function measure(d, label, during) {
  const cd = d.containerdPid();
  const shims = shimPids(d.dir);
  const t0 = { d: ticks(d.pid), c: ticks(cd), s: shims.reduce((a, p) => a + ticks(p), 0) };
  const w0 = performance.now();
  const extra = await during(WINDOW_S * 1000);
  const secs = (performance.now() - w0) / 1000;
  const t1 = { d: ticks(d.pid), c: ticks(cd), s: shims.reduce((a, p) => a + ticks(p), 0) };
  const pct = (a, b) => (((b - a) / HZ) / secs * 100).toFixed(1);
  const row = { daemon: d.kind, scenario: label, secs: secs.toFixed(1), daemonCpuPct: pct(t0.d, t1.d), containerdCpuPct: pct(t0.c, t1.c), shimsCpuPct: pct(t0.s, t1.s), shims: shims.length, daemonRssMiB: rssMiB(d.pid).toFixed(0), containerdRssMiB: rssMiB(cd).toFixed(0), ...extra };
  console.log(JSON.stringify(row));
  return row;
}

async function bench(kind) {
  const { daemon: d } = kind === 'engined' ? await Engined.start() : await Dockerd.start();
  const env = { ...process.env, DOCKER_HOST: `unix://${d.socket}`, DOCKER_CONFIG: `${d.dir}/docker-config` };
  delete env.DOCKER_CONTEXT;
  const docker = (args, opts = {}) => run('docker', args, { env, ...opts });
  try {
    await d.loadBusybox();
    const byCount = [];
    let have = 0;
    for (const N of COUNTS) {
      const t0 = performance.now();
      const from = have;
      await pool(N - from, 6, async (k) => {
        const i = from + k;
        const r = await docker(['run', '-d', '--network', 'none', '--name', `s${i}`, 'busybox', 'sleep', '100000']);
        if (r.code !== 0) throw new Error(r.stderr);
      });
      have = N;
      console.error(`# ${kind}: ${N - from} more containers up in ${((performance.now() - t0) / 1000).toFixed(1)} s (${N} running); load ${loadavg()[0].toFixed(1)}`);
      await sleep(3000);
      const rows = [];
      rows.push(await measure(d, `idle, ${N} running`, (ms) => sleep(ms).then(() => ({}))));
      rows.push(await measure(d, `docker stats (stream), ${N} running`, async (ms) => {
        const child = spawn('docker', ['stats', '--format', '{{.Name}} {{.CPUPerc}} {{.MemUsage}}'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let lines = 0; let sample = '';
        child.stdout.on('data', (b) => { const s = b.toString(); lines += s.split('\n').filter((l) => /^s\d+ /.test(l)).length; sample = s; });
        child.stderr.on('data', (b) => process.stderr.write(b));
        await sleep(ms);
        child.kill('SIGINT');
        await new Promise((r) => child.on('close', r));
        return { rowsPrinted: lines, rowsPerSec: (lines / (ms / 1000)).toFixed(0) };
      }));
      rows.push(await measure(d, `docker stats --no-stream loop, ${N} running`, async (ms) => {
        const end = performance.now() + ms; let runs = 0; const lat = [];
        while (performance.now() < end) {
          const t = performance.now();
          const r = await docker(['stats', '--no-stream', '--format', '{{.Name}} {{.CPUPerc}}']);
          lat.push(performance.now() - t);
          if (r.code !== 0 || (N > 0 && r.stdout.trim().split('\n').length !== N)) console.error('no-stream output', r.code, r.stdout.split('\n').length, r.stderr);
          runs++;
        }
        lat.sort((a, b) => a - b);
        return { runs, medianRunMs: lat[lat.length >> 1].toFixed(0) };
      }));
      byCount.push({ N, rows });
    }
    // Cost per container at each count and between counts: flat when the two agree.
    for (let k = 1; k < byCount.length; k++) {
      const [a, b] = [byCount[k - 1], byCount[k]];
      const per = (f) => ({ [`at ${a.N}`]: f(a.rows), [`at ${b.N}`]: f(b.rows), [`per added container ${a.N}→${b.N}`]: ((f(b.rows) - f(a.rows)) / (b.N - a.N)).toFixed(4) });
      console.log(JSON.stringify({ daemon: d.kind, figure: 'daemon RSS MiB', ...per((r) => Number(r[0].daemonRssMiB)) }));
      console.log(JSON.stringify({ daemon: d.kind, figure: 'daemon CPU % idle', ...per((r) => Number(r[0].daemonCpuPct)) }));
      console.log(JSON.stringify({ daemon: d.kind, figure: 'daemon CPU % under docker stats', ...per((r) => Number(r[1].daemonCpuPct)) }));
      console.log(JSON.stringify({ daemon: d.kind, figure: 'containerd CPU % under docker stats', ...per((r) => Number(r[1].containerdCpuPct)) }));
      console.log(JSON.stringify({ daemon: d.kind, figure: 'containerd RSS MiB idle', ...per((r) => Number(r[0].containerdRssMiB)) }));
    }
    return byCount;
  } finally {
    await d.stop();
  }
}

const kinds = which === 'both' ? ['engined', 'dockerd'] : [which];
for (const k of kinds) await bench(k);
