// splitTarget: the request target's path and query, as WHATWG URL parsing gives them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { splitTarget } from './server.ts';

test('splitTarget agrees with new URL() on plain and unusual request targets', () => {
  const targets = [
    '/_ping',
    '/v1.51/containers/json?all=1&filters=%7B%22status%22%3A%5B%22exited%22%5D%7D',
    '/containers/abc/json?size=true&x=a+b&y=%20',
    '/images/docker.io/library/busybox:latest/json',
    '/a/./b',
    '/a/../b',
    '/a/b/..',
    '/a/%2e%2e/b',
    '/a%2Fb/json',
    '/a\\b',
    '/a b/c',
    '/a"b<c>',
    '//x//y',
    '/x//y',
    '/x?q=1#frag',
    '/x?q=a b&r="c"',
    '/x?',
    '/é/ü?ä=ö',
    "/x/!$&'()*+,;=:@~-._/y",
  ];
  for (const t of targets) {
    const want = new URL(t, 'http://engine');
    const got = splitTarget(t);
    assert.equal(got.pathname, want.pathname, t);
    assert.deepEqual([...got.searchParams], [...want.searchParams], t);
  }
});
