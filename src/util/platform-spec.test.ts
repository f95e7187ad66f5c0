// containerd's platforms.Parse as dockerd applies it to ?platform=: results and refusals.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatPlatformSpec, parsePlatformSpec, platformSatisfies } from './platform-spec.ts';

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
