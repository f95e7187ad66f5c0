import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeEnv } from './create-config.ts';

test('env: request replaces image entries by name, later wins, a bare name unsets', () => {
  assert.deepEqual(mergeEnv(['PATH=/bin', 'A=1', 'B=2'], ['A=x', 'C=3', 'C=4', 'B']), ['PATH=/bin', 'A=x', 'C=4']);
  assert.deepEqual(mergeEnv([], ['X']), [], 'a bare name with nothing to unset adds nothing');
});

test('env: 100 000 entries merge in linear time', () => {
  const req = Array.from({ length: 100_000 }, (_v, i) => `VAR_${i}=v${i}`);
  const t = performance.now();
  const out = mergeEnv(['PATH=/bin'], req);
  assert.equal(out.length, 100_001);
  assert.ok(performance.now() - t < 500, `took ${performance.now() - t} ms`);
});
