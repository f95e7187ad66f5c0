// The create/update verification step with fake dependencies: every check runs in one place, before
// anything is stored, with dockerd's messages and 4xx statuses.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DaemonConfig } from '../../../config/daemon-config.ts';
import { EngineError, invalidParameter, notFound } from '../../../errors.ts';
import type { ContainerConfig, HostConfig } from '../../../types/container-api.ts';
import { initialState, type ContainerRecord } from '../record.ts';
import { ContainerVerifier, type VerifierDeps } from './verify.ts';

const IMAGE = {
  id: 'sha256:' + 'a'.repeat(64),
  chainId: 'sha256:' + 'b'.repeat(64),
  config: { config: { Env: ['PATH=/bin'], Cmd: ['sh'] } },
};

function config(over: Partial<Record<string, unknown>> = {}): () => DaemonConfig {
  const base = {
    'log-driver': 'json-file',
    'log-opts': {},
    'default-runtime': 'runc',
    'default-cgroupns-mode': 'private',
    'default-ipc-mode': 'private',
    'default-ulimits': {},
    features: {},
    ...over,
  };
  return () => base as unknown as DaemonConfig;
}

/** A verifier over fakes; `calls` records what reached which dependency. */
function verifier(over: Partial<VerifierDeps> = {}): { v: ContainerVerifier; calls: string[] } {
  const calls: string[] = [];
  const deps: VerifierDeps = {
    images: {
      resolve: async (ref) => {
        calls.push(`image ${ref}`);
        if (ref === 'missing') throw notFound(`No such image: ${ref}`);
        return IMAGE;
      },
    },
    runtimes: {
      resolve: (name) => {
        calls.push(`runtime ${name}`);
        if (name !== 'runc') throw invalidParameter(`unknown or invalid runtime name: ${name}`);
        return {};
      },
    },
    config: config(),
    shmSize: 64 << 20,
    limits: { hard: () => ({ nofile: 1024n }), canRaise: false },
    find: (ref) => {
      calls.push(`find ${ref}`);
      throw notFound(`No such container: ${ref}`);
    },
    ...over,
  };
  return { v: new ContainerVerifier(deps), calls };
}

async function rejects400(p: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof EngineError, `an EngineError, got ${String(err)}`);
    assert.equal(err.status, 400);
    assert.match(err.message, message);
    return true;
  });
}

