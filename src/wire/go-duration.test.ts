// Go's ParseDuration and Duration.String: values and error words as Go gives them.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatGoDuration, parseGoDuration, tryGoDuration } from './go-duration.ts';

describe('Go durations', () => {
  test('parses what time.ParseDuration parses', () => {
    const cases: [string, bigint][] = [
      ['0', 0n],
      ['-0', 0n],
      ['5s', 5_000_000_000n],
      ['1h30m', 5_400_000_000_000n],
      ['-1.5s', -1_500_000_000n],
      ['+.5m', 30_000_000_000n],
      ['1.s', 1_000_000_000n],
      ['300µs', 300_000n],
      ['300μs', 300_000n],
      ['2us1ns', 2_001n],
      ['2562047h47m16.854775807s', (1n << 63n) - 1n],
    ];
    for (const [text, ns] of cases) assert.equal(parseGoDuration(text), ns, text);
  });

  test("refuses what Go refuses, in Go's words", () => {
    const cases: [string, string][] = [
      ['', 'time: invalid duration ""'],
      ['-', 'time: invalid duration "-"'],
      ['.s', 'time: invalid duration ".s"'],
      ['1', 'time: missing unit in duration "1"'],
      ['10', 'time: missing unit in duration "10"'],
      ['1d', 'time: unknown unit "d" in duration "1d"'],
      ['s', 'time: invalid duration "s"'],
      ['1s ', 'time: unknown unit "s " in duration "1s "'],
      ['9999999999999h', 'time: invalid duration "9999999999999h"'],
      ['2562047h47m16.854775808s', 'time: invalid duration "2562047h47m16.854775808s"'],
    ];
    for (const [text, message] of cases) assert.throws(() => parseGoDuration(text), { message }, text);
    assert.equal(tryGoDuration('1d'), undefined);
    assert.equal(tryGoDuration('1m'), 60_000_000_000n);
  });

  test('formats as Duration.String', () => {
    const cases: [bigint | number, string][] = [
      [0n, '0s'],
      [1n, '1ns'],
      [1_500n, '1.5µs'],
      [500_000_000n, '500ms'],
      [1_500_000_000n, '1.5s'],
      [90_000_000_000n, '1m30s'],
      [7_200_000_000_000n, '2h0m0s'],
      [-1_000, '-1µs'],
      [999n, '999ns'],
      [1_500_000, '1.5ms'],
      [60e9, '1m0s'],
      [3723.5e9, '1h2m3.5s'],
      [-2e9, '-2s'],
    ];
    for (const [ns, text] of cases) assert.equal(formatGoDuration(ns), text);
  });
});
