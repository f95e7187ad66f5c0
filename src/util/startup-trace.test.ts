import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startupMark, startupPhases } from './startup-trace.ts';

test('start-up marks report wall and CPU ms in order, and none after the phases were read', () => {
  startupMark('first');
  let x = 0;
  for (let i = 0; i < 2e6; i++) x += i; // some CPU between the marks
  startupMark('second');
  const phases = startupPhases();
  assert.ok(x > 0);
  assert.deepEqual(Object.keys(phases), ['first', 'second']);
  const [w1, c1] = phases.first!.split('/').map(Number);
  const [w2, c2] = phases.second!.split('/').map(Number);
  assert.ok(w2! >= w1! && c2! >= c1! && c1! > 0, JSON.stringify(phases));
  startupMark('late');
  assert.equal(startupPhases().late, undefined);
});
