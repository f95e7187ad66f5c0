import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeConfig, mergeEnv, mergeEnvInSlices } from './create-config.ts';

test("env: the request's entries as sent, then the image's whose name the request does not set (dockerd's merge)", () => {
  assert.deepEqual(mergeEnv(['PATH=/bin', 'A=1', 'B=2'], ['A=x', 'C=3', 'C=4', 'B']), ['A=x', 'C=3', 'C=4', 'B', 'PATH=/bin']);
  assert.deepEqual(mergeEnv([], ['X']), ['X'], 'a bare name stays in Config.Env (docker-py checks it)');
  assert.deepEqual(mergeEnv(['PATH=/bin'], []), ['PATH=/bin']);
});

test('env: 100 000 entries merge in linear time', () => {
  // One bound, no second timing to compare with: linear work takes ~50 ms here, the quadratic merge
  // this replaced (10^10 steps) took 90 s. 5 s is far from both, so load never trips it.
  const req = Array.from({ length: 100_000 }, (_v, i) => `VAR_${i}=v${i}`);
  const t = performance.now();
  const out = mergeEnv(['PATH=/bin'], req);
  const ms = performance.now() - t;
  assert.equal(out.length, 100_001);
  assert.equal(out[99_999], 'VAR_99999=v99999');
  assert.equal(out[100_000], 'PATH=/bin');
  assert.ok(ms < 5_000, `100 000 entries took ${ms.toFixed(0)} ms`);
});

test('env: the sliced merge gives what the one-piece merge gives', async () => {
  const image = ['PATH=/bin', 'V7=image', 'GONE=1'];
  const req = Array.from({ length: 131_072 }, (_v, i) => (i === 5 ? 'GONE' : `V${i % 100_000}=${i}`));
  const sliced = await mergeEnvInSlices(image, req);
  assert.deepEqual(sliced, mergeEnv(image, req));
  assert.equal(sliced.length, 131_073, 'every request entry, and the image PATH the request does not set');
  assert.equal(sliced[131_072], 'PATH=/bin');
  assert.deepEqual(await mergeEnvInSlices(['A=1'], ['A=2', 'B']), ['A=2', 'B']);
});

test('healthcheck: the image fills in what the request leaves empty, field by field', () => {
  const image = { config: { Cmd: ['sh'], Healthcheck: { Test: ['CMD', 'true'], Interval: 30e9, Retries: 3 } } };
  const id = 'a'.repeat(64);
  const only = mergeConfig({ Healthcheck: { Interval: 5e9 } }, image, id);
  assert.deepEqual(only.Healthcheck, { Test: ['CMD', 'true'], Interval: 5e9, Retries: 3 });
  const own = mergeConfig({ Healthcheck: { Test: ['NONE'] } }, image, id);
  assert.deepEqual(own.Healthcheck, { Test: ['NONE'], Interval: 30e9, Retries: 3 });
  assert.deepEqual(mergeConfig({}, image, id).Healthcheck, image.config.Healthcheck);
  assert.equal(mergeConfig({ Healthcheck: { Test: ['CMD', 'x'] } }, { config: { Cmd: ['sh'] } }, id).Healthcheck!.Interval, undefined);
});

test('entrypoint: [] keeps none but takes the image Cmd; [""] resets it; an own one drops the image Cmd', () => {
  const image = { config: { Entrypoint: ['/entry'], Cmd: ['image-cmd'] } };
  const id = 'b'.repeat(64);
  const empty = mergeConfig({ Entrypoint: [] }, image, id);
  assert.deepEqual([empty.Entrypoint, empty.Cmd], [[], ['image-cmd']]);
  const reset = mergeConfig({ Entrypoint: [''], Cmd: ['echo', 'hi'] }, image, id);
  assert.deepEqual([reset.Entrypoint, reset.Cmd], [null, ['echo', 'hi']]);
  assert.throws(() => mergeConfig({ Entrypoint: [''] }, image, id), /no command specified/);
  const own = mergeConfig({ Entrypoint: ['/other'] }, image, id);
  assert.deepEqual([own.Entrypoint, own.Cmd], [['/other'], []]);
  const unset = mergeConfig({}, image, id);
  assert.deepEqual([unset.Entrypoint, unset.Cmd], [['/entry'], ['image-cmd']]);
});
