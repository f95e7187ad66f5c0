import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { EngineError } from '../errors.ts';
import { RUNC_SHIM, RuntimeRegistry, rootFromArgs } from './runtimes.ts';

test('rootFromArgs: --root <dir> and --root=<dir>, the last one wins (as in runc)', () => {
  assert.equal(rootFromArgs(['--debug']), undefined);
  assert.equal(rootFromArgs(['--root', '/a']), '/a');
  assert.equal(rootFromArgs(['--root=/a', '--systemd-cgroup', '--root', '/b']), '/b');
  assert.equal(rootFromArgs(['--root']), undefined);
});

test('path runtimes: runtimeArgs go into a wrapper; their --root becomes the shim root; /info shows what was configured', () => {
  const execRoot = mkdtempSync(join(tmpdir(), 'runtimes-'));
  try {
    const reg = new RuntimeRegistry(execRoot, {
      plain: { path: '/usr/sbin/runc' },
      args: { path: '/usr/sbin/runc', runtimeArgs: ['--root', '/tmp/r2', '--debug'] },
      typed: { runtimeType: RUNC_SHIM, options: { BinaryName: '/opt/runc', Root: '/tmp/r3' } },
    });
    assert.deepEqual(reg.resolve('plain'), {
      name: 'plain',
      shim: RUNC_SHIM,
      binary: '/usr/sbin/runc',
      configured: { path: '/usr/sbin/runc' },
    });
    const args = reg.resolve('args');
    assert.equal(args.root, '/tmp/r2');
    assert.equal(args.binary, join(execRoot, 'runtimes', 'args'));
    assert.equal(readFileSync(args.binary!, 'utf8'), "#!/bin/sh\nexec '/usr/sbin/runc' '--root' '/tmp/r2' '--debug' \"$@\"\n");
    const typed = reg.resolve('typed');
    assert.equal(typed.binary, '/opt/runc');
    assert.equal(typed.root, '/tmp/r3');
    assert.deepEqual(reg.specs(), {
      runc: { path: 'runc' },
      plain: { path: '/usr/sbin/runc' },
      args: { path: '/usr/sbin/runc', runtimeArgs: ['--root', '/tmp/r2', '--debug'] },
      typed: { runtimeType: RUNC_SHIM },
    });
  } finally {
    rmSync(execRoot, { recursive: true, force: true });
  }
});

test("unknown names are a 400 with dockerd's message", () => {
  const reg = new RuntimeRegistry(tmpdir(), {});
  assert.throws(
    () => reg.resolve('nope'),
    (err: EngineError) => {
      assert.equal(err.status, 400);
      assert.equal(err.message, 'unknown or invalid runtime name: nope');
      return true;
    },
  );
});
