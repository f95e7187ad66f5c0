// The read-back of a big json-file log taken apart (issue 16): where the time of
// GET /containers/{id}/logs goes, and the floors under it.
//   bin/node dist/bench/logs-read.js inproc [MiB]             phases in this process, on a file the driver writes
//   bin/node dist/bench/logs-read.js daemon [runs] [--prof DIR] a real engined: a container writes MiB, read back `runs` times
// inproc: block reads alone, the frames built and dropped, the frames written to a unix socket read by
// another process, and that socket's floor (the same byte count from one prebuilt buffer).
// daemon: wall and daemon CPU per read with this process's raw socket reader (its CPU shown) and with
// curl into /dev/null; --prof puts the daemon's V8 CPU profile (--cpu-prof) in DIR when it stops.

import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createLogDriver } from '../src/logging/index.ts';
import { api, drain } from './lib/http.ts';
import { cpuMs, loadAverage, threadCpu, threadDelta } from './lib/proc.ts';
import { createContainer, removeContainer } from './scenarios/api-lifecycle.ts';
import { Engined } from './targets/engined.ts';

const LINE = 'x'.repeat(99);

function cpuNow(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Runs fn, returning its wall and this process's CPU in ms. */
async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; cpu: number; value: T }> {
  const c0 = cpuNow();
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, cpu: cpuNow() - c0, value };
}

/**
 * A process that connects to the unix socket at path and reads it to the end into one reused
 * buffer (onread, as the bench's drain() does), discarding; prints the byte count.
 */
function sinkProcess(path: string): { pid: number; done: Promise<number> } {
  const code = `let n=0;const c=require('net').connect({path:${JSON.stringify(path)},onread:{buffer:Buffer.allocUnsafe(1<<20),callback:(k)=>{n+=k;return true}}});c.on('end',()=>process.stdout.write(String(n)))`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const done = new Promise<number>((resolve) => child.on('exit', () => resolve(Number(out))));
  return { pid: child.pid!, done };
}

/** Listens on path, starts the sink process, and hands its connection to fill; returns the sink's pid and byte count. */
async function toSink(
  path: string,
  fill: (sock: Socket) => Promise<void>,
): Promise<{ ms: number; cpu: number; sinkCpu: number; bytes: number }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(path, r));
  const accepted = new Promise<Socket>((r) => server.once('connection', r));
  const sink = sinkProcess(path);
  const sock = await accepted;
  server.close();
  const c0 = cpuMs(sink.pid);
  const r = await timed(async () => {
    await fill(sock);
    await new Promise<void>((res) => sock.end(res));
  });
  const sinkCpu = cpuMs(sink.pid) - c0;
  return { ms: r.ms, cpu: r.cpu, sinkCpu, bytes: await sink.done };
}

async function write(sock: Socket, b: Buffer): Promise<void> {
  if (!sock.write(b)) await new Promise((r) => sock.once('drain', r));
}

