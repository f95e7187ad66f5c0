// Issue 6, part 5: GET /containers/{id}/stats — stream, stream=false and one-shot in dockerd's wire
// shape (ContainerStatsResponse), values that move with the container's work, and the docker CLI's
// percentages computed from them.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { totalmem } from 'node:os';
import { after, before, describe, test } from 'node:test';
import { run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { apiSpecMissing, definition, validate } from '../helpers/openapi.ts';

const ZERO_TIME = '0001-01-01T00:00:00Z';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function schemaErrors(frame: unknown): string[] {
  return apiSpecMissing() ? [] : validate(frame, definition('ContainerStatsResponse'));
}

interface StreamRead {
  status: number;
  frames: any[];
  /** ms from the request to each frame. */
  at: number[];
  /** Whether the server ended the response (rather than us cutting it). */
  ended: boolean;
}

/** Reads NDJSON frames from a stats stream until `count` arrived, the server ends it, or the timeout. */
function readStream(
  socketPath: string,
  path: string,
  count: number,
  timeoutMs = 15_000,
  onFrame?: (n: number) => void,
): Promise<StreamRead> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const out: StreamRead = { status: 0, frames: [], at: [], ended: false };
    let timer: NodeJS.Timeout;
    const req = httpRequest({ socketPath, method: 'GET', path }, (res) => {
      out.status = res.statusCode ?? 0;
      let buf = '';
      const done = () => {
        clearTimeout(timer);
        req.destroy();
        resolve(out);
      };
      timer = setTimeout(done, timeoutMs);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (!line.trim()) continue;
          out.frames.push(JSON.parse(line));
          out.at.push(performance.now() - t0);
          onFrame?.(out.frames.length);
          if (out.frames.length >= count) return done();
        }
      });
      res.on('end', () => {
        out.ended = true;
        done();
      });
      res.on('error', () => done());
    });
    req.on('error', reject);
    req.end();
  });
}

const cpuPercent = (f: any) => {
  const cpuDelta = f.cpu_stats.cpu_usage.total_usage - f.precpu_stats.cpu_usage.total_usage;
  const sysDelta = f.cpu_stats.system_cpu_usage - f.precpu_stats.system_cpu_usage;
  return sysDelta > 0 && cpuDelta > 0 ? (cpuDelta / sysDelta) * f.cpu_stats.online_cpus * 100 : 0;
};

