// GET /info and /events by API version on a real ApiServer with a recording fake backend: each
// field dockerd's system router adds, drops or rewrites, checked at both sides of its version.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import type { EngineEvent } from '../../types/events.ts';
import { registerEventRoutes, type EventsBackend } from './events.ts';
import { registerSystemRoutes, type SystemBackend } from './system.ts';
import { registerSystemDfRoutes, usageForVersion, type DiskUsageBackend } from './system-df.ts';
import { infoForVersion } from './system-compat.ts';
import type { SystemInfoView } from '../../types/system.ts';
import type { DiskUsageView } from '../../types/system-df.ts';

const info = {
  KernelVersion: '',
  OperatingSystem: '',
  SecurityOptions: ['name=seccomp,profile=builtin', 'name=cgroupns'],
  Runtimes: { runc: { path: 'runc', status: { 'org.opencontainers.runtime-spec.features': '{}' } } },
  Containerd: { Address: '/run/c.sock' },
  RegistryConfig: { IndexConfigs: {} },
  FirewallBackend: { Driver: 'iptables' },
  ContainerdCommit: { ID: 'abc' },
  RuncCommit: { ID: 'def' },
  InitCommit: { ID: 'ghi' },
  KernelMemory: true,
};

describe('/info by API version', () => {
  const { backend } = fakeBackend<SystemBackend>({ info: () => structuredClone(info), swarmState: 'inactive', experimental: false });
  const h = new RouteHarness((r) => registerSystemRoutes(r, backend));
  after(() => h.close());
  const at = async (v: string) => (await h.request('GET', `/v${v}/info`)).json;

  test('1.25: SecurityOptions are names only before', async () => {
    assert.deepEqual((await at('1.24')).SecurityOptions, ['seccomp', 'cgroupns']);
    assert.deepEqual((await at('1.25')).SecurityOptions, info.SecurityOptions);
  });
  test('1.39: an unknown kernel or OS reads <unknown> before', async () => {
    assert.equal((await at('1.38')).KernelVersion, '<unknown>');
    assert.equal((await at('1.38')).OperatingSystem, '<unknown>');
    assert.equal((await at('1.39')).KernelVersion, '');
  });
  test('1.44: runtimes without status before', async () => {
    assert.deepEqual((await at('1.43')).Runtimes, { runc: { path: 'runc' } });
    assert.deepEqual((await at('1.44')).Runtimes, info.Runtimes);
  });
  test('1.46: Containerd from', async () => {
    assert.equal('Containerd' in (await at('1.45')), false);
    assert.deepEqual((await at('1.46')).Containerd, info.Containerd);
  });
  test('1.47: the non-distributable fields (null) before', async () => {
    const old = (await at('1.46')).RegistryConfig;
    assert.equal(old.AllowNondistributableArtifactsCIDRs, null);
    assert.equal('AllowNondistributableArtifactsHostnames' in old, true);
    assert.equal('AllowNondistributableArtifactsCIDRs' in (await at('1.47')).RegistryConfig, false);
  });
  test('1.49: FirewallBackend from, the commits’ Expected before', async () => {
    const old = await at('1.48');
    assert.equal('FirewallBackend' in old, false);
    assert.deepEqual(old.RuncCommit, { ID: 'def', Expected: 'def' });
    const cur = await at('1.49');
    assert.deepEqual(cur.FirewallBackend, { Driver: 'iptables' });
    assert.deepEqual(cur.RuncCommit, { ID: 'def' });
  });
  test('1.42: KernelMemory (the host’s kmem accounting) before, omitted from', async () => {
    assert.equal((await at('1.41')).KernelMemory, true);
    assert.equal('KernelMemory' in (await at('1.42')), false);
    assert.equal('KernelMemory' in (await at('1.51')), false);
  });
  test('1.50: BridgeNfIptables/BridgeNfIp6tables false before, gone from', async () => {
    assert.equal((await at('1.49')).BridgeNfIptables, false);
    assert.equal((await at('1.49')).BridgeNfIp6tables, false);
    assert.equal('BridgeNfIptables' in (await at('1.50')), false);
  });
});

