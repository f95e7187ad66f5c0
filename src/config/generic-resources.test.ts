import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseGenericResources } from './generic-resources.ts';

test("generic resources parse as swarmkit's: discrete once, named as a set; dockerd's errors", () => {
  assert.deepEqual(parseGenericResources(['NVIDIA-GPU=UUID1', 'SSD=3', 'NVIDIA-GPU=UUID2']), [
    { NamedResourceSpec: { Kind: 'NVIDIA-GPU', Value: 'UUID1' } },
    { NamedResourceSpec: { Kind: 'NVIDIA-GPU', Value: 'UUID2' } },
    { DiscreteResourceSpec: { Kind: 'SSD', Value: 3 } },
  ]);
  assert.deepEqual(parseGenericResources([]), []);
  assert.throws(() => parseGenericResources(['foo']), {
    message: "could not parse GenericResource: incorrect term foo, missing '=' or malformed expression",
  });
  assert.throws(() => parseGenericResources(['foo=bar', 'foo=1']), {
    message: "could not parse GenericResource: mixed discrete and named resources in expression 'foo=[bar 1]'",
  });
  // the same discrete kind twice is no set either
  assert.throws(() => parseGenericResources(['ssd=1', 'ssd=2']), /mixed discrete and named resources in expression 'ssd=\[1 2\]'/);
});
