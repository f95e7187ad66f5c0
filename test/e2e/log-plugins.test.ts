// Log-driver plugins (issue 14): a test plugin found by name in /run/engine/plugins receives each
// line of `docker run --log-driver <plugin>` through the FIFO (protobuf entries) with dockerd's
// StartLogging Info, and serves `docker logs` through ReadLogs (tail, follow, stream separation); for
// a plugin without ReadLogs `docker logs` reads dockerd's local cache (501 with cache-disabled=true);
// an unknown driver and a failing StartLogging are errors.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { TestLogPlugin } from '../helpers/log-plugin.ts';
import { until } from '../helpers/until.ts';

describe('log-driver plugins', () => {
  let d: TestDaemon;
  let plugin: TestLogPlugin;
  // A unique name: several test daemons may look in /run/engine/plugins at once.
  const name = `testlog${process.pid}`;
  before(async () => {
    await mkdir('/run/engine/plugins', { recursive: true });
    plugin = new TestLogPlugin(`/run/engine/plugins/${name}.sock`);
    await plugin.start();
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
    await plugin?.stop();
  });

  const idOf = async (c: string) => (await d.docker(['inspect', '-f', '{{.Id}}', c])).stdout.trim();

  test('docker run --log-driver <plugin>: the plugin receives the lines, docker logs reads them back', async () => {
    const r = await d.docker(['run', '--log-driver', name, '--log-opt', 'tag=x', '--name', 'lp1', 'busybox', 'echo', 'hi']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'hi\n', 'docker run attaches as usual');
    const id = await idOf('lp1');
    assert.deepEqual(plugin.lines(id), ['hi']);
    const e = plugin.entries.get(id)![0]!;
    assert.equal(e.source, 'stdout');
    assert.ok(e.timeNano > BigInt(Date.now() - 120_000) * 1_000_000n, 'time_nano is a wall-clock time in ns');
    const start = plugin.started.find((s) => s.Info.ContainerID === id)!;
    assert.ok(start, 'StartLogging was called');
    assert.deepEqual(
      {
        name: start.Info.ContainerName,
        entry: start.Info.ContainerEntrypoint,
        args: start.Info.ContainerArgs,
        image: start.Info.ContainerImageName,
        config: start.Info.Config,
      },
      { name: '/lp1', entry: 'echo', args: ['hi'], image: 'busybox', config: { tag: 'x' } },
    );
    assert.match(String(start.Info.ContainerImageID), /^sha256:[0-9a-f]{64}$/);
    assert.ok(plugin.stopped.includes(start.File), 'StopLogging for the same FIFO after the exit');
    assert.equal(existsSync(start.File), false, 'the FIFO is removed after StopLogging');
    const logs = await d.docker(['logs', 'lp1']);
    assert.equal(logs.code, 0, logs.stderr);
    assert.equal(logs.stdout, 'hi\n');
    const inspect = JSON.parse((await d.docker(['inspect', 'lp1'])).stdout)[0];
    assert.equal(inspect.HostConfig.LogConfig.Type, name);
    assert.equal(inspect.LogPath, '');
  });

  test('stdout and stderr stay apart; tail and long lines; follow ends with the container', async () => {
    // stderr first, then a pause: the two streams reach the plugin in a known order (tail counts both).
    const script = 'echo err1 >&2; sleep 0.3; echo out1; echo out2; head -c 20000 /dev/zero | tr "\\0" a; echo';
    const r = await d.docker(['run', '--log-driver', name, '--name', 'lp2', 'busybox', 'sh', '-c', script]);
    assert.equal(r.code, 0, r.stderr);
    const id = await idOf('lp2');
    const entries = plugin.entries.get(id)!;
    assert.deepEqual(
      entries.filter((e) => e.source === 'stderr').map((e) => e.line.toString()),
      ['err1'],
    );
    // dockerd's copier: a 20000-byte line is a 16 KiB partial piece, then the rest, one message id.
    const long = entries.filter((e) => e.line.toString().startsWith('aaa'));
    assert.deepEqual(
      long.map((e) => [e.line.length, e.partial, e.meta?.ordinal, e.meta?.last]),
      [
        [16384, true, 1, false],
        [20000 - 16384, false, 2, true],
      ],
    );
    assert.equal(long[0]!.meta!.id, long[1]!.meta!.id);
    const long20k = `${'a'.repeat(20000)}\n`;
    const logs = await d.docker(['logs', 'lp2']);
    assert.ok(logs.stdout === `out1\nout2\n${long20k}`, `stdout read back: ${logs.stdout.slice(0, 40)}… (${logs.stdout.length} bytes)`);
    assert.equal(logs.stderr, 'err1\n');
    // The tail counts entries, as dockerd: the long line is two of them.
    const tail = await d.docker(['logs', '--tail', '3', 'lp2']);
    assert.ok(tail.stdout === `out2\n${long20k}`, `tail: ${tail.stdout.slice(0, 40)}… (${tail.stdout.length} bytes)`);
    assert.equal(tail.stderr, '');

    const run = await d.docker([
      'run',
      '-d',
      '--log-driver',
      name,
      '--name',
      'lp3',
      'busybox',
      'sh',
      '-c',
      'for i in 1 2 3 4; do echo l$i; sleep 0.5; done',
    ]);
    assert.equal(run.code, 0, run.stderr);
    const follow = await d.docker(['logs', '-f', 'lp3']);
    assert.equal(follow.code, 0, follow.stderr);
    assert.equal(follow.stdout, 'l1\nl2\nl3\nl4\n', 'follow sees every line and ends when the container does');
  });

  test("a plugin without ReadLogs: docker logs reads dockerd's local cache; with cache-disabled=true it is dockerd's 501", async () => {
    plugin.readLogs = false;
    try {
      const r = await d.docker(['run', '--log-driver', name, '--name', 'lp4', 'busybox', 'sh', '-c', 'echo cached; echo err >&2']);
      assert.equal(r.code, 0, r.stderr);
      const id = await idOf('lp4');
      // Each stream in order; the two may interleave either way.
      assert.deepEqual(plugin.lines(id).sort(), ['cached', 'err'], 'the plugin still gets every line');
      const logs = await d.docker(['logs', 'lp4']);
      assert.equal(logs.code, 0, logs.stderr);
      assert.equal(logs.stdout, 'cached\n');
      assert.equal(logs.stderr, 'err\n');
      assert.ok(existsSync(join(d.dataRoot, 'containers', id, 'container-cached.log')), 'the cache beside the container, as dockerd');

      const off = await d.docker([
        'run',
        '--log-driver',
        name,
        '--log-opt',
        'cache-disabled=true',
        '--name',
        'lp4b',
        'busybox',
        'echo',
        'unread',
      ]);
      assert.equal(off.code, 0, off.stderr);
      assert.deepEqual(plugin.lines(await idOf('lp4b')), ['unread']);
      const api = await d.request('GET', '/containers/lp4b/logs?stdout=1');
      assert.equal(api.status, 501);
      assert.equal(api.json().message, 'configured logging driver does not support reading');
      const cli = await d.docker(['logs', 'lp4b']);
      assert.notEqual(cli.code, 0);
      assert.match(cli.stderr, /configured logging driver does not support reading/);
    } finally {
      plugin.readLogs = true;
    }
  });

  test('an unknown driver is refused at create; a StartLogging error fails the start', async () => {
    const r = await d.docker(['create', '--log-driver', 'nosuchlogplugin', 'busybox']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /error looking up logging plugin nosuchlogplugin: plugin "nosuchlogplugin" not found/);
    const api = await d.request('POST', '/containers/create', {
      body: { Image: 'busybox', HostConfig: { LogConfig: { Type: 'nosuchlogplugin' } } },
    });
    assert.equal(api.status, 400);

    plugin.startError = 'the log store is full';
    try {
      const c = await d.docker(['create', '--log-driver', name, '--name', 'lp5', 'busybox', 'true']);
      assert.equal(c.code, 0, c.stderr);
      const s = await d.docker(['start', 'lp5']);
      assert.notEqual(s.code, 0);
      assert.match(s.stderr, /failed to initialize logging driver: error creating logger: the log store is full/);
      await until('lp5 back to created', async () =>
        (await d.docker(['inspect', '-f', '{{.State.Status}}', 'lp5'])).stdout.trim() === 'created' ? true : undefined,
      );
    } finally {
      plugin.startError = '';
    }
  });

  test('the daemon stopping ends the logging (StopLogging); after its restart docker logs still reads through the plugin', async () => {
    const run = await d.docker([
      'run',
      '-d',
      '--stop-timeout',
      '1',
      '--log-driver',
      name,
      '--name',
      'lp6',
      'busybox',
      'sh',
      '-c',
      'echo before; sleep 60',
    ]);
    assert.equal(run.code, 0, run.stderr);
    const id = await idOf('lp6');
    await until('the line at the plugin', () => (plugin.lines(id).includes('before') ? true : undefined));
    const fifo = plugin.started.find((s) => s.Info.ContainerID === id)!.File;
    await d.stop();
    assert.ok(plugin.stopped.includes(fifo), 'StopLogging at shutdown');
    await d.restart();
    assert.equal((await d.docker(['logs', 'lp1'])).stdout, 'hi\n', 'read with a fresh driver: Capabilities, then ReadLogs');
    assert.equal((await d.docker(['logs', 'lp6'])).stdout, 'before\n');
    assert.equal((await d.docker(['rm', '-f', 'lp6'])).code, 0);
  });
});
