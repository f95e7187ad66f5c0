// The environment switches: defaults, accepted values, and their place in --help.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readEnvironment } from './environment.ts';
import { usageText } from './help.ts';

test('switches read their value when it is one of theirs, else their default', () => {
  assert.deepEqual(readEnvironment({}), {
    ENGINE_PULL_UNPACK: 'staged',
    ENGINE_PULL_FETCH: 'worker',
    ENGINE_PULL_HASH: 'main',
    ENGINE_COMMIT_DIFF: 'upper',
    ENGINE_DISABLE_PIGZ: '',
    ENGINE_RAMDISK: '',
  });
  const e = readEnvironment({
    ENGINE_PULL_UNPACK: 'service',
    ENGINE_PULL_FETCH: 'bogus',
    ENGINE_PULL_HASH: 'worker',
    ENGINE_COMMIT_DIFF: 'service',
    ENGINE_DISABLE_PIGZ: '1',
    ENGINE_RAMDISK: '1',
  });
  assert.deepEqual(e, {
    ENGINE_PULL_UNPACK: 'service',
    ENGINE_PULL_FETCH: 'worker',
    ENGINE_PULL_HASH: 'worker',
    ENGINE_COMMIT_DIFF: 'service',
    ENGINE_DISABLE_PIGZ: '1',
    ENGINE_RAMDISK: '1',
  });
});

test('--help lists every environment variable with its values', () => {
  const help = usageText();
  assert.match(help, /\nEnvironment:\n/);
  assert.match(help, /ENGINE_PULL_UNPACK=staged\|service +How pulled layers are unpacked/);
  assert.match(help, /ENGINE_CERTS_D=<a directory> +Where per-registry TLS certificates/);
});
