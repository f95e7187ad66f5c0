// InodeMap: values by (device, inode), devices kept apart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InodeMap } from './inode-map.ts';

test('values by device and inode; the same inode on two devices is two keys', () => {
  const m = new InodeMap<string>();
  m.set({ dev: 1, ino: 10 }, 'a');
  m.set({ dev: 2, ino: 10 }, 'b');
  m.set({ dev: 1, ino: 10 }, 'c');
  assert.equal(m.get({ dev: 1, ino: 10 }), 'c');
  assert.equal(m.get({ dev: 2, ino: 10 }), 'b');
  assert.equal(m.get({ dev: 1, ino: 11 }), undefined);
  assert.equal(m.size, 2);
});