describe('container stats', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
    const burn = await d.docker(['run', '-d', '--name', 'burn', 'busybox', 'sh', '-c', 'while true; do :; done']);
    assert.equal(burn.code, 0, burn.stderr);
    const idle = await d.docker(['run', '-d', '--name', 'idle', '-m', '64m', 'busybox', 'sleep', '1000']);
    assert.equal(idle.code, 0, idle.stderr);
  });
  after(async () => d?.cleanup());

  test('unknown containers are 404 in every mode', async () => {
    for (const q of ['', '?stream=false', '?stream=false&one-shot=true']) {
      const r = await d.request('GET', `/containers/nope/stats${q}`);
      assert.equal(r.status, 404, q);
      assert.equal(r.json().message, 'No such container: nope');
    }
  });

  test('stream=false: one frame, precpu filled from an earlier reading, conforming to the API description', async () => {
    const r = await d.request('GET', '/containers/burn/stats?stream=false');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /application\/json/);
    assert.ok(r.text().endsWith('}\n') && r.text().indexOf('\n') === r.text().length - 1, 'exactly one JSON line');
    const f = r.json();
    assert.deepEqual(schemaErrors(f), []);
    assert.equal(f.name, '/burn');
    assert.match(f.id, /^[0-9a-f]{64}$/);
    assert.notEqual(f.read, ZERO_TIME);
    assert.notEqual(f.preread, ZERO_TIME);
    const gapMs = Date.parse(f.read) - Date.parse(f.preread);
    assert.ok(gapMs >= 250, `read − preread = ${gapMs} ms`);
    assert.ok(f.precpu_stats.system_cpu_usage > 0);
    assert.ok(f.precpu_stats.online_cpus > 0);
    assert.ok(f.cpu_stats.system_cpu_usage > f.precpu_stats.system_cpu_usage);
    assert.ok(f.cpu_stats.cpu_usage.total_usage > f.precpu_stats.cpu_usage.total_usage, 'a busy loop uses CPU between the readings');
    assert.ok(f.pids_stats.current >= 1);
    assert.ok(f.memory_stats.usage > 0);
    assert.ok(f.memory_stats.limit > 0 && f.memory_stats.limit <= totalmem(), "no limit reads as the host's memory");
    assert.ok('inactive_file' in f.memory_stats.stats);
    assert.ok(Array.isArray(f.blkio_stats.io_service_bytes_recursive) || f.blkio_stats.io_service_bytes_recursive === null);
    assert.equal(f.num_procs, 0);
    assert.deepEqual(f.storage_stats, {});
    assert.ok(cpuPercent(f) > 5, `CPU % of a busy loop: ${cpuPercent(f)}`);
  });

  test("docker stats --no-stream shows the busy loop's CPU and the -m limit", async () => {
    const r = await d.docker([
      'stats',
      '--no-stream',
      '--format',
      '{{.Name}} {{.CPUPerc}} {{.MemUsage}} {{.MemPerc}} {{.PIDs}}',
      'burn',
      'idle',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const rows = new Map(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => [l.split(' ')[0]!, l]),
    );
    const burn = /^burn ([\d.]+)% (\S+) \/ (\S+) ([\d.]+)% (\d+)$/.exec(rows.get('burn') ?? '');
    assert.ok(burn, r.stdout);
    assert.ok(Number(burn[1]) > 10, `busy loop CPU % ${burn[1]}`);
    assert.ok(Number(burn[5]) >= 1);
    const idle = /^idle ([\d.]+)% (\S+) \/ 64MiB ([\d.]+)% (\d+)$/.exec(rows.get('idle') ?? '');
    assert.ok(idle, r.stdout);
    assert.ok(Number(idle[1]) < 10, `sleep CPU % ${idle[1]}`);
    assert.ok(Number(idle[3]) > 0 && Number(idle[3]) < 50, `MEM % ${idle[3]}`);
  });

  test('memory limit and pids in the frame of a -m 64m container', async () => {
    const f = (await d.request('GET', '/containers/idle/stats?stream=false')).json();
    assert.equal(f.memory_stats.limit, 64 * 1024 * 1024);
    assert.ok(f.memory_stats.usage > 0 && f.memory_stats.usage < 64 * 1024 * 1024);
    assert.ok(f.pids_stats.current >= 1);
  });

  test('stream: a frame a second, each with precpu (the first too), counters growing', async () => {
    const s = await readStream(d.socket, '/containers/burn/stats', 3);
    assert.equal(s.status, 200);
    assert.equal(s.frames.length, 3);
    assert.ok(s.at[0]! < 2000, `first frame after ${s.at[0]} ms`);
    for (const [i, f] of s.frames.entries()) {
      assert.deepEqual(schemaErrors(f), [], `frame ${i}`);
      assert.notEqual(f.preread, ZERO_TIME, `frame ${i} preread`);
      assert.ok(f.precpu_stats.system_cpu_usage > 0, `frame ${i} precpu`);
      assert.ok(f.cpu_stats.cpu_usage.total_usage > f.precpu_stats.cpu_usage.total_usage, `frame ${i} CPU grows`);
      if (i > 0) {
        assert.deepEqual(f.precpu_stats, s.frames[i - 1].cpu_stats, "precpu is the previous frame's cpu");
        assert.equal(f.preread, s.frames[i - 1].read);
        // The first frame may be an extra reading taken when the request came; then the ticks.
        const gap = Date.parse(f.read) - Date.parse(s.frames[i - 1].read);
        assert.ok(gap >= (i === 1 ? 250 : 700) && gap <= 1800, `frames ${i - 1} and ${i} ${gap} ms apart`);
      }
    }
  });

  test('streams of one container share the readings', async () => {
    const [a, b] = await Promise.all([
      readStream(d.socket, '/containers/idle/stats', 3),
      readStream(d.socket, '/containers/idle/stats', 3),
    ]);
    const readsA = new Set(a.frames.slice(1).map((f) => f.read));
    assert.ok(
      b.frames.slice(1).some((f) => readsA.has(f.read)),
      'both streams carry the same reading',
    );
  });

  test('one-shot: a single immediate reading, precpu and preread zero', async () => {
    const t0 = performance.now();
    const r = await d.request('GET', '/containers/burn/stats?stream=false&one-shot=true');
    const ms = performance.now() - t0;
    assert.equal(r.status, 200);
    const f = r.json();
    assert.deepEqual(schemaErrors(f), []);
    assert.ok(ms < 900, `one-shot took ${ms} ms`);
    assert.notEqual(f.read, ZERO_TIME);
    assert.equal(f.preread, ZERO_TIME);
    assert.deepEqual(f.precpu_stats, {
      cpu_usage: { total_usage: 0, usage_in_kernelmode: 0, usage_in_usermode: 0 },
      throttling_data: { periods: 0, throttled_periods: 0, throttled_time: 0 },
    });
    assert.ok(f.cpu_stats.cpu_usage.total_usage > 0);
    assert.ok(f.cpu_stats.system_cpu_usage > 0);
    const both = await d.request('GET', '/containers/burn/stats?stream=true&one-shot=true');
    assert.equal(both.status, 400);
    assert.equal(both.json().message, 'cannot have stream=true and one-shot=true');
    // Before API 1.41 one-shot does not exist: the two-reading answer comes back.
    const old = (await d.request('GET', '/v1.40/containers/burn/stats?stream=false&one-shot=true')).json();
    assert.notEqual(old.preread, ZERO_TIME);
  });

  test('a container that is not running: zeros with name and id; its stream ends when it is removed', async () => {
    const c = await d.docker(['create', '--name', 'cold', 'busybox', 'true']);
    assert.equal(c.code, 0, c.stderr);
    const r = await d.request('GET', '/containers/cold/stats?stream=false');
    assert.equal(r.status, 200);
    const f = r.json();
    assert.deepEqual(schemaErrors(f), []);
    assert.equal(f.read, ZERO_TIME);
    assert.equal(f.name, '/cold');
    assert.equal(f.id, c.stdout.trim());
    assert.deepEqual(f.memory_stats, {});
    assert.deepEqual(f.pids_stats, {});
    assert.equal(f.blkio_stats.io_service_bytes_recursive, null);
    assert.equal(f.networks, undefined);

    // A running container's stream goes on with zero frames once it stops, and ends at its removal.
    const run1 = await d.docker(['run', '-d', '--name', 'brief', 'busybox', 'sleep', '1000']);
    assert.equal(run1.code, 0, run1.stderr);
    // The stream ends when the removal happens, which may be before the CLI doing it has exited.
    let rmStarted = 0;
    let rmDone: Promise<number> | undefined;
    const streamed = readStream(d.socket, '/containers/brief/stats', 100, 20_000, (n) => {
      if (n === 1)
        rmDone = d
          .docker(['stop', '-t', '0', 'brief'])
          .then(() => sleep(2500))
          .then(() => (rmStarted = performance.now()))
          .then(() => d.docker(['rm', 'brief']))
          .then(() => performance.now());
    });
    const s = await streamed;
    const endedAt = performance.now();
    assert.ok(s.ended, 'the server ends the stream');
    assert.ok(rmDone, 'the removal was started');
    const removedAt = await rmDone;
    assert.ok(rmStarted > 0 && endedAt >= rmStarted, 'the stream went on until the removal');
    assert.ok(endedAt - removedAt < 3000, 'soon after the removal');
    assert.notEqual(s.frames[0].read, ZERO_TIME);
    assert.ok(
      s.frames.some((x) => x.read === ZERO_TIME && x.name === '/brief'),
      'zero frames while stopped',
    );
    await d.docker(['rm', 'cold']);
  });

  test('networks: left out without interfaces besides lo (and for host networking); listed per interface otherwise', async () => {
    const none = await d.docker(['run', '-d', '--name', 'nonet', '--network', 'none', 'busybox', 'sleep', '1000']);
    assert.equal(none.code, 0, none.stderr);
    const f0 = (await d.request('GET', '/containers/nonet/stats?stream=false')).json();
    assert.equal('networks' in f0, false, JSON.stringify(f0.networks));
    const host = await d.docker(['run', '-d', '--name', 'hostnet', '--network', 'host', 'busybox', 'sleep', '1000']);
    assert.equal(host.code, 0, host.stderr);
    const fh = (await d.request('GET', '/containers/hostnet/stats?stream=false&one-shot=true')).json();
    assert.equal('networks' in fh, false);

    // A veth pair inside the container's namespace shows up, with its traffic.
    const pid = JSON.parse((await d.docker(['inspect', 'nonet'])).stdout)[0].State.Pid;
    for (const cmd of [
      ['ip', 'link', 'add', 'st0', 'type', 'veth', 'peer', 'name', 'st1'],
      ['ip', 'link', 'set', 'st0', 'up'],
      ['ip', 'link', 'set', 'st1', 'up'],
      ['ip', 'addr', 'add', '10.99.0.1/24', 'dev', 'st0'],
    ]) {
      const r = await run('nsenter', ['-t', String(pid), '-n', ...cmd]);
      assert.equal(r.code, 0, `${cmd.join(' ')}: ${r.stderr}`);
    }
    await run('nsenter', ['-t', String(pid), '-n', 'ping', '-c', '2', '-W', '1', '-I', 'st0', '10.99.0.2']);
    // A one-shot frame may come from the sampler's latest reading (≤ 1 s old): wait for one after the pings.
    let f1: any;
    for (let i = 0; i < 30; i++) {
      f1 = (await d.request('GET', '/containers/nonet/stats?stream=false&one-shot=true')).json();
      if ((f1.networks?.st0?.tx_packets ?? 0) > 0) break;
      await sleep(200);
    }
    assert.deepEqual(Object.keys(f1.networks ?? {}), ['st0', 'st1']);
    assert.deepEqual(schemaErrors(f1), []);
    assert.deepEqual(Object.keys(f1.networks.st0), [
      'rx_bytes',
      'rx_packets',
      'rx_errors',
      'rx_dropped',
      'tx_bytes',
      'tx_packets',
      'tx_errors',
      'tx_dropped',
    ]);
    assert.ok(f1.networks.st0.tx_packets > 0, 'the pings went out of st0');
    assert.equal(f1.networks.st1.rx_packets, f1.networks.st0.tx_packets, 'and into its peer');
    await d.docker(['rm', '-f', 'nonet', 'hostnet']);
  });

  test('docker stats --no-stream over all running containers prints a row each', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await d.docker(['run', '-d', '--name', `many${i}`, 'busybox', 'sleep', '1000']);
      assert.equal(r.code, 0, r.stderr);
      ids.push(r.stdout.trim());
    }
    const r = await d.docker(['stats', '--no-stream', '--format', '{{.Name}} {{.CPUPerc}} {{.PIDs}}']);
    assert.equal(r.code, 0, r.stderr);
    const rows = r.stdout.trim().split('\n');
    for (let i = 0; i < 5; i++)
      assert.ok(
        rows.some((l) => new RegExp(`^many${i} [\\d.]+% 1$`).test(l)),
        `many${i} in\n${r.stdout}`,
      );
    assert.ok(rows.some((l) => /^burn /.test(l)));
    await d.docker(['rm', '-f', ...ids]);
  });

  // Last: it stops the daemon.
  test('daemon shutdown ends open streams first, not after the request drain period', async () => {
    let sigtermAt = 0;
    const s = await readStream(d.socket, '/containers/idle/stats', 1000, 30_000, (n) => {
      if (n === 1) {
        sigtermAt = performance.now();
        d.child.kill('SIGTERM');
      }
    });
    const endedAfter = performance.now() - sigtermAt;
    assert.ok(s.ended, 'the daemon ended the response');
    assert.ok(endedAfter < 3000, `stream ended ${endedAfter.toFixed(0)} ms after SIGTERM`);
    await d.stop();
  });
});
