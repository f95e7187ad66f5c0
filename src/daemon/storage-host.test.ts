import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { storageHostRefusal, type StorageHost } from './storage-host.ts';

/** A host described by what it has: filesystems, loaded/installed modules, tools, the data root's filesystem. */
function host(h: { fs?: string[]; loaded?: string[]; installed?: string[]; tools?: string[]; dev?: string[]; root: string }): StorageHost {
  return {
    filesystems: () => h.fs ?? [],
    module: (name) => ({ loaded: !!h.loaded?.includes(name), installed: !!h.installed?.includes(name) }),
    tool: (name) => !!h.tools?.includes(name),
    exists: (p) => !!h.dev?.includes(p),
    fsOf: () => h.root,
  };
}

describe('storage drivers the host cannot serve', () => {
  test('zfs: the missing module and tool are named, each with its package', () => {
    const both = storageHostRefusal('zfs', '/d', true, [], host({ root: 'extfs' }));
    assert.equal(
      both,
      'storage driver zfs is not available on this host: the zfs kernel module is not loaded, nor installed for this kernel (Debian: zfs-dkms); the zfs tool is not installed (Debian: zfsutils-linux)',
    );
    const notLoaded = storageHostRefusal('zfs', '/d', true, [], host({ root: 'extfs', installed: ['zfs'], tools: ['zfs'] }));
    assert.equal(notLoaded, 'storage driver zfs is not available on this host: the zfs kernel module is not loaded (modprobe zfs)');
    const noTool = storageHostRefusal('zfs', '/d', true, [], host({ root: 'zfs', fs: ['zfs'] }));
    assert.equal(noTool, 'storage driver zfs is not available on this host: the zfs tool is not installed (Debian: zfsutils-linux)');
    const wrongRoot = storageHostRefusal('zfs', '/d', true, [], host({ root: 'extfs', dev: ['/dev/zfs'], tools: ['zfs'] }));
    assert.equal(wrongRoot, 'storage driver zfs needs the data root on a ZFS dataset: /d is on extfs');
    assert.equal(storageHostRefusal('zfs', '/d', true, [], host({ root: 'zfs', loaded: ['zfs'], tools: ['zfs'] })), undefined);
  });

  test('btrfs: the data root must be on btrfs (unless containerd is not ours); quotas need the btrfs tool', () => {
    assert.equal(
      storageHostRefusal('btrfs', '/d', true, [], host({ root: 'extfs', fs: ['btrfs'] })),
      'storage driver btrfs needs the data root on a btrfs filesystem: /d is on extfs (make one with mkfs.btrfs from btrfs-progs and mount it there)',
    );
    assert.equal(
      storageHostRefusal('btrfs', '/d', true, [], host({ root: 'xfs' })),
      'storage driver btrfs needs the data root on a btrfs filesystem: /d is on xfs; this kernel has no btrfs support either',
    );
    assert.equal(storageHostRefusal('btrfs', '/d', true, [], host({ root: 'btrfs' })), undefined);
    assert.equal(storageHostRefusal('btrfs', '/d', false, [], host({ root: 'extfs' })), undefined);
    assert.equal(
      storageHostRefusal('btrfs', '/d', true, ['btrfs.min_space=10M'], host({ root: 'btrfs' })),
      'storage-opt btrfs.min_space needs the btrfs tool for its quotas, which is not installed (Debian: btrfs-progs)',
    );
    assert.equal(storageHostRefusal('btrfs', '/d', true, ['btrfs.min_space=10M'], host({ root: 'btrfs', tools: ['btrfs'] })), undefined);
  });

  test('overlay2 is left to containerd', () => {
    assert.equal(storageHostRefusal('overlay2', '/d', true, [], host({ root: 'extfs' })), undefined);
  });
});
