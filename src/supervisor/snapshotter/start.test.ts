import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { findOnPath } from '../containerd-process.ts';
import { fuseOverlayfsMissing } from './start.ts';

const HOST_PATH = `${process.env.PATH ?? ''}:/usr/sbin:/usr/bin:/sbin:/bin`;

test('what a host lacks for fuse-overlayfs is named in one sentence', () => {
  assert.equal(
    fuseOverlayfsMissing('/nonexistent', '/nonexistent/fuse'),
    'storage driver fuse-overlayfs needs the fuse-overlayfs program (Debian package fuse-overlayfs), mount.fuse3 (Debian package fuse3), ' +
      'a usable /dev/fuse (the fuse kernel module)',
  );
});

test(
  'a host with the programs and the device lacks nothing',
  { skip: !findOnPath('fuse-overlayfs', HOST_PATH) || !existsSync('/dev/fuse') ? 'fuse-overlayfs not installed here' : false },
  () => {
    assert.equal(fuseOverlayfsMissing(HOST_PATH), null);
    assert.match(fuseOverlayfsMissing(HOST_PATH, '/nonexistent/fuse') ?? '', /needs a usable \/dev\/fuse/);
  },
);
