import assert from 'node:assert/strict';
import { test } from 'node:test';
import { familiarString, parseReference, referenceString } from './image-reference.ts';

test('normalises short names to docker.io/library with :latest', () => {
  assert.equal(referenceString(parseReference('busybox')), 'docker.io/library/busybox:latest');
  assert.equal(referenceString(parseReference('user/app:1.2')), 'docker.io/user/app:1.2');
  assert.equal(referenceString(parseReference('index.docker.io/library/busybox')), 'docker.io/library/busybox:latest');
});

test('keeps registries with ports, localhost and digests', () => {
  assert.equal(referenceString(parseReference('localhost:5000/busybox')), 'localhost:5000/busybox:latest');
  assert.equal(referenceString(parseReference('localhost/busybox:x')), 'localhost/busybox:x');
  const d = 'sha256:' + 'a'.repeat(64);
  assert.equal(referenceString(parseReference(`busybox@${d}`)), `docker.io/library/busybox@${d}`);
  assert.equal(familiarString(parseReference('docker.io/library/busybox:1')), 'busybox:1');
  assert.equal(familiarString(parseReference('127.0.0.1:5000/a/b')), '127.0.0.1:5000/a/b:latest');
});

test('refuses malformed references', () => {
  assert.throws(() => parseReference('Busybox'), /must be lowercase/);
  assert.throws(() => parseReference('busy box'), /invalid reference format/);
  assert.throws(() => parseReference('a:b:c'), /invalid reference format/);
  assert.throws(() => parseReference(''), /invalid reference format/);
  assert.throws(() => parseReference('x@sha256:zz'), /invalid/);
});
