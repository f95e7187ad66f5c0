// Exit waiters: a notification resolves exactly the waiters whose condition it names.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExitWaiters } from './waiters.ts';

test('a notification resolves the named conditions only, once', async () => {
  const w = new ExitWaiters();
  const seen: string[] = [];
  void w.next('a', 'not-running').then((r) => seen.push(`not-running ${r.StatusCode}`));
  void w.next('a', 'removed').then((r) => seen.push(`removed ${r.StatusCode}`));
  void w.nextExit('a').then(() => seen.push('next-exit'));
  void w.next('b', 'not-running').then(() => seen.push('other container'));
  assert.equal(w.count('a'), 3);
  w.notify('a', ['not-running', 'next-exit'], { StatusCode: 3, Error: null });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(seen.sort(), ['next-exit', 'not-running 3']);
  assert.equal(w.count('a'), 1, 'the removed waiter stays');
  w.notify('a', ['not-running', 'next-exit'], { StatusCode: 4, Error: null });
  await new Promise((r) => setImmediate(r));
  assert.equal(seen.length, 2, 'resolved waiters are forgotten');
  w.notify('a', ['removed'], { StatusCode: 5, Error: null });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(seen.sort(), ['next-exit', 'not-running 3', 'removed 5']);
  assert.equal(w.count('a'), 0);
  assert.equal(w.count('b'), 1);
});
