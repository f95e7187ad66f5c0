import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EngineError } from '../errors.ts';
import { extraAttributes, fileLogConfig, logAttrs, parseSize, renderTag, validateLogOptions } from './options.ts';

function rejects(kind: string, options: Record<string, string>, message: string): void {
  assert.throws(
    () => validateLogOptions(kind, options),
    (err: unknown) => err instanceof EngineError && err.code === 'INVALID_PARAMETER' && err.status === 400 && err.message === message,
    `${kind} ${JSON.stringify(options)} → ${message}`,
  );
}

describe('log options', () => {
  it('parses sizes like go-units FromHumanSize (decimal units)', () => {
    assert.equal(parseSize('10k'), 10_000);
    assert.equal(parseSize('10m'), 10_000_000);
    assert.equal(parseSize('1g'), 1_000_000_000);
    assert.equal(parseSize('10MB'), 10_000_000);
    assert.equal(parseSize('10 m'), 10_000_000);
    assert.equal(parseSize('10kib'), 10_000);
    assert.equal(parseSize('1.5k'), 1500);
    assert.equal(parseSize('123'), 123);
    assert.equal(parseSize('-1'), -1);
    assert.equal(parseSize('1k', true), 1024);
    for (const bad of ['abc', '', '10x', 'k', '1.2.3k', '-5']) assert.throws(() => parseSize(bad), /invalid size/, bad);
  });

  it('accepts what dockerd accepts', () => {
    validateLogOptions('json-file', {});
    validateLogOptions('json-file', {
      'max-size': '10m',
      'max-file': '3',
      compress: 'true',
      labels: 'a,b',
      'labels-regex': '^a',
      env: 'X',
      'env-regex': '^Y',
      tag: '{{.Name}}',
    });
    validateLogOptions('json-file', { 'max-size': '-1' });
    validateLogOptions('json-file', { mode: 'non-blocking', 'max-buffer-size': '4m', 'cache-disabled': 'true', 'cache-max-size': '5m' });
    validateLogOptions('local', { 'max-size': '5m', 'max-file': '2', compress: 'false', labels: 'a' });
    validateLogOptions('local', { 'max-file': '1', compress: 'false' });
    validateLogOptions('none', { anything: 'goes' });
  });

  it("rejects with dockerd's messages as invalid-parameter errors", () => {
    rejects('awslogs', {}, "logger: no log driver named 'awslogs' is registered");
    rejects('json-file', { 'max-sise': '1m' }, "unknown log opt 'max-sise' for json-file log driver");
    rejects('local', { 'syslog-address': 'x' }, "unknown log opt 'syslog-address' for log driver local");
    rejects('json-file', { 'max-size': 'huge' }, "invalid size: 'huge'");
    rejects('json-file', { 'max-size': '0' }, 'max-size must be a positive number');
    rejects('json-file', { 'max-file': '0', 'max-size': '1m' }, 'max-file cannot be less than 1');
    rejects('json-file', { 'max-file': 'two' }, 'strconv.Atoi: parsing "two": invalid syntax');
    rejects('json-file', { compress: 'maybe' }, 'strconv.ParseBool: parsing "maybe": invalid syntax');
    rejects(
      'json-file',
      { compress: 'true', 'max-size': '1m' },
      'compress cannot be true when max-file is less than 2 or max-size is not set',
    );
    rejects(
      'json-file',
      { compress: 'true', 'max-file': '3' },
      'compress cannot be true when max-file is less than 2 or max-size is not set',
    );
    rejects('local', { 'max-file': '1' }, 'compression cannot be enabled when max file count is 1');
    rejects('local', { 'max-file': '-2' }, 'max-file must not be negative');
    rejects('local', { 'max-size': 'big' }, "invalid value for max-size: big: invalid size: 'big'");
    rejects('json-file', { mode: 'sometimes' }, 'logger: logging mode not supported: sometimes');
    rejects('json-file', { 'max-buffer-size': '1m' }, "logger: max-buffer-size option is only supported with 'mode=non-blocking'");
    rejects('json-file', { 'cache-disabled': 'perhaps' }, 'invalid value for option cache-disabled: perhaps');
    assert.throws(
      () => validateLogOptions('json-file', { 'env-regex': '(' }),
      (e: unknown) => e instanceof EngineError && e.code === 'INVALID_PARAMETER' && /env-regex/.test(e.message),
    );
  });

  it("resolves rotation settings with each driver's defaults", () => {
    assert.deepEqual(fileLogConfig('json-file', {}), { maxSize: Infinity, maxFiles: 1, compress: false });
    assert.deepEqual(fileLogConfig('json-file', { 'max-size': '10k', 'max-file': '3', compress: 'true' }), {
      maxSize: 10_000,
      maxFiles: 3,
      compress: true,
    });
    assert.deepEqual(fileLogConfig('local', { 'max-size': '1m', 'max-file': '2' }), { maxSize: 1_000_000, maxFiles: 2, compress: true });
    assert.deepEqual(fileLogConfig('local', { 'max-size': '0' }), { maxSize: Infinity, maxFiles: 1, compress: false });
  });

  it('selects extra attributes like dockerd and renders tags', () => {
    const attrs = logAttrs({
      name: '/db',
      image: 'postgres:16',
      imageId: 'sha256:0123456789abcdef',
      labels: { a: '1', ab: '2', b: '3' },
      env: ['X=1', 'XY=2', 'NOVALUE'],
    });
    assert.deepEqual(
      extraAttributes('f'.repeat(64), { labels: 'a,zz', 'labels-regex': '^b$', env: 'X,NOVALUE', 'env-regex': 'Y$' }, attrs),
      { a: '1', b: '3', X: '1', XY: '2' },
    );
    assert.equal(
      renderTag('{{.ID}} {{.FullID}} {{.Name}} {{.ImageName}} {{.ImageID}} {{.ImageFullID}} {{.Unknown}}', 'f'.repeat(64), attrs),
      `${'f'.repeat(12)} ${'f'.repeat(64)} db postgres:16 0123456789ab sha256:0123456789abcdef {{.Unknown}}`,
    );
  });
});