/** Every API version from 1.24 (the oldest served) to 1.51. */
const everyVersion = Array.from({ length: 51 - 24 + 1 }, (_, i) => `1.${24 + i}`);

describe('infoForVersion on the typed /info view', () => {
  // As the daemon writes it: Go's nil lists and maps as null (GoJson), a shim v2 runtime beside runc.
  const view: SystemInfoView = {
    ID: 'e1',
    KernelVersion: '6.1.0',
    OperatingSystem: 'Debian GNU/Linux 12',
    Plugins: { Volume: ['local'], Network: ['bridge', 'host', 'none'], Authorization: null, Log: ['json-file', 'local'] },
    GenericResources: null,
    SecurityOptions: ['name=seccomp,profile=builtin'],
    Runtimes: { runc: { path: 'runc', status: { x: '{}' } }, kata: { runtimeType: 'io.containerd.kata.v2' } },
    RegistryConfig: { InsecureRegistryCIDRs: ['127.0.0.0/8'], IndexConfigs: {}, Mirrors: null },
    ContainerdCommit: { ID: 'abc' },
    RuncCommit: { ID: 'def' },
    InitCommit: { ID: 'ghi' },
    Swarm: { NodeID: '', LocalNodeState: 'inactive', RemoteManagers: null },
    KernelMemory: true,
  };

  test('the backend’s answer is copied, never changed, at every version', () => {
    const before = structuredClone(view);
    for (const v of everyVersion) infoForVersion(view, v);
    assert.deepEqual(view, before);
  });
  test('from 1.50 the answer is the view as it is, KernelMemory left out (same fields, same order)', () => {
    const { KernelMemory: _k, ...rest } = view;
    for (const v of ['1.50', '1.51']) assert.equal(JSON.stringify(infoForVersion(view, v)), JSON.stringify(rest));
  });
  test('Go’s nulls stay null at every version; reshaped parts only where present', () => {
    const nulls: SystemInfoView = { ID: 'e2', SecurityOptions: null, Runtimes: null, RegistryConfig: null };
    for (const v of everyVersion) {
      const out = infoForVersion(nulls, v);
      assert.equal(out.SecurityOptions, null, v);
      assert.equal(out.Runtimes, null, v);
      assert.equal(out.RegistryConfig, null, v);
      assert.equal('RuncCommit' in out, false, v);
    }
  });
  test('before 1.44 every runtime loses its status, a shim v2 runtime kept as it is', () => {
    assert.deepEqual(infoForVersion(view, '1.43').Runtimes, { runc: { path: 'runc' }, kata: { runtimeType: 'io.containerd.kata.v2' } });
  });
});

describe('usageForVersion on the typed /system/df view', () => {
  test('the backend’s answer is copied, never changed, at every version', () => {
    const du = {
      LayersSize: 3,
      Images: [{ Id: 'sha256:1', Size: 7 }],
      BuildCache: [
        {
          ID: 'b1',
          Parent: 'b0',
          Parents: ['b0'],
          Size: 5,
          Type: 'regular',
          Description: '',
          InUse: false,
          Shared: false,
          CreatedAt: '',
          LastUsedAt: null,
          UsageCount: 0,
        },
      ],
    };
    const before = structuredClone(du);
    for (const v of everyVersion) usageForVersion(du, v);
    assert.deepEqual(du, before);
    assert.equal(usageForVersion(du, '1.41').BuilderSize, 5);
    assert.equal(usageForVersion({ BuildCache: [] }, '1.41').BuilderSize, undefined);
  });
});

