// The built-in remote log drivers with the real docker CLI: `docker run --log-driver gelf|syslog|
// fluentd|journald …` sends each line to a receiver run by the test, and `docker logs` reads the
// dual-logging cache back (501 with cache-disabled=true); bad options fail the create with dockerd's
// messages.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parseJournalDatagram } from '../../src/logging/remote/journald.ts';
import { unixgramHelper } from '../../src/logging/remote/unixgram.ts';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';

describe('remote log drivers', () => {
  let d: TestDaemon;
  let journalDir: string;
  before(async () => {
    // the daemon's journald driver writes to a socket this test binds
    journalDir = await mkdtemp(join(tmpdir(), 'engine-journal-'));
    d = await startDaemon({ env: { ENGINE_TEST_JOURNAL_SOCKET: join(journalDir, 'socket') } });
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
    await rm(journalDir, { recursive: true, force: true });
  });

  const idOf = async (c: string) => (await d.docker(['inspect', '-f', '{{.Id}}', c])).stdout.trim();

  test('gelf over UDP: every line reaches the receiver with the container fields; docker logs reads the cache', async () => {
    const sock = createSocket('udp4');
    const got: Record<string, unknown>[] = [];
    sock.on('message', (m) => got.push(JSON.parse(gunzipSync(m).toString()) as Record<string, unknown>));
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
    after(() => sock.close());
    const addr = `udp://127.0.0.1:${sock.address().port}`;
    const r = await d.docker([
      'run',
      '--log-driver',
      'gelf',
      '--log-opt',
      `gelf-address=${addr}`,
      '--log-opt',
      'tag={{.Name}}',
      '--label',
      'team=core',
      '--log-opt',
      'labels=team',
      '--name',
      'g1',
      'busybox',
      'sh',
      '-c',
      'echo one; echo two >&2; echo three',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const id = await idOf('g1');
    await until('3 gelf messages', () => (got.length === 3 ? true : undefined), 10_000);
    const byLine = new Map(got.map((m) => [m['short_message'], m]));
    assert.deepEqual([...byLine.keys()].sort(), ['one', 'three', 'two']);
    const one = byLine.get('one')!;
    assert.equal(one['_container_id'], id);
    assert.equal(one['_container_name'], 'g1');
    assert.equal(one['_tag'], 'g1');
    assert.equal(one['_team'], 'core');
    assert.equal(one['_image_name'], 'busybox');
    assert.equal(one['_command'], 'sh -c echo one; echo two >&2; echo three');
    assert.equal(one['level'], 6);
    assert.equal(byLine.get('two')!['level'], 3);
    const logs = await d.docker(['logs', 'g1']);
    assert.equal(logs.code, 0, logs.stderr);
    assert.equal(logs.stdout, 'one\nthree\n');
    assert.equal(logs.stderr, 'two\n');

    const nocache = await d.docker([
      'run',
      '--log-driver',
      'gelf',
      '--log-opt',
      `gelf-address=${addr}`,
      '--log-opt',
      'cache-disabled=true',
      '--name',
      'g2',
      'busybox',
      'echo',
      'x',
    ]);
    assert.equal(nocache.code, 0, nocache.stderr);
    const refused = await d.docker(['logs', 'g2']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /configured logging driver does not support reading/);
  });

  test('gelf: bad options are refused at create with dockerd messages', async () => {
    const none = await d.docker(['create', '--log-driver', 'gelf', 'busybox']);
    assert.notEqual(none.code, 0);
    assert.match(none.stderr, /gelf-address is a required parameter/);
    const unknown = await d.docker([
      'create',
      '--log-driver',
      'gelf',
      '--log-opt',
      'gelf-address=udp://127.0.0.1:1',
      '--log-opt',
      'foo=bar',
      'busybox',
    ]);
    assert.match(unknown.stderr, /unknown log opt "foo" for gelf log driver/);
  });

  test('syslog over TCP: the lines arrive framed by newlines in the default format; docker logs reads the cache', async () => {
    const got: Buffer[] = [];
    const server = createServer((c) => c.on('data', (b) => got.push(b)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    after(() => server.close());
    const port = (server.address() as AddressInfo).port;
    const r = await d.docker([
      'run',
      '--log-driver',
      'syslog',
      '--log-opt',
      `syslog-address=tcp://127.0.0.1:${port}`,
      '--log-opt',
      'syslog-facility=local0',
      '--log-opt',
      'tag={{.Name}}',
      '--name',
      's1',
      'busybox',
      'sh',
      '-c',
      'echo one; echo two >&2',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const lines = await until('2 syslog lines', () => {
      const l = Buffer.concat(got).toString().split('\n').filter(Boolean);
      return l.length === 2 ? l : undefined;
    });
    assert.ok(
      lines.some((l) => /^<134>\w{3} [ \d]\d \d\d:\d\d:\d\d s1\[\d+\]: one$/.test(l)),
      lines.join('\n'),
    );
    assert.ok(
      lines.some((l) => /^<131>.* s1\[\d+\]: two$/.test(l)),
      lines.join('\n'),
    );
    const logs = await d.docker(['logs', 's1']);
    assert.equal(logs.stdout, 'one\n');
    assert.equal(logs.stderr, 'two\n');
    const bad = await d.docker(['create', '--log-driver', 'syslog', '--log-opt', 'syslog-format=nope', 'busybox']);
    assert.match(bad.stderr, /Invalid syslog format/);
    const down = await d.docker(['run', '--log-driver', 'syslog', '--log-opt', 'syslog-address=tcp://127.0.0.1:1', 'busybox', 'true']);
    assert.notEqual(down.code, 0);
    assert.match(down.stderr, /failed to initialize logging driver: dial tcp 127.0.0.1:1/);
  });

  test('fluentd with fluentd-async: a receiver that comes up after the run gets every line; docker logs reads the cache', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const r = await d.docker([
      'run',
      '-d',
      '--log-driver',
      'fluentd',
      '--log-opt',
      `fluentd-address=127.0.0.1:${port}`,
      '--log-opt',
      'fluentd-async=true',
      '--log-opt',
      'fluentd-retry-wait=100ms',
      '--name',
      'f1',
      'busybox',
      'sh',
      '-c',
      'for i in 1 2 3 4 5; do echo line $i; done; echo err >&2; sleep 3',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const id = r.stdout.trim();
    await until('the lines in the cache', async () => ((await d.docker(['logs', 'f1'])).stdout.includes('line 5') ? true : undefined));
    // the Forward receiver comes up now: messages are 4-element msgpack arrays; the test decodes the strings it needs
    const got: Buffer[] = [];
    const server = createServer((c) => c.on('data', (b) => got.push(b)));
    await new Promise<void>((res) => server.listen(port, '127.0.0.1', res));
    after(() => server.close());
    await until('6 fluentd messages', () => {
      const all = Buffer.concat(got);
      let n = 0;
      for (let i = all.indexOf(0x94); i >= 0; i = all.indexOf(0x94, i + 1)) if (all[i + 1] === 0xac) n++;
      return n >= 6 ? all : undefined;
    });
    const all = Buffer.concat(got).toString('latin1');
    for (const needle of [id, '/f1', 'line 1', 'line 5', 'err', 'stderr', id.slice(0, 12)]) assert.ok(all.includes(needle), needle);
    const logs = await d.docker(['logs', 'f1']);
    assert.equal(logs.stdout, 'line 1\nline 2\nline 3\nline 4\nline 5\n');
    assert.equal(logs.stderr, 'err\n');
    const down = await d.docker(['run', '--log-driver', 'fluentd', '--log-opt', 'fluentd-address=127.0.0.1:1', 'busybox', 'true']);
    assert.notEqual(down.code, 0);
    assert.match(down.stderr, /failed to initialize logging driver: dial tcp 127.0.0.1:1/);
    await d.docker(['rm', '-f', 'f1']);
  });

  test(
    'journald: native-protocol datagrams with the container fields; docker logs reads the cache',
    { skip: unixgramHelper() ? false : 'build/native/unixgram.node is not built' },
    async () => {
      const h = unixgramHelper()!;
      const fd = h.open(join(journalDir, 'socket'), true);
      assert.ok(fd >= 0, `bind: ${fd}`);
      after(() => h.close(fd));
      const got: Record<string, string>[] = [];
      const buf = Buffer.alloc(256 << 10);
      const drain = () => {
        for (let n = h.recv(fd, buf); n >= 0; n = h.recv(fd, buf)) got.push(parseJournalDatagram(buf.subarray(0, n)));
        return got.length >= 3 ? got : undefined;
      };
      const r = await d.docker([
        'run',
        '--log-driver',
        'journald',
        '--log-opt',
        'tag={{.Name}}',
        '--name',
        'j1',
        'busybox',
        'sh',
        '-c',
        'echo one; echo two >&2; echo three',
      ]);
      assert.equal(r.code, 0, r.stderr);
      const id = await idOf('j1');
      await until('3 journal entries', drain, 10_000, 5);
      const one = got.find((f) => f['MESSAGE'] === 'one')!;
      assert.deepEqual(
        [
          one['PRIORITY'],
          one['CONTAINER_ID'],
          one['CONTAINER_ID_FULL'],
          one['CONTAINER_NAME'],
          one['CONTAINER_TAG'],
          one['SYSLOG_IDENTIFIER'],
          one['IMAGE_NAME'],
        ],
        ['6', id.slice(0, 12), id, 'j1', 'j1', 'j1', 'busybox'],
      );
      assert.equal(got.find((f) => f['MESSAGE'] === 'two')!['PRIORITY'], '3');
      const logs = await d.docker(['logs', 'j1']);
      assert.equal(logs.stdout, 'one\nthree\n');
      assert.equal(logs.stderr, 'two\n');
    },
  );

  test('docker info lists the built-in drivers', async () => {
    const info = JSON.parse((await d.docker(['info', '--format', '{{json .Plugins.Log}}'])).stdout) as string[];
    for (const name of ['fluentd', 'gelf', 'journald', 'json-file', 'local', 'syslog'])
      assert.ok(info.includes(name), `${name} in ${info.join(' ')}`);
  });
});
