// X-Registry-Config entries chosen for a base image's registry.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { authForImage } from './registry-auth.ts';

test('the entry of the image\'s registry, Docker Hub under its historical key, none otherwise', () => {
  const all = {
    'https://index.docker.io/v1/': { username: 'hub', password: 'h' },
    'reg.example:5000': { username: 'priv', password: 'p' },
    'https://other.example': { auth: 'b3RoZXI6bw==' },
  };
  assert.equal(authForImage(all, 'busybox').username, 'hub');
  assert.equal(authForImage(all, 'reg.example:5000/team/app:1').username, 'priv');
  assert.equal(authForImage(all, 'other.example/x').auth, 'b3RoZXI6bw==');
  assert.equal(authForImage(all, 'other.example/x').serveraddress, 'https://other.example');
  assert.deepEqual(authForImage(all, 'unknown.example/x'), {});
  assert.deepEqual(authForImage({}, 'busybox'), {});
});