describe('/events by API version', () => {
  const ev = (Type: string, Action: string): EngineEvent => ({
    Type,
    Action,
    Actor: { ID: 'x', Attributes: {} },
    scope: 'local',
    time: 1,
    timeNano: 1n,
  });
  const { backend } = fakeBackend<EventsBackend>({
    history: [ev('image', 'create'), ev('image', 'tag')],
    subscribe: () => () => undefined,
  });
  const h = new RouteHarness((r) => registerEventRoutes(r, backend));
  after(() => h.close());
  const actions = async (v: string) =>
    (await h.request('GET', `/v${v}/events?since=0&until=1`)).text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).Action);

  test('1.46: image create events from', async () => {
    assert.deepEqual(await actions('1.45'), ['tag']);
    assert.deepEqual(await actions('1.46'), ['create', 'tag']);
  });
});

describe('/system/df by API version', () => {
  const cacheEntry = { Type: 'regular', Description: '', InUse: false, Shared: false, CreatedAt: '', LastUsedAt: null, UsageCount: 0 };
  const usage: DiskUsageView = {
    Images: [{ Id: 'sha256:1', Size: 7 }],
    BuildCache: [
      { ID: 'b1', Parent: 'b0', Parents: ['b0'], Size: 5, ...cacheEntry },
      { ID: 'b0', Size: 3, ...cacheEntry },
    ],
  };
  const { backend, calls } = fakeBackend<DiskUsageBackend>({
    usage: () => structuredClone(usage),
    pruneBuildCache: { CachesDeleted: null, SpaceReclaimed: 0 },
  });
  const h = new RouteHarness((r) => registerSystemDfRoutes(r, backend));
  after(() => h.close());
  const at = async (v: string) => (await h.request('GET', `/v${v}/system/df`)).json;

  test('1.42: build cache Parents and no BuilderSize from, Parent and BuilderSize before', async () => {
    const old = await at('1.41');
    assert.deepEqual(old.BuildCache[0], { ID: 'b1', Parent: 'b0', Size: 5, ...cacheEntry });
    assert.equal(old.BuilderSize, 8);
    const cur = await at('1.42');
    assert.deepEqual(cur.BuildCache[0], { ID: 'b1', Parents: ['b0'], Size: 5, ...cacheEntry });
    assert.equal('BuilderSize' in cur, false);
  });
  test('1.44: images VirtualSize before', async () => {
    assert.equal((await at('1.43')).Images[0].VirtualSize, 7);
    assert.equal('VirtualSize' in (await at('1.44')).Images[0], false);
  });

  test('1.48: build prune takes reserved-space (else keep-storage) from, keep-storage alone before', async () => {
    const keep = async (v: string, q: string) => {
      await h.request('POST', `/v${v}/build/prune?${q}`);
      return (calls.at(-1)!.args[0] as { keepStorage: number }).keepStorage;
    };
    assert.equal(await keep('1.47', 'reserved-space=100&keep-storage=5'), 5);
    assert.equal(await keep('1.47', 'reserved-space=100'), 0);
    assert.equal(await keep('1.48', 'reserved-space=100&keep-storage=5'), 100);
    assert.equal(await keep('1.48', 'keep-storage=5'), 5);
  });
});

describe('a raised minimum API version (DOCKER_MIN_API_VERSION)', () => {
  const { backend } = fakeBackend<SystemBackend>({ info: { Name: 'host' }, swarmState: 'inactive', experimental: false });
  const h = new RouteHarness((r) => registerSystemRoutes(r, backend), { minApiVersion: '1.40' });
  after(() => h.close());

  test('below it a JSON 400 naming it; below 1.24 still plain text; from it served', async () => {
    const old = await h.request('GET', '/v1.39/info');
    assert.equal(old.status, 400);
    assert.equal(
      old.json.message,
      'client version 1.39 is too old. Minimum supported API version is 1.40, please upgrade your client to a newer version',
    );
    const older = await h.request('GET', '/v1.20/info');
    assert.equal(older.headers['content-type'], 'text/plain; charset=utf-8');
    assert.match(older.text, /Minimum supported API version is 1\.40/);
    assert.equal((await h.request('GET', '/v1.40/info')).status, 200);
  });
});
