// json-file's on-disk format compared field by field (and byte by byte) with what dockerd writes.

import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { collect, tempDirs, text } from './driver-suite.ts';
import { formatTimeNano, parseTimeNano } from '../util/time.ts';
import { open } from 'node:fs/promises';
import { gzipLastTime } from './gzip.ts';
import { createLogDriver, logAttrs, type LogDriver } from './index.ts';

const GO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{0,8}[1-9])?Z$/;

describe('json-file format', () => {
  const newDir = tempDirs();
  async function write(
    stdout: Buffer[],
    opts: { options?: Record<string, string>; attrs?: Record<string, string>; stderr?: Buffer[] } = {},
  ): Promise<{ driver: LogDriver; lines: string[] }> {
    const dir = await newDir();
    const driver = createLogDriver('json-file', {
      containerId: 'c0ffee0123456789',
      dir,
      options: opts.options ?? {},
      attrs: opts.attrs ?? {},
    });
    await driver.attach({ stdout: Readable.from(stdout), ...(opts.stderr && { stderr: Readable.from(opts.stderr) }) });
    await driver.close();
    const raw = await readFile(driver.logPath, 'utf8');
    assert.ok(raw.endsWith('\n'));
    return { driver, lines: raw.slice(0, -1).split('\n') };
  }

  it('writes <dir>/<id>-json.log with log, stream, time in that order', async () => {
    const { driver, lines } = await write([Buffer.from('hi\nthere\n')], { stderr: [Buffer.from('oops\n')] });
    assert.match(driver.logPath, /\/c0ffee0123456789-json\.log$/);
    assert.equal(lines.length, 3);
    const read = await collect(driver);
    for (const [i, line] of lines.entries()) {
      assert.match(line, /^\{"log":"[^]*","stream":"std(out|err)","time":"[^"]+"\}$/);
      const obj = JSON.parse(line) as { log: string; stream: string; time: string };
      assert.deepEqual(Object.keys(obj), ['log', 'stream', 'time']);
      assert.match(obj.time, GO_TIME, 'RFC 3339 nano, UTC, trailing zeros trimmed');
      const msg = read.find((m) => m.line.toString() === obj.log)!;
      assert.equal(msg.stream, obj.stream);
      assert.equal(msg.timeNano, parseTimeNano(obj.time));
      assert.equal(obj.time, formatTimeNano(msg.timeNano));
      void i;
    }
    assert.deepEqual(lines.map((l) => (JSON.parse(l) as { log: string }).log).sort(), ['hi\n', 'oops\n', 'there\n']);
  });

  it('escapes exactly like dockerd (short forms only for \\" \\\\ \\n \\r; \\u00XX for < > & and controls)', async () => {
    const { lines } = await write([Buffer.from('a"b\\c<d>e&f\tg\rh\u0001i\u007fj\u2028k\u2029l é ✓ 😀\n')]);
    const body = lines[0]!.slice(0, lines[0]!.indexOf(',"stream"'));
    assert.equal(body, '{"log":"a\\"b\\\\c\\u003cd\\u003ee\\u0026f\\u0009g\\rh\\u0001i\u007fj\\u2028k\\u2029l é ✓ 😀\\n"');
  });

  it('replaces each invalid UTF-8 byte with \\ufffd, as Go does', async () => {
    const bytes = [
      0x61,
      0xff, //             stray byte
      0xc3,
      0x28, //             lead without continuation
      0xc0,
      0x80, //             overlong
      0xed,
      0xa0,
      0x80, //       surrogate
      0xf4,
      0x90,
      0x80,
      0x80, // above U+10FFFF
      0xe2,
      0x82, //             truncated by the end of the line
      0x0a,
    ];
    const { lines } = await write([Buffer.from(bytes)]);
    const body = lines[0]!.slice(0, lines[0]!.indexOf(',"stream"'));
    const r = '\\ufffd';
    assert.equal(body, `{"log":"a${r}${r}(${r}${r}${r}${r}${r}${r}${r}${r}${r}${r}${r}\\n"`);
  });

  it('writes partial entries without a newline and the last piece with it', async () => {
    const { lines } = await write([Buffer.from(`${'a'.repeat(20_000)}\nend`)]);
    const logs = lines.map((l) => (JSON.parse(l) as { log: string }).log);
    assert.deepEqual(
      logs.map((l) => l.length),
      [16384, 20000 - 16384 + 1, 3],
    );
    assert.ok(!logs[0]!.endsWith('\n') && logs[1]!.endsWith('\n') && logs[2] === 'end');
    const times = lines.map((l) => (JSON.parse(l) as { time: string }).time);
    assert.equal(times[0], times[1], 'pieces of one line share its timestamp');
  });

  it('adds attrs selected by labels, labels-regex, env, env-regex and tag (sorted, HTML-escaped)', async () => {
    const attrs = logAttrs({
      name: '/web',
      image: 'nginx:1',
      imageId: 'sha256:abcdef0123456789',
      labels: { 'com.example.team': 'a<b', 'com.example.tier': 'front', other: 'x' },
      env: ['FOO=1', 'BAR=2', 'BAZ=3=4', 'PATH=/bin'],
    });
    const options = {
      labels: 'com.example.team,missing',
      'labels-regex': '^com\\.example\\.ti',
      env: 'FOO',
      'env-regex': '^BA',
      tag: '{{.Name}}/{{.ID}}/{{.ImageName}}',
    };
    const { driver, lines } = await write([Buffer.from('x\n')], { options, attrs });
    assert.match(
      lines[0]!,
      /^\{"log":"x\\n","stream":"stdout","attrs":\{"BAR":"2","BAZ":"3=4","FOO":"1","com\.example\.team":"a\\u003cb","com\.example\.tier":"front","tag":"web\/c0ffee012345\/nginx:1"\},"time":"[^"]+"\}$/,
    );
    assert.deepEqual(text(await collect(driver)), ['x\n']);
  });

  it('reads files written by dockerd, including other field orders, and skips lines it cannot parse', async () => {
    const dir = await newDir();
    const driver = createLogDriver('json-file', { containerId: 'old', dir, options: {}, attrs: {} });
    await writeFile(
      driver.logPath,
      [
        '{"log":"one\\n","stream":"stdout","time":"2024-01-02T03:04:05.123456789Z"}',
        '{"log":"two \\u003c\\u0026\\u003e \\"q\\"\\n","stream":"stderr","attrs":{"time":"not this"},"time":"2024-01-02T03:04:05.5Z"}',
        'not json at all',
        '{"time": "2024-01-02T03:04:06+01:00", "stream": "stdout", "log": "three\\n"}',
        '{"log":"partial","stream":"stdout","time":"2024-01-02T03:04:07Z"}',
      ].join('\n') + '\n',
    );
    const all = await collect(driver);
    assert.deepEqual(
      all.map((m) => [m.stream, m.line.toString(), m.timeNano, m.partial ?? false]),
      [
        ['stdout', 'one\n', 1704164645123456789n, false],
        ['stderr', 'two <&> "q"\n', 1704164645500000000n, false],
        ['stdout', 'three\n', 1704161046000000000n, false],
        ['stdout', 'partial', 1704164647000000000n, true],
      ],
    );
    assert.deepEqual(text(await collect(driver, { tail: 2 })), ['three\n', 'partial']);
  });

  it('rotates like dockerd: a file is cut once it has reached max-size', async () => {
    const dir = await newDir();
    const driver = createLogDriver('json-file', { containerId: 'r', dir, options: { 'max-size': '1k', 'max-file': '5' }, attrs: {} });
    await driver.attach({ stdout: Readable.from(Array.from({ length: 60 }, (_, i) => Buffer.from(`line number ${i}\n`))) });
    await driver.close();
    const names = (await readdir(dir)).sort();
    assert.deepEqual(names, ['r-json.log', 'r-json.log.1', 'r-json.log.2', 'r-json.log.3', 'r-json.log.4']);
    for (const name of names.slice(1)) {
      const content = await readFile(join(dir, name), 'utf8');
      const last = content.slice(0, -1).lastIndexOf('\n') + 1;
      assert.ok(content.length >= 1000, `${name} reached max-size`);
      assert.ok(last < 1000, `${name} was cut at the first entry written after reaching max-size`);
    }
  });

  it('max-file without max-size never rotates (as in dockerd)', async () => {
    const dir = await newDir();
    const driver = createLogDriver('json-file', { containerId: 'n', dir, options: { 'max-file': '3' }, attrs: {} });
    await driver.attach({ stdout: Readable.from([Buffer.from('x\n'.repeat(10_000))]) });
    await driver.close();
    assert.deepEqual(await readdir(dir), ['n-json.log']);
  });

  it("gzips rotated files with dockerd's lastTime header and skips them for a later since", async () => {
    const dir = await newDir();
    const driver = createLogDriver('json-file', {
      containerId: 'z',
      dir,
      options: { 'max-size': '1k', 'max-file': '3', compress: 'true' },
      attrs: {},
    });
    await driver.attach({ stdout: Readable.from(Array.from({ length: 60 }, (_, i) => Buffer.from(`gz line ${i}\n`))) });
    await driver.close();
    const gz = await readFile(join(dir, 'z-json.log.1.gz'));
    const plain = gunzipSync(gz).toString().slice(0, -1).split('\n');
    const lastLine = JSON.parse(plain.at(-1)!) as { time: string };
    const h = await open(join(dir, 'z-json.log.1.gz'));
    try {
      const last = await gzipLastTime(h);
      assert.ok(last !== undefined && last >= parseTimeNano(lastLine.time));
    } finally {
      await h.close();
    }
    assert.equal(gz.readUInt8(3) & 4, 4, 'FEXTRA flag');
    assert.match(gz.subarray(12, 12 + gz.readUInt16LE(10)).toString(), /^\{"lastTime":"[^"]+"\}$/);
    const current = await readFile(join(dir, 'z-json.log'), 'utf8');
    const since = parseTimeNano((JSON.parse(current.split('\n')[0]!) as { time: string }).time);
    const got = await collect(driver, { since });
    assert.ok(got.length > 0 && got.every((m) => m.timeNano >= since));
  });
});
