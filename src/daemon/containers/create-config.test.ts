import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeEnv, mergeEnvInSlices } from './create-config.ts';

test('env: request replaces image entries by name, later wins, a bare name unsets', () => {
  assert.deepEqual(mergeEnv(['PATH=/bin', 'A=1', 'B=2'], ['A=x', 'C=3', 'C=4', 'B']), ['PATH=/bin', 'A=x', 'C=4']);
  assert.deepEqual(mergeEnv([], ['X']), [], 'a bare name with nothing to unset adds nothing');
});

test('env: 100 000 entries merge in linear time', () => {
  // One bound, no second timing to compare with: linear work takes ~50 ms here, the quadratic merge
  // this replaced (10^10 steps) took 90 s. 5 s is far from both, so load never trips it.
  const req = Array.from({ length: 100_000 }, (_v, i) => `VAR_${i}=v${i}`);
  const t = performance.now();
  const out = mergeEnv(['PATH=/bin'], req);
  const ms = performance.now() - t;
  assert.equal(out.length, 100_001);
  assert.equal(out[100_000], 'VAR_99999=v99999');
  assert.ok(ms < 5_000, `100 000 entries took ${ms.toFixed(0)} ms`);
});

test('env: the sliced merge gives what the one-piece merge gives', async () => {
  const image = ['PATH=/bin', 'V7=image', 'GONE=1'];
  const req = Array.from({ length: 131_072 }, (_v, i) => (i === 5 ? 'GONE' : `V${i % 100_000}=${i}`));
  const sliced = await mergeEnvInSlices(image, req);
  assert.deepEqual(sliced, mergeEnv(image, req));
  assert.equal(sliced.length, 100_001);
  assert.equal(sliced[1], 'V7=100007', 'an image entry is replaced in place by the last request entry');
  assert.deepEqual(await mergeEnvInSlices(['A=1'], ['A=2', 'B']), ['A=2']);
});
