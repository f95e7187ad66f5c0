// The fluentd driver against a Forward-protocol receiver run here: the TCP or unix stream is decoded
// as MessagePack exactly (each message the 4-element array fluent-logger-golang writes), and the
// async mode is checked with a receiver that comes up only after the container has written.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { freePort } from '../../../test/helpers/ports.ts';
import { collect, tempDirs, text, waitFor } from '../driver-suite.ts';
import { createLogDriver, validateLogOptions } from '../index.ts';
import { decodeMsgpack, MsgpackShortRead, MsgpackWriter, type MsgpackValue } from './msgpack.ts';

const ID = 'abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789';
const ATTRS = { name: 'fl1', image: 'busybox', imageId: 'sha256:0123', 'label:team': 'core', 'env:STAGE': 'prod' };

interface Received {
  raw: Buffer[];
  messages: MsgpackValue[][];
}

/** A Forward receiver: every connection's bytes decoded into messages as they arrive. */
async function receiver(listen: { port?: number; path?: string }): Promise<{ server: Server; rx: Received; port: number }> {
  const rx: Received = { raw: [], messages: [] };
  const server = createServer((s) => {
    let buf = Buffer.alloc(0);
    s.on('data', (d) => {
      rx.raw.push(d);
      buf = Buffer.concat([buf, d]);
      for (;;) {
        try {
          const [v, off] = decodeMsgpack(buf);
          rx.messages.push(v as MsgpackValue[]);
          buf = buf.subarray(off);
        } catch (err) {
          if (err instanceof MsgpackShortRead) break;
          throw err;
        }
      }
    });
  });
  await new Promise<void>((r) => (listen.path ? server.listen(listen.path, r) : server.listen(listen.port ?? 0, '127.0.0.1', r)));
  after(() => server.close());
  return { server, rx, port: listen.path ? 0 : (server.address() as AddressInfo).port };
}

