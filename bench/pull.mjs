// Pull benchmark: ~200 MB in 4 layers of incompressible data from a local registry, engined vs dockerd.
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
// Run after a build: bin/node bench/pull.mjs  (needs Debian's docker.io for the dockerd side)
// RUNS=n rounds (default 3), the order of the two daemons alternating each round; HOG=n runs n
// busy-looping processes meanwhile (a busy machine); ENGINE_PULL_UNPACK=service for the diff service.
const M = new URL('../dist', import.meta.url).pathname;
const { startRegistry, pushRawImage, sha256 } = await import(`${M}/test/helpers/registry.js`);
const { startDaemon, run } = await import(`${M}/test/helpers/daemon.js`);
const { tarToBuffer } = await import(`${M}/src/util/tar-writer.js`);
const { buildBusyboxLayer } = await import(`${M}/test/fixtures/busybox-image.js`);

const reg = await startRegistry();
const bb = await buildBusyboxLayer();
const diffIds = [];
const blobs = [];
for (let i = 0; i < 4; i++) {
  const tar = await tarToBuffer(async (tw) => { await tw.file(`layer${i}.bin`, randomBytes(50 << 20), { mtime: 1704067200 }); });
  diffIds.push(sha256(tar));
  blobs.push({ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', data: gzipSync(tar, { level: 1 }) });
}
const total = blobs.reduce((n, b) => n + b.data.length, 0);
await pushRawImage(`http://${reg.host}`, 'bench', 'v1', { config: { architecture: 'amd64', os: 'linux', config: { Cmd: ['sh'] }, rootfs: { type: 'layers', diff_ids: diffIds } }, layers: blobs });
console.log(`image: ${blobs.length} layers, ${(total / 1e6).toFixed(1)} MB compressed`);
const name = `${reg.host}/bench:v1`;
const RUNS = Number(process.env.RUNS ?? 3);


const d = await startDaemon({});
const { SupervisorClient } = await import(`${M}/src/supervisor/client.js`);
const engineRm = async () => {
  const r = await d.request('DELETE', `/images/${encodeURIComponent(name)}`);
  const c = new SupervisorClient(join(d.execRoot, 'containerd', 'containerd.sock'), { namespace: 'engine' });
  if (r.status !== 200) await c.images.delete(`${name}`, { sync: true }).catch(() => {});
  await c.withLease(async () => undefined, { sync: true });
  c.close();
};
const dir = await mkdtemp(join(tmpdir(), 'bench-dockerd-'));
const sock = join(dir, 'docker.sock');
await (await import('node:fs/promises')).writeFile(join(dir, 'daemon.json'), '{}');
const p = spawn('/usr/sbin/dockerd', ['--data-root', join(dir, 'data'), '--exec-root', join(dir, 'exec'), '--pidfile', join(dir, 'd.pid'), '-H', `unix://${sock}`, '--bridge=none', '--iptables=false', '--ip6tables=false', '--storage-driver=overlay2', '--config-file', join(dir, 'daemon.json')], { stdio: ['ignore', 'pipe', 'pipe'] });
let out = '';
p.stdout.on('data', (x) => out += x); p.stderr.on('data', (x) => out += x);
const dockerd = (a) => run('docker', a, { env: { ...process.env, DOCKER_HOST: `unix://${sock}`, DOCKER_CONFIG: join(dir, 'cfg') } });
for (let i = 0; ; i++) { const r = await dockerd(['version']); if (r.code === 0) break; if (i > 150) { console.log(out); throw new Error('dockerd did not start'); } await new Promise((r) => setTimeout(r, 200)); }
async function once(docker) {
  const t = process.hrtime.bigint();
  const r = await docker(['pull', name]);
  if (r.code !== 0) throw new Error(r.stderr);
  return Number(process.hrtime.bigint() - t) / 1e6;
}
const te = [], td = [];
const hogs = Array.from({ length: Number(process.env.HOG ?? 0) }, () => spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore' }));
try {
  for (let i = 0; i < RUNS; i++) {
    const load = (await import('node:os')).loadavg()[0].toFixed(1);
    const e = async () => { te.push(await once((a) => d.docker(a))); await engineRm(); };
    const k = async () => { td.push(await once(dockerd)); await dockerd(['rmi', name]); };
    if (i % 2 === 0) { await e(); await k(); } else { await k(); await e(); }
    console.log(`round ${i + 1} (load ${load}): engined ${te.at(-1).toFixed(0)} ms, dockerd ${td.at(-1).toFixed(0)} ms`);
  }
} finally {
  for (const h of hogs) h.kill('SIGKILL');
  p.kill('SIGTERM');
  await new Promise((r) => p.once('exit', r));
  await run('umount', ['-R', join(dir, 'data')]).catch(() => {});
  await rm(dir, { recursive: true, force: true }).catch(() => {});
  await d.cleanup();
  await reg.cleanup();
}
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log(`median engined ${med(te).toFixed(0)} ms, dockerd ${med(td).toFixed(0)} ms: ${(med(te) / med(td)).toFixed(2)}× (hogs: ${hogs.length}, load after ${(await import('node:os')).loadavg()[0].toFixed(1)})`);
