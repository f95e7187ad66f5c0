import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { statusOf } from '../../../errors.ts';
import { btrfsMinSpace, BtrfsSizeLimit, layerSizeLimit, NoSizeLimit } from './layer-size.ts';

/** The 500 and message dockerd's graph drivers answer. */
function refuses(fn: () => unknown, message: string): void {
  assert.throws(fn, (err: Error) => {
    assert.equal(err.message, message);
    assert.equal(statusOf(err), 500);
    return true;
  });
}

describe("containers' --storage-opt per driver", () => {
  test('btrfs.min_space is read as go-units RAMInBytes; other daemon options are refused', () => {
    assert.equal(btrfsMinSpace([]), 0);
    assert.equal(btrfsMinSpace(['btrfs.min_space=16M']), 16 * 2 ** 20);
    assert.equal(btrfsMinSpace(['BTRFS.MIN_SPACE=1.5g']), 1.5 * 2 ** 30);
    refuses(() => btrfsMinSpace(['btrfs.min_space=lots']), "invalid size: 'lots'");
    refuses(() => btrfsMinSpace(['btrfs.size=1G']), 'unknown option btrfs.size');
    refuses(() => btrfsMinSpace(['btrfs.min_space']), 'unable to parse key/value option: btrfs.min_space');
  });

  test('btrfs: size against min_space, in dockerd words', () => {
    const limit = new BtrfsSizeLimit('/x', 16 * 2 ** 20);
    assert.equal(limit.check({}), undefined);
    assert.equal(limit.check({ foo: '1' }), undefined, 'read only when size is given');
    assert.equal(limit.check({ size: '20M' }), 20 * 2 ** 20);
    refuses(() => limit.check({ size: '8M' }), 'btrfs: storage size cannot be less than 16.78MB');
    refuses(() => limit.check({ size: '0' }), 'btrfs: invalid storage size: 0B');
    refuses(() => limit.check({ size: 'abc' }), "invalid size: 'abc'");
    refuses(() => limit.check({ size: '20M', Foo: '1' }), 'unknown option foo');
    assert.equal(new BtrfsSizeLimit('/x', 0).check({ size: '1k' }), 1024, 'no minimum without btrfs.min_space');
  });

  test('overlay2 refuses size (no project quotas here) and unknown keys; the rest take none', () => {
    const ov = layerSizeLimit('overlay2', [], undefined);
    assert.ok(ov instanceof NoSizeLimit);
    assert.equal(ov.check({}), undefined);
    refuses(() => ov.check({ size: '1G' }), "--storage-opt is supported only for overlay over xfs with 'pquota' mount option");
    refuses(() => ov.check({ Foo: '1' }), 'Unknown option foo');
    refuses(() => layerSizeLimit('fuse-overlayfs', [], undefined).check({ size: '1G' }), '--storage-opt is not supported');
    assert.ok(layerSizeLimit('btrfs', ['btrfs.min_space=1M'], '/x') instanceof BtrfsSizeLimit);
  });
});
