// The warnings for spec fields accepted but not applied: each field named when set, none otherwise;
// the scheduling fields and the Privileges now applied (seccomp, AppArmor, no-new-privileges) are not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { notAppliedWarnings } from './spec-warnings.ts';

test('fields accepted but not applied are named; applied fields are not', () => {
  assert.deepEqual(
    notAppliedWarnings({
      Name: 'web',
      TaskTemplate: {
        ContainerSpec: {
          Image: 'busybox',
          Privileges: {
            NoNewPrivileges: true,
            Seccomp: { Mode: 'unconfined' },
            AppArmor: { Mode: 'disabled' },
            SELinuxContext: { Disable: true },
          },
        },
        RestartPolicy: { Window: 5e9 },
        Placement: { Preferences: [{ Spread: { SpreadDescriptor: 'node.labels.zone' } }] },
        Resources: { Reservations: { MemoryBytes: 1 << 20, GenericResources: [{ DiscreteResourceSpec: { Kind: 'gpu', Value: 1 } }] } },
      },
      UpdateConfig: { MaxFailureRatio: 0.5 },
    }),
    [],
  );
  const w = notAppliedWarnings({
    TaskTemplate: {
      ContainerSpec: {
        Image: 'busybox',
        Privileges: { CredentialSpec: { File: 'spec.json' }, SELinuxContext: { Type: 'svirt_t', Level: 's0' } },
      },
    },
  });
  assert.equal(w.length, 2);
  assert.match(w[0]!, /CredentialSpec is for Windows/);
  assert.match(w[1]!, /SELinuxContext Type, Level/);
});