describe('fluentd log driver', () => {
  const newDir = tempDirs();
  /** The driver for the test container, its cache in a fresh directory. */
  const fluentdDriver = async (options: Record<string, string>) =>
    createLogDriver('fluentd', { containerId: ID, dir: await newDir(), options, attrs: ATTRS });

  it('validates options with dockerd messages', () => {
    const v = (o: Record<string, string>) => () => validateLogOptions('fluentd', o);
    assert.throws(v({ foo: 'x' }), /^EngineError: unknown log opt 'foo' for fluentd log driver$/);
    assert.throws(v({ 'fluentd-address': 'udp://h:1' }), /invalid fluentd-address \(udp:\/\/h:1\): unsupported scheme: 'udp'/);
    assert.throws(v({ 'fluentd-address': 'unix://' }), /invalid fluentd-address \(unix:\/\/\): path is empty/);
    assert.throws(v({ 'fluentd-address': 'tcp://h:1/x' }), /should not contain a path element/);
    assert.throws(v({ 'fluentd-async': 'yes' }), /strconv.ParseBool: parsing "yes": invalid syntax/);
    assert.throws(v({ 'fluentd-retry-wait': '5' }), /time: invalid duration "5"/);
    assert.throws(v({ 'fluentd-max-retries': '-1' }), /strconv.ParseUint: parsing "-1": invalid syntax/);
    assert.throws(v({ 'fluentd-max-retries': '3000000000' }), /invalid fluentd-max-retries: value out of range/);
    assert.throws(v({ 'fluentd-buffer-limit': 'lots' }), /invalid size: 'lots'/);
    assert.throws(v({ 'fluentd-async-reconnect-interval': '5ms' }), /must be between 100ms and 10s/);
    v({
      'fluentd-address': 'localhost:24224',
      'fluentd-async': 'true',
      'fluentd-retry-wait': '1.5s',
      'fluentd-max-retries': '10',
      'fluentd-buffer-limit': '8k',
    })();
    v({ 'fluentd-address': 'unix:///run/fluent.sock', 'fluentd-sub-second-precision': 'true', 'fluentd-write-timeout': '1m30s' })();
  });

  it("sends [tag, time, record, {}] with dockerd's record over TCP; docker logs reads the cache", async () => {
    const { rx, port } = await receiver({});
    const driver = await fluentdDriver({ 'fluentd-address': `127.0.0.1:${port}`, labels: 'team', env: 'STAGE' });
    await driver.start!();
    const before = Math.floor(Date.now() / 1000);
    const out = Array.from({ length: 300 }, (_, i) => `line ${i} é "x"\n`);
    await driver.attach({ stdout: Readable.from(out.map((l) => Buffer.from(l))), stderr: Readable.from([Buffer.from('bad\n')]) });
    await waitFor(() => rx.messages.length === 301);
    const stdout = rx.messages.filter((m) => (m[2] as Record<string, string>)['source'] === 'stdout');
    assert.deepEqual(
      stdout.map((m) => (m[2] as Record<string, string>)['log']),
      out.map((l) => l.slice(0, -1)),
    );
    const [tag, time, record, option] = stdout[0]!;
    assert.equal(tag, 'abcdef012345');
    assert.ok(typeof time === 'number' && time >= before - 1 && time <= before + 60);
    assert.deepEqual(record, {
      container_id: ID,
      container_name: '/fl1',
      source: 'stdout',
      log: 'line 0 é "x"',
      team: 'core',
      STAGE: 'prod',
    });
    assert.deepEqual(option, {});
    // the bytes: fixarray 4, fixstr tag, int32 time (0xd2), fixmap of 6
    const first = rx.raw[0]!;
    assert.equal(first[0], 0x94);
    assert.equal(first[1], 0xa0 | 12);
    assert.equal(first[14], 0xd2);
    assert.equal(first[19], 0x86);
    assert.deepEqual(text(await collect(driver)).length, 301);
    await driver.close();
  });

  it('sub-second precision: an EventTime (ext 0); a long line in partial pieces with their metadata; a unix socket', async () => {
    const dir = await newDir();
    const path = join(dir, 'fluent.sock');
    const { rx } = await receiver({ path });
    const driver = createLogDriver('fluentd', {
      containerId: ID,
      dir,
      options: { 'fluentd-address': `unix://${path}`, 'fluentd-sub-second-precision': 'true', tag: 'docker.{{.Name}}' },
      attrs: ATTRS,
    });
    await driver.start!();
    const long = 'z'.repeat(40_000);
    await driver.attach({ stdout: Readable.from([Buffer.from(`${long}\nshort\n`)]) });
    await waitFor(() => rx.messages.length === 4);
    const [tag, time] = rx.messages[0]!;
    assert.equal(tag, 'docker.fl1');
    const ext = time as { ext: number; data: Buffer };
    assert.equal(ext.ext, 0);
    assert.equal(ext.data.length, 8);
    const sec = ext.data.readUInt32BE(0);
    assert.ok(Math.abs(sec - Date.now() / 1000) < 60 && ext.data.readUInt32BE(4) < 1e9);
    const recs = rx.messages.map((m) => m[2] as Record<string, string>);
    assert.equal(
      recs
        .slice(0, 3)
        .map((r) => r['log'])
        .join(''),
      long,
    );
    assert.deepEqual(
      recs.slice(0, 3).map((r) => [r['partial_message'], r['partial_ordinal'], r['partial_last']]),
      [
        ['true', '1', 'false'],
        ['true', '2', 'false'],
        ['true', '3', 'true'],
      ],
    );
    assert.equal(new Set(recs.slice(0, 3).map((r) => r['partial_id'])).size, 1);
    assert.deepEqual(recs[3], { container_id: ID, container_name: '/fl1', source: 'stdout', log: 'short' });
    await driver.close();
  });

  it('without fluentd-async an absent receiver fails the start', async () => {
    const port = await freePort();
    const driver = await fluentdDriver({ 'fluentd-address': `127.0.0.1:${port}` });
    await assert.rejects(driver.start!(), new RegExp(`failed to initialize logging driver: dial tcp 127.0.0.1:${port}: .*ECONNREFUSED`));
    await driver.close();
  });

  it('fluentd-async: a receiver down at start and up later loses nothing within the buffer limit', async () => {
    const port = await freePort();
    const driver = await fluentdDriver({
      'fluentd-address': `127.0.0.1:${port}`,
      'fluentd-async': 'true',
      'fluentd-retry-wait': '50ms',
      'cache-disabled': 'true',
    });
    await driver.start!(); // does not wait for the receiver
    const n = 5000;
    const { input, done } = driver.open!({ stdout: true, stderr: false });
    const body = Buffer.from(Array.from({ length: n }, (_, i) => `async ${i}\n`).join(''));
    for (let off = 0; off < body.length; off += 4096) input.write('stdout', body.subarray(off, off + 4096));
    input.end('stdout');
    await done; // the writer was never held while the receiver was away
    await new Promise((r) => setTimeout(r, 300));
    const { rx } = await receiver({ port });
    await waitFor(() => rx.messages.length >= n, 20_000);
    assert.deepEqual(
      rx.messages.map((m) => (m[2] as Record<string, string>)['log']),
      Array.from({ length: n }, (_, i) => `async ${i}`),
    );
    await driver.close();
  });

  it('tls:// speaks TLS, verified against the system CAs (a self-signed receiver fails the start)', async () => {
    const dir = await newDir();
    const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
    await new Promise<void>((resolve, reject) => {
      const p = spawn(
        'openssl',
        ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-subj', '/CN=localhost', '-days', '1'],
        { stdio: 'ignore' },
      );
      p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`openssl exited ${code}`))));
      p.on('error', reject);
    });
    let handshakes = 0;
    const server = createTlsServer({ key: await readFile(key), cert: await readFile(cert) });
    server.on('tlsClientError', () => handshakes++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    after(() => server.close());
    const port = (server.address() as AddressInfo).port;
    const driver = createLogDriver('fluentd', {
      containerId: ID,
      dir,
      options: { 'fluentd-address': `tls://127.0.0.1:${port}` },
      attrs: ATTRS,
    });
    await assert.rejects(
      driver.start!(),
      new RegExp(`failed to initialize logging driver: dial tls 127.0.0.1:${port}: .*certificate`, 'i'),
    );
    await driver.close();
    await waitFor(() => handshakes > 0);
  });

  it('fluentd-request-ack: each message carries a chunk id; what was not acknowledged is sent again after a reconnection', async () => {
    const logs: string[] = [];
    let conns = 0;
    const server = createServer((s) => {
      const first = conns++ === 0;
      let buf = Buffer.alloc(0);
      let seen = 0;
      s.on('data', (d) => {
        buf = Buffer.concat([buf, d]);
        for (;;) {
          let v: MsgpackValue;
          let off: number;
          try {
            [v, off] = decodeMsgpack(buf);
          } catch (err) {
            if (err instanceof MsgpackShortRead) break;
            throw err;
          }
          buf = buf.subarray(off);
          const [, , record, option] = v as MsgpackValue[];
          const chunk = (option as Record<string, string>)['chunk']!;
          assert.match(chunk, /^[A-Za-z0-9+/=]{24}$/);
          logs.push((record as Record<string, string>)['log']!);
          seen++;
          // the first connection acknowledges 50 messages, then dies with the rest unacknowledged
          if (!first || seen <= 50) s.write(new MsgpackWriter().mapHeader(1).string('ack').string(chunk).toBuffer());
          if (first && seen === 120) return void s.destroy();
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    after(() => server.close());
    const port = (server.address() as AddressInfo).port;
    const driver = await fluentdDriver({
      'fluentd-address': `127.0.0.1:${port}`,
      'fluentd-request-ack': 'true',
      'fluentd-retry-wait': '50ms',
      'cache-disabled': 'true',
    });
    await driver.start!();
    const { input } = driver.open!({ stdout: true, stderr: false });
    for (let i = 0; i < 200; i++) input.write('stdout', Buffer.from(`ack ${i}\n`));
    await waitFor(() => conns === 2 && new Set(logs).size === 200, 20_000);
    input.end('stdout');
    await driver.close();
    const count = (l: string) => logs.filter((x) => x === l).length;
    assert.equal(count('ack 0'), 1, 'an acknowledged message is not sent again');
    assert.equal(count('ack 49'), 1);
    assert.ok(count('ack 60') >= 2, 'a message received but not acknowledged is sent again');
  });

  it('fluentd-async with a small fluentd-buffer-limit: what exceeds it is dropped, the rest arrives', async () => {
    const port = await freePort();
    const driver = await fluentdDriver({
      'fluentd-address': `127.0.0.1:${port}`,
      'fluentd-async': 'true',
      'fluentd-retry-wait': '50ms',
      'fluentd-buffer-limit': '100',
      'cache-disabled': 'true',
    });
    await driver.start!();
    await driver.attach({ stdout: Readable.from([Buffer.from(Array.from({ length: 300 }, (_, i) => `b ${i}\n`).join(''))]) });
    const { rx } = await receiver({ port });
    await waitFor(() => rx.messages.length >= 100, 20_000);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(
      rx.messages.map((m) => (m[2] as Record<string, string>)['log']),
      Array.from({ length: 100 }, (_, i) => `b ${i}`),
    );
    await driver.close();
  });

  /** A Forward receiver that counts connections; `serve` decides per connection what to do. */
  async function countingReceiver(
    serve: (conn: number, s: Socket, onMessage: (f: (v: MsgpackValue[]) => void) => void) => void,
  ): Promise<{ port: number; conns: () => number }> {
    let conns = 0;
    const server = createServer((s) => {
      const conn = conns++;
      let buf = Buffer.alloc(0);
      let handler: (v: MsgpackValue[]) => void = () => {};
      s.on('data', (d) => {
        buf = buf.length ? Buffer.concat([buf, d]) : d;
        for (;;) {
          let v: MsgpackValue;
          let off: number;
          try {
            [v, off] = decodeMsgpack(buf);
          } catch (err) {
            if (err instanceof MsgpackShortRead) break;
            throw err;
          }
          buf = buf.subarray(off);
          handler(v as MsgpackValue[]);
        }
      });
      s.on('error', () => {}); // the driver drops connections on purpose here
      serve(conn, s, (f) => (handler = f));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    after(() => server.close());
    return { port: (server.address() as AddressInfo).port, conns: () => conns };
  }
  const logOf = (v: MsgpackValue[]) => (v[2] as Record<string, string>)['log']!;
  const ackOf = (v: MsgpackValue[]) =>
    new MsgpackWriter()
      .mapHeader(1)
      .string('ack')
      .string((v[3] as Record<string, string>)['chunk']!)
      .toBuffer();

  it('fluentd-read-timeout: an ack that does not come in time drops the connection; the next one gets the messages again', async () => {
    const start = async (port: number, extra: Record<string, string>) => {
      const driver = await fluentdDriver({
        'fluentd-address': `127.0.0.1:${port}`,
        'fluentd-request-ack': 'true',
        'fluentd-retry-wait': '50ms',
        'cache-disabled': 'true',
        ...extra,
      });
      await driver.start!();
      return driver;
    };
    // Without the option a connection waits for its acks as long as it lives.
    let seen = 0;
    const silent = await countingReceiver((_c, _s, on) => on(() => seen++));
    const patient = await start(silent.port, {});
    const { input: pin } = patient.open!({ stdout: true, stderr: false });
    pin.write('stdout', Buffer.from('patient\n'));
    await waitFor(() => seen === 1);
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(silent.conns(), 1, 'no read timeout: the connection stays');
    pin.end('stdout');
    await patient.close();

    // The first connection never acknowledges; the next ones do.
    const logs: Array<[number, string]> = [];
    const { port, conns } = await countingReceiver((conn, s, on) =>
      on((v) => {
        logs.push([conn, logOf(v)]);
        if (conn > 0) s.write(ackOf(v));
      }),
    );
    const driver = await start(port, { 'fluentd-read-timeout': '200ms' });
    const { input } = driver.open!({ stdout: true, stderr: false });
    for (let i = 0; i < 20; i++) input.write('stdout', Buffer.from(`rt ${i}\n`));
    await waitFor(() => logs.filter(([c]) => c === 1).length >= 20, 10_000);
    input.end('stdout');
    await driver.close();
    const on = (c: number) => logs.filter(([x]) => x === c).map(([, l]) => l);
    assert.deepEqual(
      on(0),
      Array.from({ length: 20 }, (_, i) => `rt ${i}`),
    );
    assert.deepEqual(
      on(1),
      Array.from({ length: 20 }, (_, i) => `rt ${i}`),
      'the unacknowledged messages again, whole, on the next connection',
    );
    assert.equal(conns(), 2, 'acknowledged in time: no more reconnections');
  });

  it('fluentd-write-timeout: a receiver that stops reading loses the connection; the next one gets, from a message boundary, what was not taken', async () => {
    const logs: Array<[number, string]> = [];
    const { port, conns } = await countingReceiver((conn, s, on) => {
      on((v) => logs.push([conn, logOf(v)]));
      if (conn === 0) s.pause(); // reads nothing
    });
    const driver = await fluentdDriver({
      'fluentd-address': `127.0.0.1:${port}`,
      'fluentd-write-timeout': '1s',
      'fluentd-retry-wait': '50ms',
      'cache-disabled': 'true',
    });
    await driver.start!();
    const n = 20_000;
    const pad = 'p'.repeat(1000);
    const { input, done } = driver.open!({ stdout: true, stderr: false });
    const body = Buffer.from(Array.from({ length: n }, (_, i) => `wt ${i} ${pad}\n`).join(''));
    for (let off = 0; off < body.length; off += 64 * 1024) {
      if (!input.write('stdout', body.subarray(off, off + 64 * 1024))) await input.writable('stdout');
    }
    input.end('stdout');
    await waitFor(() => logs.some(([, l]) => l.startsWith(`wt ${n - 1} `)), 30_000);
    await done;
    await driver.close();
    assert.equal(conns(), 2, 'one connection dropped, the next one kept (a slow but moving receiver is no timeout)');
    const later = logs.filter(([c]) => c === 1).map(([, l]) => Number(l.split(' ')[1]));
    // Whole messages, in order, up to the last: each one decoded, numbers rising by one.
    assert.ok(later.length > 0 && later.at(-1) === n - 1);
    for (let i = 1; i < later.length; i++) assert.equal(later[i], later[i - 1]! + 1, `order at ${i}`);
  });

  it('fluentd-async-reconnect-interval: in async mode a write on an older connection first replaces it; nothing is lost', async () => {
    const logs: string[] = [];
    const { port, conns } = await countingReceiver((_conn, _s, on) => on((v) => logs.push(logOf(v))));
    const run = async (extra: Record<string, string>, tag: string) => {
      const driver = await fluentdDriver({
        'fluentd-address': `127.0.0.1:${port}`,
        'fluentd-async': 'true',
        'fluentd-retry-wait': '50ms',
        'cache-disabled': 'true',
        ...extra,
      });
      await driver.start!();
      const { input } = driver.open!({ stdout: true, stderr: false });
      for (let burst = 0; burst < 4; burst++) {
        for (let i = 0; i < 10; i++) input.write('stdout', Buffer.from(`${tag} ${burst * 10 + i}\n`));
        await new Promise((r) => setTimeout(r, 250));
      }
      input.end('stdout');
      await waitFor(() => logs.filter((l) => l.startsWith(`${tag} `)).length === 40, 10_000);
      await driver.close();
    };
    const before = conns();
    await run({}, 'steady');
    assert.equal(conns() - before, 1, 'without the interval one connection serves');
    const mid = conns();
    await run({ 'fluentd-async-reconnect-interval': '100ms' }, 'rotating');
    assert.ok(conns() - mid >= 3, `connections: ${conns() - mid}`);
    assert.deepEqual(
      logs.filter((l) => l.startsWith('rotating ')),
      Array.from({ length: 40 }, (_, i) => `rotating ${i}`),
    );
  });
});
