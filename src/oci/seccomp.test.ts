import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_CAPABILITIES } from './caps.ts';
import { compareKernel, seccompFromProfile } from './seccomp.ts';
import { CLONE_NAMESPACE_FLAGS, defaultSeccompProfile } from './seccomp-default.ts';
import type { LinuxSeccomp } from './spec-types.ts';

const ctx = { kernel: '6.1.0', arch: 'amd64' };
const rulesFor = (p: LinuxSeccomp, name: string) => p.syscalls!.filter((s) => s.names.includes(name));
const unconditionallyAllowed = (p: LinuxSeccomp, name: string) => rulesFor(p, name).some((s) => s.action === 'SCMP_ACT_ALLOW' && !s.args);

describe('defaultSeccompProfile', () => {
  const def = defaultSeccompProfile(DEFAULT_CAPABILITIES, ctx);

  it('denies with EPERM by default on the x86 family', () => {
    assert.equal(def.defaultAction, 'SCMP_ACT_ERRNO');
    assert.equal(def.defaultErrnoRet, 1);
    assert.deepEqual(def.architectures, ['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_X32']);
    assert.deepEqual(defaultSeccompProfile([], { ...ctx, arch: 'arm64' }).architectures, ['SCMP_ARCH_AARCH64', 'SCMP_ARCH_ARM']);
  });

  it('allows ordinary calls', () => {
    for (const n of ['read', 'openat', 'execve', 'futex', 'socket', 'epoll_pwait', 'clock_gettime', 'arch_prctl', 'chroot']) {
      assert.ok(unconditionallyAllowed(def, n), n);
    }
  });

  it('without CAP_SYS_ADMIN: no namespaces, mounts or setns; clone only without CLONE_NEW*; clone3 → ENOSYS', () => {
    for (const n of ['unshare', 'setns', 'mount', 'umount2', 'pivot_root', 'bpf', 'perf_event_open', 'sethostname']) {
      assert.equal(rulesFor(def, n).length, 0, n);
    }
    assert.deepEqual(rulesFor(def, 'clone'), [
      {
        names: ['clone'],
        action: 'SCMP_ACT_ALLOW',
        args: [{ index: 0, value: CLONE_NAMESPACE_FLAGS, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }],
      },
    ]);
    assert.equal(CLONE_NAMESPACE_FLAGS & 0x10000000, 0x10000000, 'CLONE_NEWUSER is in the mask');
    assert.deepEqual(rulesFor(def, 'clone3'), [{ names: ['clone3'], action: 'SCMP_ACT_ERRNO', errnoRet: 38 }]);
  });

  it('keeps the keyring, module loading, kexec, reboot, clock setting and io_uring out', () => {
    for (const n of [
      'keyctl',
      'add_key',
      'request_key',
      'init_module',
      'kexec_load',
      'reboot',
      'settimeofday',
      'io_uring_setup',
      'userfaultfd',
      'open_by_handle_at',
      'acct',
      'swapon',
    ]) {
      assert.equal(rulesFor(def, n).length, 0, n);
    }
  });

  it('allows personality only for harmless values', () => {
    const values = rulesFor(def, 'personality')
      .map((s) => s.args![0]!.value)
      .sort((a, b) => a - b);
    assert.deepEqual(values, [0, 8, 0x20000, 0x20008, 0xffffffff]);
  });

  it('allows ptrace from kernel 4.8', () => {
    assert.ok(unconditionallyAllowed(def, 'ptrace'));
    assert.equal(rulesFor(defaultSeccompProfile(DEFAULT_CAPABILITIES, { ...ctx, kernel: '4.4.0-210-generic' }), 'ptrace').length, 0);
  });

  it('with CAP_SYS_ADMIN: namespaces and mounts, unrestricted clone and clone3', () => {
    const admin = defaultSeccompProfile([...DEFAULT_CAPABILITIES, 'CAP_SYS_ADMIN'], ctx);
    for (const n of ['unshare', 'setns', 'mount', 'clone', 'clone3', 'bpf']) assert.ok(unconditionallyAllowed(admin, n), n);
    assert.ok(!rulesFor(admin, 'clone3').some((s) => s.action === 'SCMP_ACT_ERRNO'));
  });

  it('other capabilities unlock their calls', () => {
    const more = defaultSeccompProfile(['CAP_SYS_TIME', 'CAP_SYS_MODULE', 'CAP_SYS_BOOT', 'CAP_SYS_PTRACE'], ctx);
    for (const n of ['settimeofday', 'init_module', 'reboot', 'process_vm_readv', 'userfaultfd'])
      assert.ok(unconditionallyAllowed(more, n), n);
    assert.ok(!unconditionallyAllowed(defaultSeccompProfile([], ctx), 'chroot'));
  });
});

describe('seccompFromProfile', () => {
  it('resolves includes/excludes by caps, arch and kernel', () => {
    const p = seccompFromProfile(
      {
        defaultAction: 'SCMP_ACT_ERRNO',
        architectures: ['SCMP_ARCH_X86_64'],
        syscalls: [
          { name: 'a', action: 'SCMP_ACT_ALLOW' },
          { names: ['b'], action: 'SCMP_ACT_ALLOW', includes: { caps: ['CAP_X'] } },
          { names: ['c'], action: 'SCMP_ACT_ALLOW', excludes: { caps: ['CAP_X'] } },
          { names: ['d'], action: 'SCMP_ACT_ALLOW', includes: { arches: ['arm64'] } },
          { names: ['e'], action: 'SCMP_ACT_ALLOW', excludes: { minKernel: '5.0' } },
        ],
      },
      { capabilities: ['CAP_X'], ...ctx },
    );
    assert.deepEqual(
      p.syscalls!.map((s) => s.names[0]),
      ['a', 'b'],
    );
    assert.deepEqual(p.architectures, ['SCMP_ARCH_X86_64']);
  });

  it('refuses name and names together', () => {
    assert.throws(
      () =>
        seccompFromProfile(
          { defaultAction: 'SCMP_ACT_ALLOW', syscalls: [{ name: 'a', names: ['b'], action: 'SCMP_ACT_ALLOW' }] },
          { capabilities: [] },
        ),
      /'name' and 'names'/,
    );
  });

  it('compares kernel versions numerically', () => {
    assert.ok(compareKernel('6.18.44-fc-v445', '4.8') > 0);
    assert.ok(compareKernel('4.10.0', '4.8') > 0);
    assert.equal(compareKernel('4.8', '4.8.0'), 0);
    assert.ok(compareKernel('4.4.0-210-generic', '4.8') < 0);
  });
});
