// The warnings for spec fields accepted but not applied: each field named when set, none otherwise;
// the scheduling fields now applied (preferences, reservations, Window, MaxFailureRatio) are not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { notAppliedWarnings } from './spec-warnings.ts';

test('fields accepted but not applied are named; applied scheduling fields are not', () => {
  assert.deepEqual(
    notAppliedWarnings({
      Name: 'web',
      TaskTemplate: {
        ContainerSpec: { Image: 'busybox', Privileges: { NoNewPrivileges: false } },
        RestartPolicy: { Window: 5e9 },
        Placement: { Preferences: [{ Spread: { SpreadDescriptor: 'node.labels.zone' } }] },
        Resources: { Reservations: { MemoryBytes: 1 << 20, GenericResources: [{ DiscreteResourceSpec: { Kind: 'gpu', Value: 1 } }] } },
      },
      UpdateConfig: { MaxFailureRatio: 0.5 },
    }),
    [],
  );
  const w = notAppliedWarnings({ TaskTemplate: { ContainerSpec: { Image: 'busybox', Privileges: { NoNewPrivileges: true } } } });
  assert.equal(w.length, 1);
  assert.match(w[0]!, /Privileges/);
});
