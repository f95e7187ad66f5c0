// Which manager a worker talks to first: spread by node ID over the managers (stable per node), so
// a cluster's workers share the managers' heartbeat, sync and overlay-poll load.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId } from '../ids.ts';
import { firstManager } from './worker.ts';

test('workers spread over three managers by node ID, each keeping its manager', () => {
  const counts = [0, 0, 0];
  const ids = Array.from({ length: 3000 }, () => newId());
  for (const id of ids) counts[firstManager(id, 3)]!++;
  // An even share is 1000 each; a hash of random IDs stays well within ±15 %.
  for (const c of counts) assert.ok(c > 850 && c < 1150, `uneven spread: ${counts.join(' / ')}`);
  for (const id of ids.slice(0, 50)) assert.equal(firstManager(id, 3), firstManager(id, 3));
  assert.equal(firstManager(ids[0]!, 1), 0);
  assert.equal(firstManager(ids[0]!, 0), 0);
});