async function inproc(mib: number): Promise<void> {
  const total = mib * 1024 * 1024;
  const dir = await mkdtemp(join(tmpdir(), 'logs-read-'));
  try {
    const driver = createLogDriver('json-file', { containerId: 'bench', dir, options: {}, attrs: {} });
    // What `yes | head -c` through a FIFO gives: 64 KiB reads of 100-byte lines.
    const pattern = Buffer.from(`${LINE}\n`.repeat(Math.ceil((1024 * 1024 + 65536) / 100)));
    function* chunks(): Generator<Buffer> {
      for (let sent = 0, off = 0; sent < total;) {
        const n = Math.min(65536, total - sent);
        yield pattern.subarray(off, off + n);
        sent += n;
        off = (off + n) % (1024 * 1024);
      }
    }
    const w = await timed(() => driver.attach({ stdout: Readable.from(chunks(), { objectMode: false }) }));
    const file = driver.logPath;
    const size = (await stat(file)).size;
    console.log(`load ${loadAverage()}; ${mib} MiB of 100-byte lines → ${(size / 2 ** 20).toFixed(0)} MiB json-file`);
    console.log(`  write (encoder, in-process source): ${w.ms.toFixed(0)} ms, cpu ${w.cpu.toFixed(0)} ms`);
    const fmt = { tty: false, timestamps: false };
    const opts = { follow: false, stdout: true, stderr: true };

    for (const block of [256 * 1024, 1024 * 1024]) {
      const r = await timed(async () => {
        const h = await open(file, 'r');
        const buf = Buffer.allocUnsafe(block);
        let pos = 0;
        for (;;) {
          const { bytesRead } = await h.read(buf, 0, block, pos);
          if (bytesRead === 0) break;
          pos += bytesRead;
        }
        await h.close();
      });
      console.log(`  file reads alone (${block / 1024} KiB blocks, one buffer): ${r.ms.toFixed(0)} ms, cpu ${r.cpu.toFixed(0)} ms`);
    }
    for (let k = 0; k < 2; k++) {
      const r = await timed(async () => {
        let bytes = 0;
        for await (const frames of driver.readFrames!(opts, fmt)) for (const f of frames) bytes += f.length;
        return bytes;
      });
      console.log(`  frames built, dropped: ${r.ms.toFixed(0)} ms, cpu ${r.cpu.toFixed(0)} ms (${(r.value / 2 ** 20).toFixed(1)} MiB)`);
    }
    let wire = 0;
    for (let k = 0; k < 2; k++) {
      const r = await toSink(join(dir, `sink${k}.sock`), async (sock) => {
        // As the logs route writes: one batch in flight (the read reuses its blocks).
        let inFlight: Promise<void> = Promise.resolve();
        for await (const frames of driver.readFrames!(opts, fmt)) {
          let ok = true;
          for (let i = 0; i < frames.length - 1; i++) ok = sock.write(frames[i]!) && ok;
          const flushed = new Promise<void>((res) => (ok = sock.write(frames[frames.length - 1]!, () => res()) && ok));
          if (!ok) await new Promise((res) => sock.once('drain', res));
          await inFlight;
          inFlight = flushed;
        }
      });
      wire = r.bytes;
      console.log(
        `  frames → unix socket → reader process: ${r.ms.toFixed(0)} ms, cpu ${r.cpu.toFixed(0)} ms (reader ${r.sinkCpu.toFixed(0)} ms, ${(wire / 2 ** 20).toFixed(1)} MiB)`,
      );
    }
    for (const block of [256 * 1024, 1024 * 1024]) {
      const buf = Buffer.alloc(block, 0x61);
      const r = await toSink(join(dir, `floor${block}.sock`), async (sock) => {
        for (let sent = 0; sent < wire; sent += block) await write(sock, sent + block <= wire ? buf : buf.subarray(0, wire - sent));
      });
      console.log(
        `  floor: the same bytes in ${block / 1024} KiB writes → socket → reader: ${r.ms.toFixed(0)} ms, cpu ${r.cpu.toFixed(0)} ms (reader ${r.sinkCpu.toFixed(0)} ms)`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function curlOnce(socket: string, path: string): { ms: number; cpu: number } {
  const r = spawnSync('bash', ['-c', `TIMEFORMAT='%R %U %S'; time curl -s -o /dev/null --unix-socket ${socket} 'http://engine${path}'`], {
    encoding: 'utf8',
  });
  const [real, user, sys] = r.stderr.trim().split(/\s+/).map(Number) as [number, number, number];
  return { ms: real * 1000, cpu: (user + sys) * 1000 };
}

async function daemon(runs: number, profDir: string | undefined): Promise<void> {
  const env = profDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir}` } : undefined;
  const { daemon: d } = await Engined.start(env);
  try {
    await d.loadBusybox();
    const bytes = 256 * 1024 * 1024;
    const id = await createContainer(d, ['sh', '-c', `yes ${LINE} | head -c ${bytes}`], {
      NetworkMode: 'none',
      LogConfig: { Type: 'json-file', Config: {} },
    });
    const dc0 = cpuMs(d.pid);
    const th0 = threadCpu(d.pid);
    const t0 = performance.now();
    await api(d.socket, 'POST', `/containers/${id}/start`, undefined, [204]);
    await api(d.socket, 'POST', `/containers/${id}/wait`, undefined, [200]);
    console.log(
      `load ${loadAverage()}; write 256 MiB: ${(performance.now() - t0).toFixed(0)} ms, daemon cpu ${(cpuMs(d.pid) - dc0).toFixed(0)} ms (threads: ${threadDelta(th0, threadCpu(d.pid)).text})`,
    );
    const path = `/containers/${id}/logs?stdout=1&stderr=1`;
    for (let k = 0; k < runs; k++) {
      const c0 = cpuMs(d.pid);
      const th0 = threadCpu(d.pid);
      const r = await timed(() => drain(d.socket, path));
      const dcpu = cpuMs(d.pid) - c0;
      const threads = threadDelta(th0, threadCpu(d.pid)).text;
      const c1 = cpuMs(d.pid);
      const cr = curlOnce(d.socket, path);
      const dcpu2 = cpuMs(d.pid) - c1;
      console.log(
        `  read ${k + 1} (load ${loadAverage()}): raw node reader ${r.ms.toFixed(0)} ms, daemon cpu ${dcpu.toFixed(0)} ms, reader cpu ${r.cpu.toFixed(0)} ms, ${(r.value.bytes / 2 ** 20).toFixed(1)} MiB` +
          ` (threads: ${threads}) | curl → /dev/null ${cr.ms.toFixed(0)} ms, daemon cpu ${dcpu2.toFixed(0)} ms, curl cpu ${cr.cpu.toFixed(0)} ms`,
      );
    }
    await removeContainer(d, id);
  } finally {
    await d.stop();
  }
}

const [mode = 'inproc', ...rest] = process.argv.slice(2);
const prof = rest.indexOf('--prof');
const profDir = prof >= 0 ? rest.splice(prof, 2)[1] : undefined;
if (mode === 'inproc') await inproc(Number(rest[0] ?? 256));
else if (mode === 'daemon') await daemon(Number(rest[0] ?? 3), profDir);
else throw new Error(`unknown mode ${mode}`);
