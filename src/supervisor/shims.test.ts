// Unit tests of the orphan-shim helpers that need no containerd (the e2e test
// test/e2e/startup-leftovers.test.ts ends real shims).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findShims, shimSocketPath } from './shims.ts';

describe('shimSocketPath', () => {
  it('names the socket containerd-shim-runc-v2 1.6 printed for this address, namespace and ID', () => {
    // Printed by `containerd-shim-runc-v2 -namespace engine -id fakeorphan -address <this> start`.
    assert.equal(
      shimSocketPath('/tmp/cs-shim-RiEB/containerd.sock', 'engine', 'fakeorphan'),
      '/run/containerd/s/d59454de7f3141b487f4c0e8cc4c419940b7ee9234db24caa0e79d784a1ecc5d',
    );
  });
});

describe('findShims', () => {
  it('finds no shim for an address no containerd serves', async () => {
    assert.deepEqual(await findShims(`/nonexistent/${process.pid}/containerd.sock`), []);
  });
});
