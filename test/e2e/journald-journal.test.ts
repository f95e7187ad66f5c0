// The journald driver against a real systemd-journald run by the test (in a mount namespace of its
// own, /run and /var/log/journal private tmpfs, reached through /proc/<pid>/root): with
// cache-disabled=true `docker logs` reads the journal back, as dockerd's journald reader does —
// streams by priority, tail, and a follow that ends with the container.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { unixgramHelper } from '../../src/logging/remote/unixgram.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';

const JOURNALD = '/lib/systemd/systemd-journald';
const why =
  process.getuid?.() !== 0
    ? 'needs root (a private journald)'
    : !existsSync(JOURNALD)
      ? `${JOURNALD} is not installed`
      : !unixgramHelper()
        ? 'build/native/unixgram.node is not built'
        : false;

describe('journald driver read back from a real journal', { skip: why }, () => {
  let journald: ChildProcess;
  let d: TestDaemon;
  before(async () => {
    journald = spawn(
      'unshare',
      [
        '-m',
        '--propagation',
        'private',
        'sh',
        '-c',
        'mount -t tmpfs none /run && mkdir -p /run/systemd /run/log/journal && { [ ! -d /var/log/journal ] || mount -t tmpfs none /var/log/journal; } && exec ' +
          JOURNALD,
      ],
      { stdio: 'ignore' },
    );
    const root = `/proc/${journald.pid}/root`;
    const dir = await until(
      'the private journal',
      () => {
        if (!existsSync(`${root}/run/systemd/journal/socket`)) return undefined;
        const ids = existsSync(`${root}/run/log/journal`) ? readdirSync(`${root}/run/log/journal`) : [];
        return ids[0] ? `${root}/run/log/journal/${ids[0]}` : undefined;
      },
      10_000,
      20,
    );
    d = await startDaemon({ env: { ENGINE_TEST_JOURNAL_SOCKET: `${root}/run/systemd/journal/socket`, ENGINE_TEST_JOURNAL_DIR: dir } });
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
    journald?.kill();
  });

  test('cache-disabled=true: docker logs reads the journal (streams, tail, follow to the end)', async () => {
    const r = await d.docker([
      'run',
      '--log-driver',
      'journald',
      '--log-opt',
      'cache-disabled=true',
      '--name',
      'jr1',
      'busybox',
      'sh',
      '-c',
      // stdout and stderr are two pipes: the pause makes `three` the journal's last entry (--tail 1).
      'echo one; echo two >&2; sleep 0.3; echo three',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const logs = await until(
      'three entries in the journal',
      async () => {
        const l = await d.docker(['logs', 'jr1']);
        assert.equal(l.code, 0, l.stderr);
        return l.stdout === 'one\nthree\n' ? l : undefined;
      },
      10_000,
      100,
    );
    assert.equal(logs.stderr, 'two\n');
    assert.equal((await d.docker(['logs', '--tail', '1', 'jr1'])).stdout, 'three\n');
    const stamped = (await d.docker(['logs', '--timestamps', 'jr1'])).stdout.split('\n')[0]!;
    assert.match(stamped, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z one$/);

    await d.docker([
      'run',
      '-d',
      '--log-driver',
      'journald',
      '--log-opt',
      'cache-disabled=true',
      '--name',
      'jr2',
      'busybox',
      'sh',
      '-c',
      'for i in 1 2 3; do echo f$i; sleep 0.3; done',
    ]);
    const follow = await d.docker(['logs', '--follow', 'jr2'], { timeoutMs: 20_000 });
    assert.equal(follow.code, 0, follow.stderr);
    assert.equal(follow.stdout, 'f1\nf2\nf3\n', 'the follow ends once the container has stopped, with every line');

    // A driver that cannot read, with the cache disabled: dockerd's 501.
    await d.docker([
      'run',
      '--log-driver',
      'gelf',
      '--log-opt',
      'gelf-address=udp://127.0.0.1:9',
      '--log-opt',
      'cache-disabled=true',
      '--name',
      'g0',
      'busybox',
      'true',
    ]);
    const none = await d.request('GET', '/containers/g0/logs?stdout=1');
    assert.deepEqual([none.status, none.json<{ message: string }>().message], [501, 'configured logging driver does not support reading']);
    await d.docker(['rm', '-f', 'jr1', 'jr2', 'g0']);
  });
});