describe('verifyCreate', () => {
  test('merges the image config and the daemon defaults; warns when networking is absent', async () => {
    const { v, calls } = verifier();
    const r = await v.verifyCreate({ Image: 'busybox', Cmd: ['echo', 'hi'] }, 'c'.repeat(64));
    assert.deepEqual(r.config.Cmd, ['echo', 'hi']);
    assert.deepEqual(r.config.Env, ['PATH=/bin']);
    assert.equal(r.config.Hostname, 'c'.repeat(12));
    assert.equal(r.hostConfig.NetworkMode, 'bridge');
    assert.deepEqual(r.hostConfig.LogConfig, { Type: 'json-file', Config: {} });
    assert.deepEqual(r.hostConfig.RestartPolicy, { Name: 'no', MaximumRetryCount: 0 });
    assert.equal(r.hostConfig.ShmSize, 64 << 20);
    assert.equal(r.image.id, IMAGE.id);
    assert.match(r.warnings.join('\n'), /network mode "bridge" is not built yet/);
    assert.deepEqual(calls, ['image busybox', 'runtime runc']);
  });

  test('a body of the wrong shape is a 400 before the image is looked up', async () => {
    const { v, calls } = verifier();
    await rejects400(v.verifyCreate([], 'x'), /cannot unmarshal array/);
    await rejects400(v.verifyCreate({ Image: 'busybox', Env: 'A=1' }, 'x'), /Env/);
    await rejects400(v.verifyCreate({}, 'x'), /config cannot be empty/);
    assert.deepEqual(calls, []);
  });

  test("an unknown image is the image store's 404", async () => {
    const { v } = verifier();
    await assert.rejects(v.verifyCreate({ Image: 'missing' }, 'x'), (e: unknown) => e instanceof EngineError && e.status === 404);
  });

  test('AutoRemove with a restart policy, unknown runtimes and bad log options are 400s', async () => {
    const { v } = verifier();
    await rejects400(
      v.verifyCreate({ Image: 'busybox', HostConfig: { AutoRemove: true, RestartPolicy: { Name: 'always' } } }, 'x'),
      /can't create 'AutoRemove' container with restart policy/,
    );
    await rejects400(v.verifyCreate({ Image: 'busybox', HostConfig: { Runtime: 'nope' } }, 'x'), /unknown or invalid runtime name: nope/);
    await rejects400(
      v.verifyCreate({ Image: 'busybox', HostConfig: { LogConfig: { Type: 'json-file', Config: { bogus: '1' } } } }, 'x'),
      /unknown log opt 'bogus' for json-file log driver/,
    );
    await rejects400(
      v.verifyCreate({ Image: 'busybox', HostConfig: { LogConfig: { Type: 'nosuch', Config: {} } } }, 'x'),
      /no log driver named 'nosuch'/,
    );
  });

  test("ulimits above the daemon's hard limits are refused unless it may raise them", async () => {
    const body = { Image: 'busybox', HostConfig: { Ulimits: [{ Name: 'nofile', Soft: 4096, Hard: 4096 }] } };
    await assert.rejects(verifier().v.verifyCreate(body, 'x'), (e: unknown) => e instanceof EngineError && e.status === 400);
    const raised = await verifier({ limits: { hard: () => ({ nofile: 1024n }), canRaise: true } }).v.verifyCreate(body, 'x');
    assert.deepEqual(raised.hostConfig.Ulimits, [{ Name: 'nofile', Soft: 4096, Hard: 4096 }]);
  });

  test('CDI devices need the registry; its answer is what checkStart hands to the launch', async () => {
    const body = { Image: 'busybox', HostConfig: { DeviceRequests: [{ Driver: 'cdi', DeviceIDs: ['vendor.com/gpu=0'] }] } };
    await rejects400(verifier().v.verifyCreate(body, 'x'), /cdi|CDI/);
    const injection = { env: ['GPU=0'], devices: [], mounts: [], hooks: [], additionalGids: [] };
    const { v } = verifier({
      cdi: {
        resolve: (ids: string[]) => {
          assert.deepEqual(ids, ['vendor.com/gpu=0']);
          return injection as never;
        },
      },
    });
    const r = await v.verifyCreate(body, 'x');
    assert.deepEqual(v.checkStart(r.hostConfig), { cdi: injection });
  });

  test("network and volume checks are the services', called once each with the merged config", async () => {
    const seen: string[] = [];
    const { v } = verifier({
      networks: {
        validateCreate: (hc: HostConfig, c: ContainerConfig) => {
          seen.push(`net ${hc.NetworkMode} ${c.Image}`);
          return ['a network warning'];
        },
      },
      volumes: {
        check: async (hc: HostConfig) => {
          seen.push(`volumes ${hc.Binds?.join(',')}`);
          if (hc.Binds?.includes('bad:/x')) throw invalidParameter('bad volume');
        },
      },
    });
    const r = await v.verifyCreate({ Image: 'busybox', HostConfig: { Binds: ['data:/data', '/tmp:/host'] } }, 'x');
    assert.deepEqual(r.warnings, ['a network warning']);
    assert.deepEqual(seen, ['net bridge busybox', 'volumes data:/data,/tmp:/host']);
    // Only the host-path bind is listed by the verifier; the volume service adds its own mounts.
    assert.deepEqual(
      r.mounts.map((m) => `${m.Type} ${m.Source}:${m.Destination}`),
      ['bind /tmp:/host'],
    );
    await rejects400(v.verifyCreate({ Image: 'busybox', HostConfig: { Binds: ['bad:/x'] } }, 'x'), /bad volume/);
  });

  test('NetworkMode container:<ref> must name an existing container', async () => {
    const { v, calls } = verifier();
    await assert.rejects(
      v.verifyCreate({ Image: 'busybox', HostConfig: { NetworkMode: 'container:other' } }, 'x'),
      (e: unknown) => e instanceof EngineError && e.status === 404,
    );
    assert.ok(calls.includes('find other'));
  });

  test('bad binds are refused without a volume service', async () => {
    await rejects400(
      verifier().v.verifyCreate({ Image: 'busybox', HostConfig: { Binds: ['named:/data'] } }, 'x'),
      /invalid volume specification/,
    );
  });
});

describe('verifyUpdate', () => {
  const rec = (hc: Partial<HostConfig> = {}, running = false): ContainerRecord =>
    ({
      Id: 'i'.repeat(64),
      HostConfig: { Memory: 0, RestartPolicy: { Name: 'no', MaximumRetryCount: 0 }, ...hc },
      State: { ...initialState(), Running: running },
    }) as unknown as ContainerRecord;

  test('returns the new HostConfig without touching the record; zero values leave settings alone', () => {
    const r = rec({ CpuShares: 512 });
    const hc = verifier().v.verifyUpdate(r, {
      Memory: 64 << 20,
      CpuShares: 0,
      RestartPolicy: { Name: 'on-failure', MaximumRetryCount: 3 },
    });
    assert.equal(hc.Memory, 64 << 20);
    assert.equal(hc.CpuShares, 512);
    assert.deepEqual(hc.RestartPolicy, { Name: 'on-failure', MaximumRetryCount: 3 });
    assert.equal(r.HostConfig.Memory, 0, 'the record is unchanged');
  });

  test('wrong types, small memory, swap below memory, AutoRemove with a policy are 400s', () => {
    const { v } = verifier();
    assert.throws(
      () => v.verifyUpdate(rec(), { Memory: 'lots' }),
      (e: unknown) => e instanceof EngineError && e.status === 400 && /Memory/.test(e.message),
    );
    assert.throws(() => v.verifyUpdate(rec(), { Memory: 1024 }), /Minimum memory limit allowed is 6MB/);
    assert.throws(
      () => v.verifyUpdate(rec(), { Memory: 64 << 20, MemorySwap: 32 << 20 }),
      /Minimum memoryswap limit should be larger than memory limit/,
    );
    assert.throws(() => v.verifyUpdate(rec({ AutoRemove: true }), { RestartPolicy: { Name: 'always' } }), /AutoRemove is enabled/);
  });
});
