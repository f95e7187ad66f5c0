// Network set-up cost: `run --rm true` (CLI) and create→start→wait→delete (API) with the default
// bridge vs --network none, engined beside dockerd (given a bridge of its own, iptables on), taking
// turns. Build first, then: bin/node src/network/bench-setup-cost.mjs   (N=20 rounds by default;
// NO_DOCKERD=1 for engined alone). dockerd never removes its DOCKER* chains: its rules for the
// bench bridge are removed at the end, the chains too when nothing else uses them.
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { startDaemon, run, httpOverUnix } from '../../dist/test/helpers/daemon.js';
import { loadBusybox } from '../../dist/test/helpers/images.js';
import { buildBusyboxLayer } from '../../dist/test/fixtures/busybox-image.js';
const N = Number(process.env.N ?? 20), W = 3;
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const p90 = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length * 0.9)]; };
async function api(sock, method, path, body) {
  const r = await httpOverUnix(sock, method, path, body ? { body } : {});
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text()}`);
  return r;
}
let seq = 0;
async function lifecycle(sock, hc) {
  const t0 = performance.now();
  const id = (await api(sock, 'POST', `/containers/create?name=nb${process.pid}-${seq++}`, { Image: 'busybox', Cmd: ['true'], HostConfig: hc })).json().Id;
  await api(sock, 'POST', `/containers/${id}/start`);
  const w = (await api(sock, 'POST', `/containers/${id}/wait`)).json();
  if (w.StatusCode !== 0) throw new Error('exit ' + w.StatusCode);
  await api(sock, 'DELETE', `/containers/${id}`);
  return performance.now() - t0;
}
async function cli(host, dir, net) {
  const env = { ...process.env, DOCKER_HOST: host, DOCKER_CONFIG: join(dir, 'cfg') }; delete env.DOCKER_CONTEXT;
  const t0 = performance.now();
  const r = await run('docker', ['run', '--rm', '--network', net, 'busybox', 'true'], { env });
  if (r.code !== 0) throw new Error(r.stderr);
  return performance.now() - t0;
}
async function startDockerd() {
  const dir = await mkdtemp('/tmp/dockerd-net-');
  await writeFile(join(dir, 'daemon.json'), '{}\n');
  const sock = join(dir, 'docker.sock');
  // Its own bridge: dockerds started elsewhere with --bridge none delete docker0.
  await run('sh', ['-c', 'ip link add dkbench0 type bridge; ip addr add 10.238.0.1/16 dev dkbench0; ip link set dkbench0 up']);
  const child = spawn('dockerd', ['--bridge', 'dkbench0', '--data-root', join(dir, 'data'), '--exec-root', join(dir, 'exec'), '-H', `unix://${sock}`, '--pidfile', join(dir, 'docker.pid'), '--config-file', join(dir, 'daemon.json')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = ''; child.stdout.on('data', d => out += d); child.stderr.on('data', d => out += d);
  for (let i = 0; i < 300; i++) { try { if ((await httpOverUnix(sock, 'GET', '/_ping', { timeoutMs: 1000 })).status === 200) break; } catch {} await new Promise(r => setTimeout(r, 100)); }
  const { tar } = await buildBusyboxLayer();
  await writeFile(join(dir, 'bb.tar'), tar);
  const env = { ...process.env, DOCKER_HOST: `unix://${sock}`, DOCKER_CONFIG: join(dir, 'cfg') }; delete env.DOCKER_CONTEXT;
  const r = await run('docker', ['import', '--change', 'ENV PATH=/bin', '--change', 'CMD ["sh"]', join(dir, 'bb.tar'), 'busybox:latest'], { env });
  if (r.code) throw new Error(r.stderr + out);
  return { dir, sock, host: `unix://${sock}`, stop: async () => { child.kill('SIGTERM'); await new Promise(r => child.on('exit', r)); await run('sh', ['-c', `umount -R ${dir}/exec 2>/dev/null; umount -R ${dir}/data 2>/dev/null; rm -rf ${dir}; ip link del dkbench0`]); await dropDockerRules(); } };
}
/** Deletes dockerd's rules for the bench bridge, and its chains when only their skeleton is left. */
async function dropDockerRules() {
  const lines = (await run('iptables-save', [])).stdout.split('\n');
  const othersUse = lines.some((l) => /^-A DOCKER/.test(l) && !l.includes('dkbench0') && !/ -j RETURN$/.test(l));
  const script = { filter: [], nat: [] };
  let table = '';
  for (const line of lines) {
    if (line.startsWith('*')) table = line.slice(1);
    if (!line.startsWith('-A ') || !script[table]) continue;
    const ours = line.includes('dkbench0') || line.includes('10.238.0.0/16');
    const jump = /^-A (FORWARD|PREROUTING|OUTPUT|POSTROUTING) .*-j DOCKER/.test(line);
    if (ours || (jump && !othersUse)) script[table].push(line.replace(/^-A /, '-D '));
  }
  await run('iptables-restore', ['-w', '--noflush'], { input: ['*filter', ...script.filter, 'COMMIT', '*nat', ...script.nat, 'COMMIT', ''].join('\n') });
  if (!othersUse) await run('sh', ['-c', 'for c in DOCKER DOCKER-ISOLATION-STAGE-1 DOCKER-ISOLATION-STAGE-2 DOCKER-USER; do iptables -F $c; iptables -X $c; done 2>/dev/null; iptables -t nat -F DOCKER 2>/dev/null; iptables -t nat -X DOCKER 2>/dev/null; true']);
}

const d = await startDaemon({ env: { ENGINE_DEFAULT_BRIDGE: 'engbench0' } });
await loadBusybox(d);
const dk = process.env.NO_DOCKERD ? null : await startDockerd();
const res = {};
const add = (k, v) => (res[k] ??= []).push(v);
try {
  const cases = {
    'engined API none': () => lifecycle(d.socket, { NetworkMode: 'none' }),
    'engined API bridge': () => lifecycle(d.socket, {}),
    'engined run --rm none': () => cli(d.host, d.dir, 'none'),
    'engined run --rm bridge': () => cli(d.host, d.dir, 'bridge'),
    ...(dk ? {
      'dockerd API none': () => lifecycle(dk.sock, { NetworkMode: 'none' }),
      'dockerd API bridge': () => lifecycle(dk.sock, {}),
      'dockerd run --rm none': () => cli(dk.host, dk.dir, 'none'),
      'dockerd run --rm bridge': () => cli(dk.host, dk.dir, 'bridge'),
    } : {}),
  };
  for (let i = 0; i < N + W; i++) for (const [k, fn] of Object.entries(cases)) { const ms = await fn(); if (i >= W) add(k, ms); }
  for (const [k, v] of Object.entries(res)) console.log(`${k.padEnd(26)} median ${med(v).toFixed(0).padStart(4)} ms  p90 ${p90(v).toFixed(0).padStart(4)} ms  (n=${v.length})`);
} finally {
  await d.cleanup();
  if (dk) await dk.stop();
}
