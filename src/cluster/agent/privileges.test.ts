// Privileges → SecurityOpt as dockerd's executor maps them, the checks of a spec's Privileges
// (dockerd's credential spec words; bad modes and profiles a 400), and that a task's container body
// carries the options through to the engine's own SecurityOpt parser.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { containerBody } from './container-body.ts';
import { checkPrivileges, privilegeSecurityOpts, seccompProfileText } from './privileges.ts';
import type { TaskRecord } from '../manager/tasks.ts';
import { parseSecurityOpt } from '../../oci/security-opt.ts';
import { statusOf } from '../../errors.ts';

const profile = JSON.stringify({ defaultAction: 'SCMP_ACT_ALLOW', syscalls: [{ names: ['mkdir'], action: 'SCMP_ACT_ERRNO' }] });
const b64 = Buffer.from(profile).toString('base64');

test('each Privileges field becomes the SecurityOpt entry dockerd gives the task container', () => {
  assert.deepEqual(privilegeSecurityOpts({}), []);
  assert.deepEqual(
    privilegeSecurityOpts({ Privileges: { NoNewPrivileges: false, Seccomp: { Mode: 'default' }, AppArmor: { Mode: 'default' } } }),
    [],
  );
  assert.deepEqual(
    privilegeSecurityOpts({
      Privileges: {
        CredentialSpec: { File: 'gmsa.json' },
        SELinuxContext: { Disable: true, User: 'u', Role: 'r', Type: 't', Level: 's0:c1' },
        Seccomp: { Mode: 'unconfined' },
        AppArmor: { Mode: 'disabled' },
        NoNewPrivileges: true,
      },
    }),
    [
      'credentialspec=file://gmsa.json',
      'label=disable',
      'label=user:u',
      'label=role:r',
      'label=type:t',
      'label=level:s0:c1',
      'seccomp=unconfined',
      'apparmor=unconfined',
      'no-new-privileges=true',
    ],
  );
  assert.deepEqual(privilegeSecurityOpts({ Privileges: { CredentialSpec: { Config: 'cfg1' } } }), ['credentialspec=config://cfg1']);
  assert.deepEqual(privilegeSecurityOpts({ Privileges: { CredentialSpec: { Registry: 'k' } } }), ['credentialspec=registry://k']);
  // A custom profile: base64 on the wire (Go []byte), the JSON text in the option.
  assert.deepEqual(privilegeSecurityOpts({ Privileges: { Seccomp: { Mode: 'custom', Profile: b64 } } }), [`seccomp=${profile}`]);
  assert.equal(seccompProfileText(profile), profile);
});

test('the options are ones the engine parses and applies (a credential spec is refused on Linux, as by dockerd)', () => {
  const opts = parseSecurityOpt(
    privilegeSecurityOpts({
      Privileges: { NoNewPrivileges: true, Seccomp: { Mode: 'custom', Profile: b64 }, AppArmor: { Mode: 'disabled' } },
    }),
  );
  assert.equal(opts.noNewPrivileges, true);
  assert.equal(opts.apparmor, 'unconfined');
  assert.equal(typeof opts.seccomp === 'object' && opts.seccomp.defaultAction, 'SCMP_ACT_ALLOW');
  assert.equal(parseSecurityOpt(privilegeSecurityOpts({ Privileges: { Seccomp: { Mode: 'unconfined' } } })).seccomp, 'unconfined');
  assert.throws(
    () => parseSecurityOpt(privilegeSecurityOpts({ Privileges: { CredentialSpec: { File: 'x.json' } } })),
    /invalid --security-opt 2: "credentialspec=file:\/\/x.json"/,
  );
});

test('a task container body carries the options', () => {
  const t = {
    ID: 'task1',
    Spec: { ContainerSpec: { Image: 'busybox', Privileges: { NoNewPrivileges: true, Seccomp: { Mode: 'unconfined' } } } },
    ServiceID: 'svc',
    ServiceName: 'web',
    SpecVersion: 1,
    Slot: 1,
    NodeID: 'n',
    Status: { Timestamp: 't', State: 'running', Message: '' },
    DesiredState: 'running',
    Restarts: 0,
  } as unknown as TaskRecord;
  assert.deepEqual((containerBody(t).HostConfig as Record<string, unknown>).SecurityOpt, ['seccomp=unconfined', 'no-new-privileges=true']);
  const plain = { ...t, Spec: { ContainerSpec: { Image: 'busybox' } } } as TaskRecord;
  assert.equal((containerBody(plain).HostConfig as Record<string, unknown>).SecurityOpt, undefined);
});

test('bad Privileges are a 400 with dockerd’s words where it has them', () => {
  const bad = (p: unknown, re: RegExp) =>
    assert.throws(
      () => checkPrivileges({ Privileges: p }),
      (e: unknown) => statusOf(e) === 400 && re.test((e as Error).message),
    );
  checkPrivileges({});
  checkPrivileges({ Privileges: null });
  checkPrivileges({ Privileges: { Seccomp: { Mode: 'custom', Profile: b64 }, AppArmor: { Mode: 'disabled' }, NoNewPrivileges: true } });
  bad('x', /Privileges: must be an object/);
  bad({ CredentialSpec: {} }, /must either provide "file", "registry", or "config" for credential spec/);
  bad({ CredentialSpec: { File: 'a', Registry: 'b' } }, /cannot specify both "file" and "registry" credential specs/);
  bad(
    { CredentialSpec: { File: 'a', Registry: 'b', Config: 'c' } },
    /cannot specify both "config", "file", and "registry" credential specs/,
  );
  bad({ Seccomp: { Mode: 'strict' } }, /Seccomp.Mode "strict"/);
  bad({ Seccomp: { Mode: 'custom' } }, /needs a Profile/);
  bad({ Seccomp: { Mode: 'custom', Profile: Buffer.from('not json').toString('base64') } }, /Decoding seccomp profile failed/);
  bad({ AppArmor: { Mode: 'custom' } }, /AppArmor.Mode "custom"/);
  bad({ NoNewPrivileges: 'yes' }, /NoNewPrivileges: must be a boolean/);
  bad({ SELinuxContext: { Type: 3 } }, /SELinuxContext.Type: must be a string/);
});
