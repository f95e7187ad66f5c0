// The warnings for spec fields accepted but not applied: each field named when set, none otherwise.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { notAppliedWarnings } from './spec-warnings.ts';

test('fields accepted but not applied are named; a plain spec has no warning', () => {
  assert.deepEqual(
    notAppliedWarnings({ Name: 'web', TaskTemplate: { ContainerSpec: { Image: 'busybox' }, Resources: { Reservations: {} } } }),
    [],
  );
  const w = notAppliedWarnings({
    TaskTemplate: {
      RestartPolicy: { Window: 5e9 },
      Placement: { Preferences: [{ Spread: { SpreadDescriptor: 'node.labels.zone' } }] },
      Resources: { Reservations: { MemoryBytes: 1 << 20 } },
    },
    UpdateConfig: { MaxFailureRatio: 0.5 },
    RollbackConfig: { MaxFailureRatio: 0 },
  });
  assert.equal(w.length, 4);
  assert.match(w.join('\n'), /RestartPolicy\.Window/);
  assert.match(w.join('\n'), /UpdateConfig\.MaxFailureRatio/);
  assert.doesNotMatch(w.join('\n'), /RollbackConfig/);
  assert.match(w.join('\n'), /Preferences/);
  assert.match(w.join('\n'), /Reservations/);
});
