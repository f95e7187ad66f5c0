// containerd's platforms.Parse as dockerd applies it to ?platform=: results and refusals.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { amd64Variant, formatPlatformSpec, parsePlatformSpec, platformSatisfies } from './platform-spec.ts';

test('specifiers read as containerd reads them', () => {
  assert.deepEqual(parsePlatformSpec('linux/amd64'), { os: 'linux', architecture: 'amd64' });
  assert.deepEqual(parsePlatformSpec('linux'), { os: 'linux', architecture: 'amd64' });
  assert.deepEqual(parsePlatformSpec('arm64'), { os: 'linux', architecture: 'arm64' });
  assert.deepEqual(parsePlatformSpec('Linux/x86_64'), { os: 'linux', architecture: 'amd64' });
  assert.deepEqual(parsePlatformSpec('linux/arm64/v8'), { os: 'linux', architecture: 'arm64', variant: 'v8' });
  assert.deepEqual(parsePlatformSpec('linux/arm/v6'), { os: 'linux', architecture: 'arm', variant: 'v6' });
  assert.deepEqual(parsePlatformSpec('linux/armhf'), { os: 'linux', architecture: 'arm' }); // v7 is arm's default: dropped
  assert.deepEqual(parsePlatformSpec('windows/amd64'), { os: 'windows', architecture: 'amd64' });
  // Two parts: any OS/arch pair is taken, known or not (containerd does not check them).
  assert.deepEqual(parsePlatformSpec('plan9/foo'), { os: 'plan9', architecture: 'foo' });
});

test("invalid specifiers are refused in containerd's words", () => {
  const refused: [string, string][] = [
    ['bogus', '"bogus": unknown operating system or architecture: invalid argument'],
    ['linux/*', '"linux/*": wildcards not yet supported: invalid argument'],
    ['a/b/c/d', '"a/b/c/d": cannot parse platform specifier: invalid argument'],
    [
      'linux/am d64',
      '"am d64" is an invalid component of "linux/am d64": platform specifier component must match "^[A-Za-z0-9_.-]+$": invalid argument',
    ],
  ];
  for (const [spec, want] of refused) assert.throws(() => parsePlatformSpec(spec), { message: want }, spec);
  assert.throws(() => parsePlatformSpec('x'.repeat(100_000)), /unknown operating system or architecture/);
  assert.throws(() => parsePlatformSpec('lin ux'), /is an invalid OS component of "lin ux": OSAndVersion specifier component must match/);
});

test('an image satisfies a wanted platform as dockerd judges it', () => {
  const amd = { os: 'linux', architecture: 'amd64' };
  assert.ok(platformSatisfies(amd, amd));
  assert.ok(!platformSatisfies({ os: 'linux', architecture: 'arm64' }, amd));
  assert.ok(!platformSatisfies({ os: 'windows', architecture: 'amd64' }, amd));
  assert.ok(platformSatisfies({ os: 'linux', architecture: 'arm', variant: 'v7' }, { os: 'linux', architecture: 'arm', variant: 'v6' }));
  assert.ok(!platformSatisfies({ os: 'linux', architecture: 'arm', variant: 'v6' }, { os: 'linux', architecture: 'arm', variant: 'v7' }));
  assert.equal(formatPlatformSpec({ os: 'linux', architecture: 'arm', variant: 'v7' }), 'linux/arm/v7');
});

test('the amd64 level from the CPU flags, as dockerd detects it', () => {
  const v2 = ['pni', 'ssse3', 'cx16', 'sse4_1', 'sse4_2', 'popcnt', 'lahf_lm'];
  const v3 = [...v2, 'fma', 'movbe', 'xsave', 'avx', 'f16c', 'bmi1', 'avx2', 'bmi2', 'abm'];
  const v4 = [...v3, 'avx512f', 'avx512dq', 'avx512cd', 'avx512bw', 'avx512vl'];
  assert.equal(amd64Variant(new Set([])), 'v1');
  assert.equal(amd64Variant(new Set(v2)), 'v2');
  assert.equal(amd64Variant(new Set(v3)), 'v3');
  assert.equal(amd64Variant(new Set(v4)), 'v4');
  // AVX-512 without the v3 flags is still v2.
  assert.equal(amd64Variant(new Set([...v2, 'avx512f', 'avx512dq', 'avx512cd', 'avx512bw', 'avx512vl'])), 'v2');
  // A v3 host runs amd64, amd64/v2 and amd64/v3 images, not v4 ones.
  const host = { os: 'linux', architecture: 'amd64', variant: 'v3' };
  assert.ok(platformSatisfies(host, { os: 'linux', architecture: 'amd64' }));
  assert.ok(platformSatisfies(host, { os: 'linux', architecture: 'amd64', variant: 'v2' }));
  assert.ok(!platformSatisfies(host, { os: 'linux', architecture: 'amd64', variant: 'v4' }));
});
