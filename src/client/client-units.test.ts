// Unit tests of the SDK's pure parts: host parsing and ENGINE_* settings, query encoding, the
// 8-byte frame demultiplexer and JSON-lines splitting across chunk boundaries, ssh arguments.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseHost, settingsFromEnv } from './host.ts';
import { encodeQuery } from './http.ts';
import { demux, encodeFrame, jsonLines } from './streams.ts';
import { dialStdioCommand, sshArgs } from './transport.ts';

async function* chunks(buf: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

test('hosts: unix, tcp with default ports and prefix, shorthand, ssh with user/port/socket; bad ones refused', () => {
  assert.deepEqual(parseHost(undefined), { kind: 'unix', path: '/var/run/engine.sock' });
  assert.deepEqual(parseHost('unix:///tmp/e.sock'), { kind: 'unix', path: '/tmp/e.sock' });
  assert.deepEqual(parseHost('tcp://10.0.0.1'), { kind: 'tcp', host: '10.0.0.1', port: 2375, prefix: '' });
  assert.deepEqual(parseHost('tcp://10.0.0.1', true), { kind: 'tcp', host: '10.0.0.1', port: 2376, prefix: '' });
  assert.deepEqual(parseHost('tcp://[::1]:99/base/'), { kind: 'tcp', host: '::1', port: 99, prefix: '/base' });
  assert.deepEqual(parseHost(':2380'), { kind: 'tcp', host: '127.0.0.1', port: 2380, prefix: '' });
  assert.deepEqual(parseHost('ssh://me@box:2222/run/e.sock'), {
    kind: 'ssh',
    user: 'me',
    host: 'box',
    port: 2222,
    socketPath: '/run/e.sock',
  });
  assert.deepEqual(parseHost('ssh://box'), { kind: 'ssh', host: 'box' });
  assert.throws(() => parseHost('ssh://me:pw@box'), /password is not supported/);
  assert.throws(() => parseHost('ftp://x'), /unsupported scheme/);
  assert.throws(() => parseHost('tcp://x:99999'), /bad port/);
});

test('settings from the environment: TLS only when asked; ENGINE_TLS_VERIFY verifies; a missing explicit file is an error', () => {
  assert.equal(settingsFromEnv({}, { ENGINE_HOST: 'tcp://h:1' }).tls, undefined);
  const s = settingsFromEnv({}, { ENGINE_HOST: 'tcp://h', ENGINE_TLS_VERIFY: '1', ENGINE_CERT_PATH: '/nonexistent' });
  assert.deepEqual(s.target, { kind: 'tcp', host: 'h', port: 2376, prefix: '' });
  assert.equal(s.tls?.verify, true);
  assert.equal(settingsFromEnv({ tls: true }, { ENGINE_HOST: 'tcp://h' }).tls?.verify, false);
  assert.throws(() => settingsFromEnv({ tls: true, tlsCaCert: '/nonexistent/ca.pem' }, { ENGINE_HOST: 'tcp://h' }), /could not read/);
});

test('query: filters as JSON, booleans as 1/0, arrays repeated, undefined dropped', () => {
  assert.equal(
    encodeQuery({ all: true, limit: 3, x: undefined, filters: { label: ['a=b'] }, t: ['x', 'y'] }),
    '?all=1&limit=3&filters=%7B%22label%22%3A%5B%22a%3Db%22%5D%7D&t=x&t=y',
  );
  assert.equal(encodeQuery({}), '');
});

test('demux: frames split across any chunk size come out whole; a type-3 frame is an error', async () => {
  const wire = Buffer.concat([
    encodeFrame('stdout', Buffer.from('hello ')),
    encodeFrame('stderr', Buffer.from('oops\n')),
    encodeFrame('stdout', Buffer.from('world\n')),
  ]);
  for (const size of [1, 3, 7, wire.length]) {
    const got: string[] = [];
    for await (const f of demux(chunks(wire, size))) got.push(`${f.stream}:${f.data}`);
    assert.deepEqual(got, ['stdout:hello ', 'stderr:oops\n', 'stdout:world\n']);
  }
  const bad = Buffer.concat([Buffer.from([3, 0, 0, 0, 0, 0, 0, 4]), Buffer.from('boom')]);
  await assert.rejects(async () => {
    for await (const _ of demux(chunks(bad, 5)));
  }, /boom/);
  await assert.rejects(async () => {
    for await (const _ of demux(chunks(wire.subarray(0, 10), 4)));
  }, /ended inside a frame/);
});

test('jsonLines: values split across chunks, blank lines skipped', async () => {
  const text = Buffer.from('{"a":1}\n\n{"b":"x\\ny"}\n{"c":3}');
  const got = [];
  for await (const v of jsonLines(chunks(text, 4))) got.push(v);
  assert.deepEqual(got, [{ a: 1 }, { b: 'x\ny' }, { c: 3 }]);
});

test('ssh: BatchMode, user, port, the remote dial-stdio with a quoted socket path, ENGINE_SSH_OPTS first', () => {
  const t = { kind: 'ssh' as const, user: 'me', host: 'box', port: 2222, socketPath: "/run/it's.sock" };
  assert.equal(dialStdioCommand(t), `engine --host 'unix:///run/it'\\''s.sock' system dial-stdio`);
  assert.deepEqual(sshArgs(t, { ENGINE_SSH_OPTS: '-F /c' }), [
    '-F',
    '/c',
    '-o',
    'ConnectTimeout=30',
    '-o',
    'BatchMode=yes',
    '-T',
    '-l',
    'me',
    '-p',
    '2222',
    '--',
    'box',
    dialStdioCommand(t),
  ]);
});
