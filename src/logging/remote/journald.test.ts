// The journald driver against a unix datagram socket bound here (the native helper's receiving
// side) standing in for /run/systemd/journal/socket: each datagram is decoded from journald's native
// protocol, text and binary fields alike. Also syslog over unixgram, the same helper.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { collect, tempDirs, text, waitFor } from '../driver-suite.ts';
import { createLogDriver, validateLogOptions } from '../index.ts';
import { journalField, journalKey, parseJournalDatagram } from './journald.ts';
import { unixgramHelper } from './unixgram.ts';

const ID = '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
const ATTRS = { name: 'jd1', image: 'busybox:1.36', imageId: 'sha256:0123', 'label:com.example.team': 'core', 'env:STAGE': 'prod' };

/** A bound unix datagram socket polled every few ms; the datagrams in arrival order. */
function bindReceiver(path: string): Buffer[] {
  const h = unixgramHelper()!;
  const fd = h.open(path, true);
  assert.ok(fd >= 0, `bind ${path}: ${fd}`);
  const got: Buffer[] = [];
  const buf = Buffer.alloc(256 << 10);
  const timer = setInterval(() => {
    for (;;) {
      const n = h.recv(fd, buf);
      if (n < 0) break;
      got.push(Buffer.from(buf.subarray(0, n)));
    }
  }, 2);
  after(() => (clearInterval(timer), h.close(fd)));
  return got;
}

describe('journald log driver', { skip: unixgramHelper() ? false : 'build/native/unixgram.node is not built' }, () => {
  const newDir = tempDirs();

  it('validates options with dockerd messages; encodes fields as the native protocol', () => {
    assert.throws(() => validateLogOptions('journald', { foo: 'x' }), /^EngineError: unknown log opt 'foo' for journald log driver$/);
    validateLogOptions('journald', { tag: '{{.Name}}', labels: 'a', env: 'B', mode: 'non-blocking', 'max-buffer-size': '4m' });
    assert.equal(journalField('A', 'b c').toString(), 'A=b c\n');
    const bin = journalField('A', 'x\ny');
    assert.deepEqual([...bin], [...Buffer.from('A\n'), 3, 0, 0, 0, 0, 0, 0, 0, ...Buffer.from('x\ny\n')]);
    assert.equal(journalKey('com.example-team'), 'COM_EXAMPLE_TEAM');
    assert.equal(journalKey('_x.y'), 'X_Y');
  });

  it("sends one datagram per entry with dockerd's fields; docker logs reads the cache", async () => {
    const dir = await newDir();
    const sock = join(dir, 'journal.sock');
    const got = bindReceiver(sock);
    process.env.ENGINE_TEST_JOURNAL_SOCKET = sock;
    after(() => delete process.env.ENGINE_TEST_JOURNAL_SOCKET);
    const driver = createLogDriver('journald', {
      containerId: ID,
      dir,
      options: { labels: 'com.example.team', env: 'STAGE' },
      attrs: ATTRS,
    });
    await driver.start!();
    const out = Array.from({ length: 500 }, (_, i) => `out ${i} é\n`);
    const long = 'L'.repeat(20_000);
    await driver.attach({
      stdout: Readable.from([Buffer.from(out.join('')), Buffer.from(`${long}\n`)]),
      stderr: Readable.from([Buffer.from('err\n')]),
    });
    await waitFor(() => got.length === 503);
    const fields = got.map(parseJournalDatagram);
    const stdout = fields.filter((f) => f['PRIORITY'] === '6');
    assert.deepEqual(
      stdout.slice(0, 500).map((f) => `${f['MESSAGE']}\n`),
      out,
    );
    const f = stdout[0]!;
    assert.equal(f['CONTAINER_ID'], ID.slice(0, 12));
    assert.equal(f['CONTAINER_ID_FULL'], ID);
    assert.equal(f['CONTAINER_NAME'], 'jd1');
    assert.equal(f['CONTAINER_TAG'], ID.slice(0, 12));
    assert.equal(f['SYSLOG_IDENTIFIER'], ID.slice(0, 12));
    assert.equal(f['IMAGE_NAME'], 'busybox:1.36');
    assert.equal(f['COM_EXAMPLE_TEAM'], 'core');
    assert.equal(f['STAGE'], 'prod');
    assert.match(f['SYSLOG_TIMESTAMP']!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.match(f['CONTAINER_LOG_EPOCH']!, /^[0-9a-f]{64}$/);
    const ordinals = fields.map((x) => Number(x['CONTAINER_LOG_ORDINAL']));
    assert.deepEqual(
      [...ordinals].sort((a, b) => a - b),
      Array.from({ length: 503 }, (_, i) => i + 1),
    );
    assert.equal(fields.find((x) => x['PRIORITY'] === '3')!['MESSAGE'], 'err');
    const pieces = stdout.slice(500);
    assert.equal(pieces.map((p) => p['MESSAGE']).join(''), long);
    assert.deepEqual(
      pieces.map((p) => [p['CONTAINER_PARTIAL_ORDINAL'], p['CONTAINER_PARTIAL_LAST'], p['CONTAINER_PARTIAL_MESSAGE']]),
      [
        ['1', 'false', 'true'],
        ['2', 'true', undefined],
      ],
    );
    assert.equal(text(await collect(driver)).join('').length, out.join('').length + long.length + 1 + 4, 'the cache holds every byte');
    await driver.close();
  });

  it('without a journal socket the start fails as dockerd says it', async () => {
    const dir = await newDir();
    process.env.ENGINE_TEST_JOURNAL_SOCKET = join(dir, 'absent.sock');
    after(() => delete process.env.ENGINE_TEST_JOURNAL_SOCKET);
    const driver = createLogDriver('journald', { containerId: ID, dir, options: {}, attrs: ATTRS });
    await assert.rejects(driver.start!(), /failed to initialize logging driver: journald is not enabled on this host/);
    await driver.close();
  });

  it('syslog over unixgram: one datagram per line', async () => {
    const dir = await newDir();
    const sock = join(dir, 'log.sock');
    const got = bindReceiver(sock);
    const driver = createLogDriver('syslog', {
      containerId: ID,
      dir,
      options: { 'syslog-address': `unixgram://${sock}`, 'syslog-format': 'rfc5424' },
      attrs: ATTRS,
    });
    await driver.start!();
    await driver.attach({ stdout: Readable.from([Buffer.from('one\ntwo\n')]) });
    await waitFor(() => got.length === 2);
    assert.match(got[0]!.toString(), new RegExp(`^<30>1 \\S+ \\S+ 0123456789ab ${process.pid} 0123456789ab - one\\n$`));
    await driver.close();
  });
});
