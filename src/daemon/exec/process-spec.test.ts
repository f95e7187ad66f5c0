import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OciProcess } from '../../oci/spec-types.ts';
import { buildExecProcess, execEnv, parseContainerProcess, serializeProcess } from './process-spec.ts';

const base: OciProcess = {
  terminal: false,
  consoleSize: { height: 10, width: 10 },
  user: { uid: 1000, gid: 1000, additionalGids: [5] },
  args: ['/sbin/engine-init', '--', 'sleep', '100'],
  env: ['PATH=/bin', 'A=1'],
  cwd: '/srv',
  capabilities: { bounding: ['CAP_CHOWN', 'CAP_KILL'], effective: ['CAP_CHOWN', 'CAP_KILL'], permitted: ['CAP_CHOWN', 'CAP_KILL'] },
  rlimits: [{ type: 'RLIMIT_NOFILE', hard: 1024n, soft: 1024n }],
  noNewPrivileges: true,
  oomScoreAdj: 200,
  apparmorProfile: 'docker-default',
};

const input = {
  args: ['sh', '-c', 'id'],
  env: ['PATH=/usr/bin', 'X=y'],
  cwd: '',
  tty: false,
  user: { uid: 0, gid: 0, additionalGids: [] },
  privileged: false,
  allCapabilities: ['CAP_ALL_1', 'CAP_ALL_2'],
};

describe('buildExecProcess', () => {
  it("keeps the container's limits and replaces command, env, cwd, user", () => {
    const p = buildExecProcess(base, input);
    assert.deepEqual(p.args, ['sh', '-c', 'id']);
    assert.deepEqual(p.env, ['PATH=/usr/bin', 'X=y']);
    assert.equal(p.cwd, '/');
    assert.deepEqual(p.user, { uid: 0, gid: 0, additionalGids: [] });
    assert.deepEqual(p.rlimits, base.rlimits);
    assert.equal(p.noNewPrivileges, true);
    assert.equal(p.oomScoreAdj, 200);
    assert.equal(p.terminal, false);
    assert.equal(p.consoleSize, undefined, 'no console size without a TTY');
    assert.equal(p.apparmorProfile, undefined);
    assert.deepEqual(p.capabilities, {
      bounding: ['CAP_CHOWN', 'CAP_KILL'],
      effective: ['CAP_CHOWN', 'CAP_KILL'],
      permitted: ['CAP_CHOWN', 'CAP_KILL'],
    });
    assert.equal(base.args[0], '/sbin/engine-init', 'the base is not modified');
  });

  it('gives a non-root user the bounding set only, and privileged execs every capability', () => {
    assert.deepEqual(buildExecProcess(base, { ...input, user: { uid: 65534, gid: 65534, additionalGids: [] } }).capabilities, {
      bounding: ['CAP_CHOWN', 'CAP_KILL'],
    });
    assert.deepEqual(buildExecProcess(base, { ...input, privileged: true }).capabilities?.effective, ['CAP_ALL_1', 'CAP_ALL_2']);
  });

  it('sets the terminal and its initial size', () => {
    const p = buildExecProcess(base, { ...input, tty: true, cwd: '/tmp', consoleSize: { height: 40, width: 120 } });
    assert.equal(p.terminal, true);
    assert.deepEqual(p.consoleSize, { height: 40, width: 120 });
    assert.equal(p.cwd, '/tmp');
  });
});

describe('execEnv', () => {
  it('is the container environment with the exec TTY, then the exec Env', () => {
    const env = execEnv({ Hostname: 'h1', Env: ['A=1', 'B=2'], Tty: false }, true, ['B=3', 'C=4']);
    assert.deepEqual(env, [
      'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      'HOSTNAME=h1',
      'TERM=xterm',
      'A=1',
      'B=3',
      'C=4',
    ]);
    assert.ok(!execEnv({ Hostname: 'h1', Tty: true }, false, []).includes('TERM=xterm'), 'TERM follows the exec, not the container');
  });
});

describe('parseContainerProcess / serializeProcess', () => {
  it('keep 64-bit rlimits exact through the round trip', () => {
    const text =
      '{"ociVersion":"1.0.2","process":{"user":{"uid":0,"gid":0},"args":["sh"],"env":[],"cwd":"/","rlimits":[{"type":"RLIMIT_CORE","hard":18446744073709551615,"soft":18446744073709551615}]}}';
    const p = parseContainerProcess(text);
    assert.equal(p.rlimits?.[0]?.hard, 18446744073709551615n);
    assert.match(serializeProcess(p), /"hard":18446744073709551615,"soft":18446744073709551615/);
  });
});
