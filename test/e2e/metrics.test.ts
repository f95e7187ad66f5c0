// Metrics (issue 14): --metrics-addr with --experimental serves the Prometheus text format with
// dockerd's families under engine_ and per-container counters from the stats sampler.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ENGINED, run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { freePort } from '../helpers/ports.ts';
import { until } from '../helpers/until.ts';

/** Sample lines of the text format: "name{labels} value" → value, keyed by the whole left side. */
function parse(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

function find(m: Map<string, number>, name: string, ...labels: string[]): number | undefined {
  for (const [k, v] of m) if (k.startsWith(`${name}{`) || k === name) if (labels.every((l) => k.includes(l))) return v;
  return undefined;
}

describe('metrics', () => {
  let d: TestDaemon;
  let port: number;
  before(async () => {
    port = await freePort();
    d = await startDaemon({ args: ['--experimental', '--metrics-addr', `127.0.0.1:${port}`] });
    await loadBusybox(d);
  });
  after(async () => d?.cleanup());

  const scrape = async () => {
    const r = await fetch(`http://127.0.0.1:${port}/metrics`);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return parse(await r.text());
  };

  test('daemon info, container actions and states, events, network actions, health checks', async () => {
    assert.equal((await d.docker(['network', 'create', 'mnet'])).code, 0);
    const r = await d.docker([
      'run',
      '-d',
      '--name',
      'busy',
      '--network',
      'mnet',
      '--health-cmd',
      'true',
      '--health-interval',
      '1s',
      'busybox',
      'sh',
      '-c',
      'while true; do echo x > /dev/null; done',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const m = await until('a health check counted', async () => {
      const s = await scrape();
      return (find(s, 'engine_daemon_health_checks_total') ?? 0) >= 1 ? s : undefined;
    });
    assert.equal(find(m, 'engine_daemon_engine_info', 'version="0.1.0"', 'os_type="linux"'), 1);
    assert.ok((find(m, 'engine_daemon_container_actions_seconds_count', 'action="create"') ?? 0) >= 1);
    assert.ok((find(m, 'engine_daemon_container_actions_seconds_count', 'action="start"') ?? 0) >= 1);
    assert.equal(find(m, 'engine_daemon_container_states_containers', 'state="running"'), 1);
    assert.ok((find(m, 'engine_daemon_events_total', 'type="container"', 'action="start"') ?? 0) >= 1);
    assert.ok((find(m, 'engine_daemon_network_actions_seconds_count', 'action="create"') ?? 0) >= 1);
    assert.equal(find(m, 'engine_daemon_health_checks_failed_total'), 0);
  });

  test('per-container CPU, memory and network counters, labelled by name and id, that move', async () => {
    const first = await scrape();
    const cpu1 = find(first, 'engine_container_cpu_usage_seconds_total', 'name="busy"');
    assert.ok(cpu1 !== undefined && cpu1 > 0, `cpu ${cpu1}`);
    assert.ok((find(first, 'engine_container_memory_usage_bytes', 'name="busy"') ?? 0) > 0);
    assert.notEqual(find(first, 'engine_container_network_receive_bytes_total', 'name="busy"', 'interface="eth0"'), undefined);
    const id = [...first.keys()].find((k) => k.startsWith('engine_container_cpu_usage_seconds_total'))!;
    assert.match(id, /id="[0-9a-f]{64}"/);
    const cpu2 = await until('CPU time to grow', async () => {
      const v = find(await scrape(), 'engine_container_cpu_usage_seconds_total', 'name="busy"')!;
      return v > cpu1 ? v : undefined;
    });
    assert.ok(cpu2 > cpu1);
    assert.equal((await d.docker(['rm', '-f', 'busy'])).code, 0);
    const after = await scrape();
    assert.equal(
      find(after, 'engine_container_cpu_usage_seconds_total', 'name="busy"'),
      undefined,
      'a removed container is gone from the scrape',
    );
    assert.equal((await fetch(`http://127.0.0.1:${port}/other`)).status, 404);
  });

  test("builds: dockerd's builder_builds_triggered and builder_builds_failed by reason", async () => {
    const before = await scrape();
    // Every reason is exported from the start, as dockerd does.
    for (const reason of ['dockerfile_syntax_error', 'unknown_instruction_error', 'build_target_not_reachable_error', 'build_canceled'])
      assert.notEqual(find(before, 'engine_builder_builds_failed_total', `reason="${reason}"`), undefined, reason);
    const count = (m: Map<string, number>, reason: string) => find(m, 'engine_builder_builds_failed_total', `reason="${reason}"`) ?? 0;
    const dir = await mkdtemp(join(tmpdir(), 'engine-metrics-build-'));
    try {
      const build = async (dockerfile: string, ...args: string[]) => {
        await writeFile(join(dir, 'Dockerfile'), dockerfile);
        return d.docker(['build', ...args, dir], { env: { DOCKER_BUILDKIT: '0' }, timeoutMs: 120_000 });
      };
      const ok = await build('FROM busybox\nRUN echo built > /built\n', '-t', 'metrics-ok');
      assert.equal(ok.code, 0, ok.stderr);
      const failing = await build('FROM busybox\nRUN exit 3\n');
      assert.notEqual(failing.code, 0);
      const unknown = await build('FROM busybox\nFROBNICATE now\n');
      assert.notEqual(unknown.code, 0);
      const target = await build('FROM busybox AS one\n', '--target', 'two');
      assert.notEqual(target.code, 0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const after = await scrape();
    const triggered = (m: Map<string, number>) => find(m, 'engine_builder_builds_triggered_total') ?? 0;
    assert.equal(triggered(after) - triggered(before), 4);
    assert.equal(count(after, 'error_processing_commands_error') - count(before, 'error_processing_commands_error'), 1);
    assert.equal(count(after, 'unknown_instruction_error') - count(before, 'unknown_instruction_error'), 1);
    assert.equal(count(after, 'build_target_not_reachable_error') - count(before, 'build_target_not_reachable_error'), 1);
    assert.equal(count(after, 'dockerfile_syntax_error'), count(before, 'dockerfile_syntax_error'));
  });

  test('without --experimental the daemon refuses --metrics-addr', async () => {
    const r = await run(
      ENGINED,
      [
        '--metrics-addr',
        '127.0.0.1:1',
        '--data-root',
        `${d.dir}/x-data`,
        '--exec-root',
        `${d.dir}/x-exec`,
        '--pidfile',
        `${d.dir}/x.pid`,
        '-H',
        `unix://${d.dir}/x.sock`,
      ],
      { timeoutMs: 30_000 },
    );
    assert.equal(r.code, 1);
    assert.match(r.stderr, /metrics-addr is only supported when experimental is enabled/);
  });
});
