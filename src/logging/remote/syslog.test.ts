// The syslog driver against a real rsyslogd (Debian's rsyslog) started here on private UDP, TCP and
// unix-stream inputs with its own configuration and work directory: the messages rsyslog parsed are
// read back from the file it writes. The exact bytes of each format are checked against a raw receiver.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../../test/helpers/ports.ts';
import { collect, tempDirs, text, waitFor } from '../driver-suite.ts';
import { createLogDriver, validateLogOptions } from '../index.ts';
import { syslogMessage } from './syslog.ts';

const ID = 'feedface1234567890feedface1234567890feedface1234567890feedface12';
const ATTRS = { name: 'sys1', image: 'busybox', imageId: 'sha256:0123', 'label:team': 'core' };
const RSYSLOGD = '/usr/sbin/rsyslogd';

describe('syslog log driver', () => {
  const newDir = tempDirs();

  it('validates options with dockerd messages', () => {
    const v = (o: Record<string, string>) => () => validateLogOptions('syslog', o);
    assert.throws(v({ foo: 'x' }), /^EngineError: unknown log opt 'foo' for syslog log driver$/);
    assert.throws(v({ 'syslog-address': 'http://x:1' }), /unsupported scheme: 'http'/);
    assert.throws(v({ 'syslog-address': 'unix:///nonexistent/log' }), /stat \/nonexistent\/log: no such file or directory/);
    assert.throws(v({ 'syslog-facility': 'bogus' }), /invalid syslog facility/);
    assert.throws(v({ 'syslog-facility': '24' }), /invalid syslog facility/);
    assert.throws(v({ 'syslog-format': 'rfc9999' }), /Invalid syslog format/);
    v({
      'syslog-address': 'udp://127.0.0.1',
      'syslog-facility': 'local7',
      'syslog-format': 'rfc5424micro',
      tag: 'x',
      mode: 'non-blocking',
    })();
    v({ 'syslog-facility': '23' })();
  });

  it('formats as srslog: unix default, rfc3164, rfc5424, rfc5424micro, RFC 5425 length framing', () => {
    const rec = { stream: 'stderr' as const, line: Buffer.from('hello'), timeNano: 1_700_000_000_123_456_789n };
    const o = { facility: 3 << 3, tag: 'web', host: 'h1', pid: 42, lengthFramed: false };
    const t = new Date(1_700_000_000_123);
    const stamp = `${t.toLocaleString('en-US', { month: 'short' })} ${String(t.getDate()).padStart(2, ' ')} ${t.toTimeString().slice(0, 8)}`;
    assert.equal(syslogMessage(rec, { ...o, format: '' }), `<27>${stamp} web[42]: hello\n`);
    assert.equal(syslogMessage({ ...rec, stream: 'stdout' }, { ...o, format: 'rfc3164' }), `<30>${stamp} h1 web[42]: hello\n`);
    assert.match(
      syslogMessage(rec, { ...o, format: 'rfc5424' }),
      /^<27>1 2023-11-1\dT\d\d:\d\d:20(Z|[+-]\d\d:\d\d) h1 web 42 web - hello\n$/,
    );
    assert.match(
      syslogMessage(rec, { ...o, format: 'rfc5424micro' }),
      /^<27>1 2023-11-1\dT\d\d:\d\d:20\.123456(Z|[+-]\d\d:\d\d) h1 web 42 web - hello\n$/,
    );
    const framed = syslogMessage(rec, { ...o, format: 'rfc5424', lengthFramed: true });
    const [len, ...rest] = framed.split(' ');
    assert.equal(Number(len), Buffer.byteLength(rest.join(' ')));
  });

  it('sends raw bytes over UDP as srslog does (default format, facility and tag)', async () => {
    const sock = createSocket('udp4');
    const got: string[] = [];
    sock.on('message', (m) => got.push(m.toString()));
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
    after(() => sock.close());
    const driver = createLogDriver('syslog', {
      containerId: ID,
      dir: await newDir(),
      options: { 'syslog-address': `udp://127.0.0.1:${sock.address().port}`, 'syslog-facility': 'local3' },
      attrs: ATTRS,
    });
    after(() => driver.close());
    await driver.start!();
    await driver.attach({ stdout: Readable.from([Buffer.from('a\n\nb\n')]), stderr: Readable.from([Buffer.from('c\n')]) });
    await waitFor(() => got.length === 3);
    const a = got.find((l) => l.endsWith(': a\n'))!;
    assert.match(a, new RegExp(`^<158>\\w{3} [ \\d]\\d \\d\\d:\\d\\d:\\d\\d feedface1234\\[${process.pid}\\]: a\\n$`));
    assert.match(
      got.find((l) => l.endsWith(': c\n'))!,
      /^<155>.* feedface1234\[\d+\]: c\n$/,
    );
    assert.deepEqual(text(await collect(driver)).sort(), ['\n', 'a\n', 'b\n', 'c\n']);
  });

  it('the default address is the local syslog socket; without one the start fails as srslog says', async (t) => {
    if (['/dev/log', '/var/run/syslog', '/var/run/log'].some((p) => existsSync(p) && statSync(p).isSocket()))
      return t.skip('this host has a local syslog socket');
    const driver = createLogDriver('syslog', { containerId: ID, dir: await newDir(), options: {}, attrs: ATTRS });
    await assert.rejects(driver.start!(), /^EngineError: failed to initialize logging driver: Unix syslog delivery error$/);
    await driver.close();
  });

  it('tcp+tls: verified with syslog-tls-ca-cert, RFC 5425 length framing for rfc5424; an unknown CA fails the start', async () => {
    const dir = await newDir();
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    await new Promise<void>((resolve, reject) => {
      const p = spawn(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-keyout',
          key,
          '-out',
          cert,
          '-subj',
          '/CN=localhost',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
          '-days',
          '1',
        ],
        { stdio: 'ignore' },
      );
      p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`openssl exited ${code}`))));
      p.on('error', reject);
    });
    const got: Buffer[] = [];
    const server = createTlsServer({ key: await readFile(key), cert: await readFile(cert) }, (s) => s.on('data', (d) => got.push(d)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    after(() => server.close());
    const address = `tcp+tls://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const driver = createLogDriver('syslog', {
      containerId: ID,
      dir,
      options: { 'syslog-address': address, 'syslog-tls-ca-cert': cert, 'syslog-format': 'rfc5424', tag: 'tls' },
      attrs: ATTRS,
    });
    await driver.start!();
    await driver.attach({ stdout: Readable.from([Buffer.from('one\ntwo\n')]) });
    await driver.close();
    await waitFor(() => Buffer.concat(got).includes('two'));
    const stream = Buffer.concat(got).toString();
    const frames: string[] = [];
    for (let rest = stream; rest.length > 0;) {
      const sp = rest.indexOf(' ');
      const len = Number(rest.slice(0, sp));
      frames.push(
        Buffer.from(rest.slice(sp + 1))
          .subarray(0, len)
          .toString(),
      );
      rest = Buffer.from(rest.slice(sp + 1))
        .subarray(len)
        .toString();
    }
    assert.equal(frames.length, 2);
    assert.match(frames[0]!, /^<30>1 \S+ \S+ tls \d+ tls - one\n$/);
    const untrusted = createLogDriver('syslog', {
      containerId: ID,
      dir: await newDir(),
      options: { 'syslog-address': address },
      attrs: ATTRS,
    });
    await assert.rejects(untrusted.start!(), /failed to initialize logging driver: dial tcp .*(self.signed|certificate)/i);
    await untrusted.close();
    const skip = createLogDriver('syslog', {
      containerId: ID,
      dir: await newDir(),
      options: { 'syslog-address': address, 'syslog-tls-skip-verify': 'true' },
      attrs: ATTRS,
    });
    await skip.start!();
    await skip.close();
  });

  describe('with rsyslogd', { skip: existsSync(RSYSLOGD) ? false : 'rsyslog is not installed (scripts/setup.sh test)' }, () => {
    let dir: string;
    let proc: ChildProcess;
    let udp: number;
    let tcp: number;
    let unixPath: string;
    const out = () => join(dir, 'out.log');
    before(async () => {
      dir = await newDir();
      [udp, tcp] = [await freePort(), await freePort()];
      unixPath = join(dir, 'stream.sock');
      const conf = [
        `global(workDirectory="${dir}")`,
        'module(load="imudp")',
        'module(load="imtcp")',
        'module(load="imptcp")',
        `input(type="imudp" address="127.0.0.1" port="${udp}")`,
        `input(type="imtcp" address="127.0.0.1" port="${tcp}")`,
        `input(type="imptcp" path="${unixPath}" unlink="on")`,
        'template(name="f" type="string" string="%pri%|%syslogfacility-text%|%syslogseverity%|%syslogtag%|%hostname%|%app-name%|%procid%|%msg%\\n")',
        `*.* action(type="omfile" file="${out()}" template="f")`,
      ].join('\n');
      await writeFile(join(dir, 'rsyslog.conf'), `${conf}\n`);
      proc = spawn(RSYSLOGD, ['-n', '-f', join(dir, 'rsyslog.conf'), '-i', join(dir, 'rsyslogd.pid')], {
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      await waitFor(() => existsSync(unixPath), 20_000);
    });
    after(() => proc?.kill());

    const lines = async (): Promise<string[]> => (existsSync(out()) ? (await readFile(out(), 'utf8')).split('\n').filter(Boolean) : []);

    for (const [proto, format] of [
      ['udp', ''],
      ['tcp', 'rfc3164'],
      ['tcp', 'rfc5424'],
      ['unix', 'rfc5424micro'],
    ] as const) {
      it(`rsyslog receives every line over ${proto} (${format || 'default'} format)`, async () => {
        const address = proto === 'unix' ? `unix://${unixPath}` : `${proto}://127.0.0.1:${proto === 'udp' ? udp : tcp}`;
        const mark = `${proto}-${format || 'default'}`;
        const driver = createLogDriver('syslog', {
          containerId: ID,
          dir: await newDir(),
          options: { 'syslog-address': address, ...(format ? { 'syslog-format': format } : {}), tag: `{{.Name}}-${mark}` },
          attrs: ATTRS,
        });
        await driver.start!();
        const n = 200;
        const body = Array.from({ length: n }, (_, i) => `${mark} line ${i} "q" é\n`).join('');
        await driver.attach({ stdout: Readable.from([Buffer.from(body)]), stderr: Readable.from([Buffer.from(`${mark} oops\n`)]) });
        await driver.close();
        let mine: string[] = [];
        await waitFor(async () => (mine = (await lines()).filter((l) => l.includes(`sys1-${mark}`))).length === n + 1, 20_000);
        const fields = mine.map((l) => l.split('|'));
        const first = fields.find((f) => f[7]!.trim() === `${mark} line 0 "q" é`)!;
        assert.ok(first, mine.slice(0, 3).join('\n'));
        assert.deepEqual(first.slice(0, 3), ['30', 'daemon', '6']);
        const err = fields.find((f) => f[7]!.trim() === `${mark} oops`)!;
        assert.deepEqual(err.slice(0, 3), ['27', 'daemon', '3']);
        if (format.startsWith('rfc5424')) {
          assert.equal(first[5], `sys1-${mark}`, 'APP-NAME is the tag');
          assert.equal(first[6], String(process.pid), 'PROCID is the daemon pid');
          assert.equal(first[4], hostname());
        } else {
          assert.equal(first[3], `sys1-${mark}[${process.pid}]:`);
          if (format === 'rfc3164') assert.equal(first[4], hostname());
        }
        const order = fields.filter((f) => f[2] === '6').map((f) => Number(/line (\d+)/.exec(f[7]!)![1]));
        if (proto !== 'udp')
          assert.deepEqual(
            order,
            [...order].sort((a, b) => a - b),
            'stream order kept',
          );
      });
    }

    it('a TCP receiver that is not there fails the start (srslog dials at create)', async () => {
      const port = await freePort();
      const driver = createLogDriver('syslog', {
        containerId: ID,
        dir: await newDir(),
        options: { 'syslog-address': `tcp://127.0.0.1:${port}` },
        attrs: ATTRS,
      });
      await assert.rejects(driver.start!(), new RegExp(`failed to initialize logging driver: dial tcp 127.0.0.1:${port}: .*ECONNREFUSED`));
      await driver.close();
    });
  });
});
