// The gelf driver against real UDP and TCP receivers: the datagrams are reassembled from GELF chunks
// and decompressed here, the TCP stream split at its NUL bytes, and every field checked.

import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { createServer, type AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { gunzipSync, inflateSync } from 'node:zlib';
import { collect, runDriverSuite, tempDirs, text, waitFor } from '../driver-suite.ts';
import { createLogDriver, validateLogOptions } from '../index.ts';
import { compress, gelfDatagrams, gelfExtra, gelfJson, GelfUdpEncoder, type GelfCompression } from './gelf.ts';

const ID = 'c0ffee1234567890c0ffee1234567890c0ffee1234567890c0ffee1234567890';
const ATTRS = {
  name: 'web',
  image: 'busybox:latest',
  imageId: 'sha256:abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789',
  command: 'sh -c echo hi',
  created: '2026-01-02T03:04:05.123456789Z',
  'label:team': 'core',
  'label:other': 'x',
  'env:STAGE': 'prod',
  'env:OTHER_X': 'y',
};

/** A GELF UDP receiver: chunks reassembled by message id, payloads decompressed by their magic. */
async function udpReceiver(): Promise<{ port: number; messages: Record<string, unknown>[]; raw: Buffer[]; close: () => void }> {
  const sock = createSocket('udp4');
  const messages: Record<string, unknown>[] = [];
  const raw: Buffer[] = [];
  const partial = new Map<string, Buffer[]>();
  const decode = (payload: Buffer): void => {
    let json: Buffer;
    if (payload[0] === 0x1f && payload[1] === 0x8b) json = gunzipSync(payload);
    else if (payload[0] === 0x78) json = inflateSync(payload);
    else json = payload;
    messages.push(JSON.parse(json.toString()) as Record<string, unknown>);
  };
  sock.on('message', (d) => {
    raw.push(d);
    if (d[0] === 0x1e && d[1] === 0x0f) {
      const id = d.subarray(2, 10).toString('hex');
      const seq = d[10]!;
      const count = d[11]!;
      const parts = partial.get(id) ?? new Array<Buffer>(count);
      parts[seq] = d.subarray(12);
      partial.set(id, parts);
      if (parts.filter(Boolean).length === count) {
        partial.delete(id);
        decode(Buffer.concat(parts));
      }
    } else decode(d);
  });
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  return { port: sock.address().port, messages, raw, close: () => sock.close() };
}

describe('gelf log driver', () => {
  const newDir = tempDirs();

  it('validates options with dockerd messages', () => {
    const v = (o: Record<string, string>) => () => validateLogOptions('gelf', o);
    assert.throws(v({}), /^EngineError: gelf-address is a required parameter$/);
    assert.throws(v({ 'gelf-address': 'http://x:1' }), /gelf: endpoint needs to be TCP or UDP/);
    assert.throws(v({ 'gelf-address': 'udp://x' }), /gelf: please provide gelf-address as proto:\/\/host:port/);
    assert.throws(v({ 'gelf-address': 'udp://x:1', foo: '1' }), /unknown log opt "foo" for gelf log driver/);
    assert.throws(v({ 'gelf-address': 'tcp://x:1', 'gelf-compression-type': 'gzip' }), /compression is only supported on UDP/);
    assert.throws(
      v({ 'gelf-address': 'udp://x:1', 'gelf-compression-type': 'lz4' }),
      /unknown value "lz4" for log opt "gelf-compression-type"/,
    );
    assert.throws(
      v({ 'gelf-address': 'udp://x:1', 'gelf-compression-level': '10' }),
      /unknown value "10" for log opt "gelf-compression-level"/,
    );
    assert.throws(v({ 'gelf-address': 'udp://x:1', 'gelf-tcp-max-reconnect': '1' }), /"gelf-tcp-max-reconnect" is only valid for TCP/);
    assert.throws(
      v({ 'gelf-address': 'tcp://x:1', 'gelf-tcp-reconnect-delay': '-1' }),
      /"gelf-tcp-reconnect-delay" must be a positive integer/,
    );
    assert.throws(
      v({ 'gelf-address': 'udp://x:1', 'labels-regex': '(' }),
      /error parsing regexp for labels-regex: missing closing \): `\(`/,
    );
    v({
      'gelf-address': 'udp://[::1]:12201',
      'gelf-compression-level': '-1',
      tag: '{{.Name}}',
      labels: 'a',
      env: 'B',
      mode: 'non-blocking',
    })();
  });

  it('chunks as go-gelf: 1420-byte datagrams, 12-byte headers, an exact multiple ends with an empty chunk, at most 128', () => {
    assert.deepEqual(gelfDatagrams(Buffer.alloc(1420)).length, 1);
    const three = gelfDatagrams(Buffer.alloc(1408 * 2));
    assert.deepEqual(
      three.map((c) => c.length),
      [1420, 1420, 12],
    );
    assert.ok(three.every((c, i) => c[0] === 0x1e && c[1] === 0x0f && c[10] === i && c[11] === 3));
    assert.ok(three.every((c) => c.subarray(2, 10).equals(three[0]!.subarray(2, 10))));
    assert.throws(() => gelfDatagrams(Buffer.alloc(1408 * 128)), /msg too large, would need 129 chunks/);
  });

  for (const type of ['gzip', 'zlib', 'none'] as const) {
    it(`sends every line over UDP (${type}), with dockerd's fields, long lines chunked`, async () => {
      const rx = await udpReceiver();
      after(rx.close);
      const dir = await newDir();
      const options = {
        'env-regex': '^OTHER_',
        'gelf-address': `udp://127.0.0.1:${rx.port}`,
        'gelf-compression-type': type,
        labels: 'team',
        env: 'STAGE,NOPE',
        tag: '{{.Name}}/{{.ImageName}}',
      };
      const driver = createLogDriver('gelf', { containerId: ID, dir, options, attrs: ATTRS });
      await driver.start!();
      const big = 'x'.repeat(12000); // incompressible enough with none; chunked in every case for none
      const out = ['hello', 'with "quotes" <b> & é', '', big].map((l) => `${l}\n`);
      const before = Date.now();
      await driver.attach({ stdout: Readable.from(out.map((l) => Buffer.from(l))), stderr: Readable.from([Buffer.from('oops\n')]) });
      await waitFor(() => rx.messages.length === 4);
      const byMsg = new Map(rx.messages.map((m) => [m['short_message'], m]));
      assert.deepEqual([...byMsg.keys()].sort(), [big, 'hello', 'oops', 'with "quotes" <b> & é'].sort(), 'the empty line is not sent');
      const m = byMsg.get('hello')!;
      assert.equal(m['version'], '1.1');
      assert.equal(m['host'], hostname());
      assert.equal(m['level'], 6);
      assert.equal(byMsg.get('oops')!['level'], 3);
      assert.ok(typeof m['timestamp'] === 'number' && Math.abs((m['timestamp'] as number) * 1000 - before) < 60_000);
      assert.equal(m['_container_id'], ID);
      assert.equal(m['_container_name'], 'web');
      assert.equal(m['_image_id'], ATTRS.imageId);
      assert.equal(m['_image_name'], 'busybox:latest');
      assert.equal(m['_command'], 'sh -c echo hi');
      assert.equal(m['_created'], ATTRS.created);
      assert.equal(m['_tag'], 'web/busybox:latest');
      assert.equal(m['_team'], 'core');
      assert.equal(m['_STAGE'], 'prod');
      assert.equal(m['_other'], undefined);
      assert.equal(m['_OTHER_X'], 'y', 'env-regex (RE2) selects by pattern');
      if (type === 'none')
        assert.ok(
          rx.raw.some((d) => d[0] === 0x1e),
          'the long line went in chunks',
        );
      // docker logs reads the dual-logging cache
      assert.deepEqual(text(await collect(driver, { stderr: false })), out);
      await driver.close();
    });
  }

  it('the UDP encoder sends the bytes the string path makes, for plain and escaped lines, every framing', () => {
    const extra = gelfExtra(ID, { labels: 'team', env: 'STAGE' }, ATTRS);
    const lines = [
      'plain 123',
      'x'.repeat(99),
      'quote " and \\ back',
      '<b>&amp;</b>',
      'tab\there',
      'héllo ☃',
      '\u007f del',
      'y'.repeat(4000),
    ];
    for (const [type, level] of [
      ['gzip', 1],
      ['zlib', 1],
      ['none', 1],
      ['gzip', 6],
    ] as [GelfCompression, number][]) {
      const enc = new GelfUdpEncoder('host-1', extra, type, level);
      for (const [i, line] of lines.entries())
        for (const stream of ['stdout', 'stderr'] as const) {
          const rec = { stream, line: Buffer.from(line), timeNano: 1767323045123456789n + BigInt(i) * 1_000_000n };
          const want = Buffer.concat(
            gelfDatagrams(compress(Buffer.from(gelfJson(rec, 'host-1', extra)), type, level)).map((c) =>
              c[0] === 0x1e ? c.subarray(12) : c,
            ),
          );
          const got = enc.encode(rec)!;
          // chunk ids are random: the payloads after the 12-byte headers must match
          assert.ok(
            Buffer.concat(got.map((c) => (c[0] === 0x1e && got.length > 1 ? c.subarray(12) : c))).equals(want),
            `${type}/${level} ${stream} ${JSON.stringify(line.slice(0, 20))}`,
          );
        }
      assert.equal(enc.encode({ stream: 'stdout', line: Buffer.alloc(0), timeNano: 1n }), null, 'an empty line sends nothing');
    }
  });

  it("the raw JSON is go-gelf's: field order, Go escapes, sorted extras", async () => {
    const rx = await udpReceiver();
    after(rx.close);
    const driver = createLogDriver('gelf', {
      containerId: ID,
      dir: await newDir(),
      options: { 'gelf-address': `udp://127.0.0.1:${rx.port}`, 'gelf-compression-type': 'none' },
      attrs: ATTRS,
    });
    await driver.start!();
    await driver.attach({ stdout: Readable.from([Buffer.from('a<b\n')]) });
    await waitFor(() => rx.raw.length === 1);
    const s = rx.raw[0]!.toString();
    assert.match(
      s,
      /^\{"version":"1\.1","host":"[^"]+","short_message":"a\\u003cb","timestamp":\d+(\.\d{1,3})?,"level":6,"_command":"sh -c echo hi","_container_id":"c0ffee[0-9a-f]+","_container_name":"web","_created":"[^"]+","_image_id":"sha256:[0-9a-f]+","_image_name":"busybox:latest","_tag":"c0ffee123456"\}$/,
    );
    await driver.close();
  });

  it('TCP: NUL-delimited uncompressed objects; an unreachable endpoint fails the start', async () => {
    const got: Buffer[] = [];
    const server = createServer((s) => s.on('data', (d) => got.push(d)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    after(() => server.close());
    const port = (server.address() as AddressInfo).port;
    const driver = createLogDriver('gelf', {
      containerId: ID,
      dir: await newDir(),
      options: { 'gelf-address': `tcp://127.0.0.1:${port}`, 'cache-disabled': 'true' },
      attrs: ATTRS,
    });
    await driver.start!();
    const lines = Array.from({ length: 500 }, (_, i) => `line ${i}\n`);
    await driver.attach({ stdout: Readable.from(lines.map((l) => Buffer.from(l))) });
    await driver.close();
    await waitFor(() => Buffer.concat(got).toString().split('\0').length === 501);
    const objs = Buffer.concat(got)
      .toString()
      .split('\0')
      .slice(0, -1)
      .map((j) => JSON.parse(j) as Record<string, unknown>);
    assert.deepEqual(
      objs.map((o) => o['short_message']),
      lines.map((l) => l.slice(0, -1)),
    );
    assert.throws(() => driver.read({ follow: false, stdout: true, stderr: true }), /configured logging driver does not support reading/);

    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const dead = createLogDriver('gelf', {
      containerId: ID,
      dir: await newDir(),
      options: { 'gelf-address': `tcp://127.0.0.1:${deadPort}` },
      attrs: ATTRS,
    });
    await assert.rejects(
      dead.start!(),
      new RegExp(`failed to initialize logging driver: gelf: cannot connect to GELF endpoint: 127.0.0.1:${deadPort} .*ECONNREFUSED`),
    );
    await dead.close();
  });

  it('TCP: a receiver that restarts gets the lines written while it was away (reconnection)', async () => {
    const got: Buffer[] = [];
    const conns: import('node:net').Socket[] = [];
    const listen = async (port = 0) => {
      const srv = createServer((c) => (conns.push(c), c.on('data', (d) => got.push(d))));
      await new Promise<void>((r) => srv.listen(port, '127.0.0.1', r));
      return srv;
    };
    const first = await listen();
    const port = (first.address() as AddressInfo).port;
    const driver = createLogDriver('gelf', {
      containerId: ID,
      dir: await newDir(),
      options: {
        'gelf-address': `tcp://127.0.0.1:${port}`,
        'gelf-tcp-reconnect-delay': '0',
        'gelf-tcp-max-reconnect': '100',
        'cache-disabled': 'true',
      },
      attrs: ATTRS,
    });
    await driver.start!();
    const { input, done } = driver.open!({ stdout: true, stderr: false });
    input.write('stdout', Buffer.from('before\n'));
    const messages = () =>
      Buffer.concat(got)
        .toString()
        .split('\0')
        .filter(Boolean)
        .map((j) => (JSON.parse(j) as Record<string, string>)['short_message']);
    await waitFor(() => messages().includes('before'));
    for (const c of conns) c.destroy();
    await new Promise((r) => first.close(r));
    await waitFor(() => (driver as unknown as { transport: { queued: number; sock?: unknown } }).transport.sock === undefined);
    input.write('stdout', Buffer.from('while away\n'));
    const second = await listen(port);
    after(() => (conns.forEach((c) => c.destroy()), second.close()));
    await waitFor(() => messages().includes('while away'));
    input.end('stdout');
    await done;
    await driver.close();
    assert.deepEqual(messages(), ['before', 'while away']);
  });

  it('mode=non-blocking never holds the writer: a slow receiver makes drops, not waits', async () => {
    // A TCP receiver that never reads: the kernel buffers fill, then our queue.
    const conns: import('node:net').Socket[] = [];
    const server = createServer((s) => (s.pause(), conns.push(s)));
    after(() => conns.forEach((c) => c.destroy()));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    after(() => server.close());
    const port = (server.address() as AddressInfo).port;
    const driver = createLogDriver('gelf', {
      containerId: ID,
      dir: await newDir(),
      options: { 'gelf-address': `tcp://127.0.0.1:${port}`, mode: 'non-blocking', 'max-buffer-size': '64k', 'cache-disabled': 'true' },
      attrs: ATTRS,
    });
    await driver.start!();
    const { input, done } = driver.open!({ stdout: true, stderr: false });
    const line = Buffer.from(`${'y'.repeat(1000)}\n`.repeat(64));
    for (let i = 0; i < 2000; i++) assert.equal(input.write('stdout', line), true); // 128 MB offered
    input.end('stdout');
    await done;
    assert.ok((driver as unknown as { dropped: number }).dropped > 0, 'entries were dropped');
    await driver.close();
  });
});

// `docker logs` of a remote driver is the dual-logging cache's: the shared behaviour suite (follow,
// since/until, tail, partial lines, stream separation) through a gelf driver sending to a UDP sink.
const sink = createSocket('udp4');
before(() => new Promise<void>((r) => sink.bind(0, '127.0.0.1', r)));
after(() => sink.close());
runDriverSuite('gelf (dual-logging cache)', {
  create: (options, dir) =>
    createLogDriver('gelf', {
      containerId: ID,
      dir,
      options: { ...options, 'gelf-address': `udp://127.0.0.1:${sink.address().port}` },
      attrs: ATTRS,
    }),
});
