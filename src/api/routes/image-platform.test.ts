// The platform parameters of the image routes: decoding as dockerd's DecodePlatform, and the fuzzy
// match of containerd's platforms.Only (aliases, arm variants, arm on arm64).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkImagePlatform, decodePlatform, platformMatches } from './image-platform.ts';

test('decode: JSON with os and architecture; optional fields alone are refused', () => {
  assert.deepEqual(decodePlatform('{"os":"linux","architecture":"arm","variant":"v7"}'), {
    os: 'linux',
    architecture: 'arm',
    variant: 'v7',
  });
  assert.throws(() => decodePlatform('linux/amd64'), /failed to parse platform: /);
  assert.throws(() => decodePlatform('{"variant":"v7"}'), /optional platform fields provided, but OS and Architecture are missing/);
  assert.throws(() => decodePlatform('{"os":"linux"}'), /both OS and Architecture must be provided/);
  assert.throws(() => decodePlatform('{"os":1,"architecture":"amd64"}'), /failed to parse platform: json: cannot unmarshal number/);
});

test('match: aliases, arm variants up to the one asked for, arm on arm64, never another OS', () => {
  const p = (os: string, architecture: string, variant?: string) => ({ os, architecture, ...(variant ? { variant } : {}) });
  assert.equal(platformMatches(p('linux', 'amd64'), p('linux', 'x86_64')), true);
  assert.equal(platformMatches(p('linux', 'arm64'), p('linux', 'aarch64', 'v8')), true);
  assert.equal(platformMatches(p('linux', 'arm', 'v7'), p('linux', 'arm', 'v6')), true);
  assert.equal(platformMatches(p('linux', 'arm', 'v6'), p('linux', 'arm', 'v7')), false);
  assert.equal(platformMatches(p('linux', 'arm64'), p('linux', 'arm', 'v7')), true);
  assert.equal(platformMatches(p('linux', 'amd64'), p('linux', 'arm64')), false);
  assert.equal(platformMatches(p('windows', 'amd64'), p('linux', 'amd64')), false);
});

test('an image that names no platform is not refused', () => {
  assert.doesNotThrow(() => checkImagePlatform('x', { Os: '', Architecture: '' }, { os: 'linux', architecture: 'arm64' }));
  assert.throws(
    () => checkImagePlatform('x', { Os: 'linux', Architecture: 'amd64' }, { os: 'linux', architecture: 'arm64' }),
    /does not match/,
  );
});
