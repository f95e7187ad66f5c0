// Version comparison as Go's versions package does it, and dockerd's check of DOCKER_MIN_API_VERSION.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareVersions, minApiVersionError, versionLessThan } from './api-version.ts';

test('versions compare part by part as numbers; a part that is not a number counts as 0', () => {
  assert.equal(compareVersions('1.9', '1.10'), -1);
  assert.equal(compareVersions('1.41', '1.41.0'), 0);
  assert.equal(compareVersions('1.51', '1.5'), 1);
  assert.equal(compareVersions('1.x', '1.0'), 0);
  assert.equal(versionLessThan('1.24', '1.25'), true);
  assert.equal(versionLessThan('1.25', '1.25'), false);
});

test('DOCKER_MIN_API_VERSION: within 1.24–1.51, without a "v"', () => {
  assert.equal(minApiVersionError('1.24'), undefined);
  assert.equal(minApiVersionError('1.51'), undefined);
  assert.equal(minApiVersionError('1.40'), undefined);
  assert.equal(minApiVersionError(''), 'value is empty');
  assert.equal(minApiVersionError('v1.40'), 'API version must be provided without "v" prefix');
  assert.equal(minApiVersionError('1.12'), 'minimum supported API version is 1.24: 1.12');
  assert.equal(minApiVersionError('1.52'), 'maximum supported API version is 1.51: 1.52');
});
