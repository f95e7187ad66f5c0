// The container routes' API-version gates, on a real ApiServer with a recording fake backend: what
// a create or update body becomes before the backend sees it at each side of every version that
// changes it, the 400s older or newer versions give, and the version-dependent answers (list,
// logs media type, stop signal).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import type { ContainerCreateBody } from '../../types/container-api.ts';
import type { LogChunks } from '../../types/logs.ts';
import { registerContainerRoutes, type ContainersBackend } from './containers.ts';

const noLines: LogChunks = {
  async *[Symbol.asyncIterator]() {},
  async *batches() {},
};

function harness(cgroup2 = false) {
  const fake = fakeBackend<ContainersBackend>({
    create: { Id: 'c1', Warnings: [] },
    update: { Warnings: [] },
    stop: 'stopped',
    restart: undefined,
    list: [{ Id: 'c1', HostConfig: { NetworkMode: 'bridge', Annotations: { a: '1' } } }],
    logs: { tty: false, lines: noLines },
    wait: (_id: string, condition: string) => async () =>
      condition === 'removed' ? { StatusCode: 0, Error: { Message: 'removal failed' } } : { StatusCode: 3, Error: null },
  });
  const h = new RouteHarness((r) =>
    registerContainerRoutes(r, fake.backend, {
      cgroup2,
      imagePlatform: async (ref: string) => (ref === 'busybox' ? { Os: 'linux', Architecture: 'amd64' } : undefined),
    }),
  );
  return { h, fake };
}

describe('container routes by API version', () => {
  const { h, fake } = harness();
  const v2 = harness(true);
  after(() => Promise.all([h.close(), v2.h.close()]));

  /** Creates with `body` at `version`; the body the backend got, and the answer. */
  async function create(version: string, body: unknown, on = h) {
    const calls = on === h ? fake.calls : v2.fake.calls;
    const before = calls.length;
    const res = await on.request('POST', `/v${version}/containers/create`, { body });
    const got = calls.length > before ? (calls.at(-1)!.args[0] as ContainerCreateBody) : undefined;
    return { res, got };
  }

  const bindMount = (opts: Record<string, unknown>) => ({
    Image: 'busybox',
    HostConfig: { Mounts: [{ Type: 'bind', Source: '/tmp', Target: '/x', BindOptions: opts }] },
  });

  test('1.25: AutoRemove is the client’s job before, the daemon’s from', async () => {
    assert.equal((await create('1.24', { Image: 'b', HostConfig: { AutoRemove: true } })).got!.HostConfig?.AutoRemove, undefined);
    assert.equal((await create('1.25', { Image: 'b', HostConfig: { AutoRemove: true } })).got!.HostConfig?.AutoRemove, true);
  });

  test('1.40: IpcMode defaults to shareable, NonRecursive and KernelMemoryTCP are dropped before', async () => {
    const old = (
      await create('1.39', {
        ...bindMount({ NonRecursive: true }),
        HostConfig: { ...bindMount({ NonRecursive: true }).HostConfig, KernelMemoryTCP: 5 },
      })
    ).got!;
    assert.equal(old.HostConfig!.IpcMode, 'shareable');
    assert.equal(old.HostConfig!.KernelMemoryTCP, undefined);
    assert.equal(old.HostConfig!.Mounts![0]!.BindOptions!.NonRecursive, undefined);
    const cur = (
      await create('1.40', {
        ...bindMount({ NonRecursive: true }),
        HostConfig: { ...bindMount({ NonRecursive: true }).HostConfig, KernelMemoryTCP: 5 },
      })
    ).got!;
    assert.equal(cur.HostConfig!.IpcMode, undefined);
    assert.equal(cur.HostConfig!.KernelMemoryTCP, 5);
    assert.equal(cur.HostConfig!.Mounts![0]!.BindOptions!.NonRecursive, true);
    // An IpcMode the client chose is kept.
    assert.equal((await create('1.39', { Image: 'b', HostConfig: { IpcMode: 'private' } })).got!.HostConfig!.IpcMode, 'private');
  });

  test('1.41: CgroupnsMode defaults to host before, on cgroup v1 only', async () => {
    assert.equal((await create('1.40', { Image: 'b' })).got!.HostConfig!.CgroupnsMode, 'host');
    assert.equal((await create('1.41', { Image: 'b' })).got!.HostConfig?.CgroupnsMode, undefined);
    assert.equal((await create('1.40', { Image: 'b' }, v2.h)).got!.HostConfig?.CgroupnsMode, undefined);
  });

  test('1.42: ConsoleSize, CreateMountpoint and misplaced options dropped before; misplaced options refused from', async () => {
    const body = {
      Image: 'b',
      HostConfig: {
        ConsoleSize: [10, 20],
        Mounts: [{ Type: 'bind', Source: '/tmp', Target: '/x', BindOptions: { CreateMountpoint: true }, TmpfsOptions: { SizeBytes: 1 } }],
      },
    };
    const old = (await create('1.41', body)).got!;
    assert.equal(old.HostConfig!.ConsoleSize, undefined);
    assert.equal(old.HostConfig!.Mounts![0]!.BindOptions!.CreateMountpoint, undefined);
    assert.equal(old.HostConfig!.Mounts![0]!.TmpfsOptions, undefined);
    const refused = await create('1.42', body);
    assert.equal(refused.res.status, 400);
    assert.equal(refused.res.json.message, 'TmpfsOptions must not be specified on mount type "bind"');
    assert.equal(refused.got, undefined, 'the backend is not asked');
    const vol = await create('1.42', {
      Image: 'b',
      HostConfig: { Mounts: [{ Type: 'tmpfs', Target: '/x', VolumeOptions: { NoCopy: true } }] },
    });
    assert.equal(vol.res.json.message, 'VolumeOptions must not be specified on mount type "tmpfs"');
    const cur = (
      await create('1.42', {
        Image: 'b',
        HostConfig: {
          ConsoleSize: [10, 20],
          Mounts: [{ Type: 'bind', Source: '/tmp', Target: '/x', BindOptions: { CreateMountpoint: true } }],
        },
      })
    ).got!;
    assert.deepEqual(cur.HostConfig!.ConsoleSize, [10, 20]);
    assert.equal(cur.HostConfig!.Mounts![0]!.BindOptions!.CreateMountpoint, true);
  });

  test('1.43: Annotations dropped before', async () => {
    assert.equal((await create('1.42', { Image: 'b', HostConfig: { Annotations: { a: 'b' } } })).got!.HostConfig!.Annotations, undefined);
    assert.deepEqual((await create('1.43', { Image: 'b', HostConfig: { Annotations: { a: 'b' } } })).got!.HostConfig!.Annotations, {
      a: 'b',
    });
  });

  test('1.44: StartInterval dropped, one endpoint at most, ReadOnlyForceRecursive refused before', async () => {
    const hc = { Test: ['CMD', 'true'], StartInterval: 2_000_000_000 };
    assert.equal((await create('1.43', { Image: 'b', Healthcheck: hc })).got!.Healthcheck!.StartInterval, undefined);
    assert.equal((await create('1.44', { Image: 'b', Healthcheck: hc })).got!.Healthcheck!.StartInterval, 2_000_000_000);
    const two = { Image: 'b', NetworkingConfig: { EndpointsConfig: { a: {}, b: {} } }, HostConfig: { NetworkMode: 'a' } };
    const refused = await create('1.43', two);
    assert.equal(refused.res.status, 400);
    assert.equal(refused.res.json.message, 'Container cannot be created with multiple network endpoints: a, b');
    assert.deepEqual(Object.keys((await create('1.44', two)).got!.NetworkingConfig!.EndpointsConfig!), ['a', 'b']);
    const rro = await create('1.43', bindMount({ ReadOnlyForceRecursive: true }));
    assert.equal(rro.res.json.message, 'BindOptions.ReadOnlyForceRecursive needs API v1.44 or newer');
    assert.equal((await create('1.44', bindMount({ ReadOnlyForceRecursive: true }))).res.status, 201);
  });

  test('1.44: the container-wide MacAddress moves to the endpoint; from 1.44 with a warning', async () => {
    const old = await create('1.43', { Image: 'b', MacAddress: '02:42:ac:11:00:09', HostConfig: { NetworkMode: 'appnet' } });
    assert.deepEqual(old.got!.NetworkingConfig!.EndpointsConfig, { appnet: { MacAddress: '02:42:ac:11:00:09' } });
    assert.deepEqual(old.res.json.Warnings, []);
    // Before 1.44 an endpoint MacAddress without the container-wide one was ignored.
    const ignored = await create('1.43', {
      Image: 'b',
      NetworkingConfig: { EndpointsConfig: { bridge: { MacAddress: '02:42:ac:11:00:09' } } },
    });
    assert.deepEqual(ignored.got!.NetworkingConfig!.EndpointsConfig, { bridge: {} });
    const cur = await create('1.44', { Image: 'b', MacAddress: '02:42:ac:11:00:09' });
    assert.deepEqual(cur.got!.NetworkingConfig!.EndpointsConfig, { bridge: { MacAddress: '02:42:ac:11:00:09' } });
    assert.equal(cur.got!.MacAddress, undefined);
    assert.deepEqual(cur.res.json.Warnings, [
      'The container-wide MacAddress field is now deprecated. It should be specified in EndpointsConfig instead.',
    ]);
    const mismatch = await create('1.44', {
      Image: 'b',
      MacAddress: '02:42:ac:11:00:09',
      NetworkingConfig: { EndpointsConfig: { bridge: { MacAddress: '02:42:ac:11:00:0a' } } },
    });
    assert.equal(mismatch.res.status, 400);
    assert.match(mismatch.res.json.message, /container-wide MAC address must match the endpoint-specific MAC address/);
    // Before 1.44 the one endpoint takes it whatever its key; from 1.44 its key must be the mode's.
    const other = await create('1.43', {
      Image: 'b',
      MacAddress: '02:42:ac:11:00:09',
      HostConfig: { NetworkMode: 'appnet' },
      NetworkingConfig: { EndpointsConfig: { appnet2: {} } },
    });
    assert.deepEqual(other.got!.NetworkingConfig!.EndpointsConfig, { appnet2: { MacAddress: '02:42:ac:11:00:09' } });
    const unmatched = await create('1.44', {
      Image: 'b',
      MacAddress: '02:42:ac:11:00:09',
      HostConfig: { NetworkMode: 'appnet' },
      NetworkingConfig: { EndpointsConfig: { appnet2: {} } },
    });
    assert.equal(
      unmatched.res.json.message,
      'unable to migrate container-wide MAC address to a specific network: HostConfig.NetworkMode must match the identity of a network in NetworkSettings.Networks',
    );
    const hostMode = await create('1.43', { Image: 'b', MacAddress: '02:42:ac:11:00:09', HostConfig: { NetworkMode: 'host' } });
    assert.equal(hostMode.res.json.message, 'conflicting options: mac-address and the network mode');
  });

  test('1.45: VolumeOptions.Subpath refused before', async () => {
    const body = { Image: 'b', HostConfig: { Mounts: [{ Type: 'volume', Source: 'v', Target: '/x', VolumeOptions: { Subpath: 'a' } }] } };
    assert.equal((await create('1.44', body)).res.json.message, 'VolumeOptions.Subpath needs API v1.45 or newer');
    assert.equal((await create('1.45', body)).got!.HostConfig!.Mounts![0]!.VolumeOptions!.Subpath, 'a');
  });

  test('1.48: GwPriority dropped and image mounts refused before; the volume-driver warning from', async () => {
    const gw = { Image: 'b', NetworkingConfig: { EndpointsConfig: { bridge: { GwPriority: 5 } } } };
    assert.equal((await create('1.47', gw)).got!.NetworkingConfig!.EndpointsConfig!.bridge!.GwPriority, undefined);
    assert.equal((await create('1.48', gw)).got!.NetworkingConfig!.EndpointsConfig!.bridge!.GwPriority, 5);
    const img = { Image: 'b', HostConfig: { Mounts: [{ Type: 'image', Source: 'busybox', Target: '/x' }] } };
    assert.equal((await create('1.47', img)).res.json.message, 'Mount type "Image" needs API v1.48 or newer');
    const vd = { Image: 'b', HostConfig: { VolumeDriver: 'local', Mounts: [{ Type: 'volume', Source: 'v', Target: '/x' }] } };
    assert.deepEqual((await create('1.47', vd)).res.json.Warnings, []);
    assert.match((await create('1.48', vd)).res.json.Warnings[0], /container-wide volume-driver configuration is ignored/);
  });

  test('1.48: interface sysctls refused from (500, as dockerd); before, eth0 kept and another interface refused', async () => {
    const body = (k: string, mode = 'bridge') => ({ Image: 'b', HostConfig: { NetworkMode: mode, Sysctls: { [k]: '1' } } });
    const cur = await create('1.48', body('net.ipv4.conf.eth0.rp_filter'));
    assert.equal(cur.res.status, 500);
    assert.equal(
      cur.res.json.message,
      `interface specific sysctl setting "net.ipv4.conf.eth0.rp_filter" must be supplied using driver option 'com.docker.network.endpoint.sysctls'`,
    );
    assert.equal(
      (await create('1.48', body('net.ipv4.conf.eth0.rp_filter', 'host'))).res.status,
      201,
      'the host stack is not the container’s',
    );
    assert.equal((await create('1.48', body('net.ipv4.ip_forward'))).res.status, 201, 'no interface named');
    assert.deepEqual((await create('1.47', body('net.ipv4.conf.eth0.rp_filter'))).got!.HostConfig!.Sysctls, {
      'net.ipv4.conf.eth0.rp_filter': '1',
    });
    const eth1 = await create('1.47', body('net.ipv4.conf.eth1.rp_filter'));
    assert.equal(eth1.res.status, 500);
    assert.match(eth1.res.json.message, /^unable to determine network endpoint for sysctl net\.ipv4\.conf\.eth1\.rp_filter/);
  });

  test('1.41: the platform query is parsed and handed to the create from, ignored before', async () => {
    const platformOf = async (version: string, query: string) => {
      const before = fake.calls.length;
      const res = await h.request('POST', `/v${version}/containers/create${query}`, { body: { Image: 'busybox' } });
      return { res, platform: fake.calls.length > before ? fake.calls.at(-1)!.args[3] : 'not called' };
    };
    const arm = await platformOf('1.41', '?platform=linux/arm64');
    assert.equal(arm.res.status, 201);
    assert.deepEqual(arm.platform, { os: 'linux', architecture: 'arm64' }); // the backend checks the image (e2e: container-api)
    assert.equal((await platformOf('1.40', '?platform=linux/arm64')).platform, undefined);
    const bad = await platformOf('1.41', '?platform=nonsense');
    assert.equal(bad.res.status, 400);
    assert.equal(bad.res.json.message, '"nonsense": unknown operating system or architecture: invalid argument');
    assert.equal(bad.platform, 'not called');
  });

  test('field names in any case reach the version gates and the backend canonical', async () => {
    const got = (await create('1.43', { image: 'b', hostconfig: { annotations: { a: 'b' }, autoremove: true } })).got!;
    assert.equal(got.Image, 'b');
    assert.deepEqual(got.HostConfig, { Annotations: { a: 'b' }, AutoRemove: true });
    assert.equal(
      (await create('1.42', { Image: 'b', HostConfig: { AutoRemove: 'yes' } })).res.json.message,
      'invalid JSON: json: cannot unmarshal string into Go struct field HostConfig.AutoRemove of type bool',
    );
  });

  test('update: PidsLimit from 1.40, KernelMemory ignored from 1.42', async () => {
    const update = async (version: string, body: unknown) => {
      await h.request('POST', `/v${version}/containers/c1/update`, { body });
      return fake.calls.at(-1)!.args[1] as Record<string, unknown>;
    };
    assert.deepEqual(await update('1.39', { pidslimit: 10, Memory: 1 << 30 }), { Memory: 1 << 30 });
    assert.deepEqual(await update('1.40', { pidslimit: 10 }), { PidsLimit: 10 });
    assert.deepEqual(await update('1.41', { KernelMemory: 1 << 30 }), { KernelMemory: 1 << 30 });
    assert.deepEqual(await update('1.42', { KernelMemory: 1 << 30 }), {});
  });

  test('stop and restart: the signal parameter from 1.42', async () => {
    await h.request('POST', '/v1.41/containers/c1/stop?signal=SIGINT&t=3');
    assert.deepEqual(fake.calls.at(-1)!.args[1], { timeout: 3 });
    await h.request('POST', '/v1.42/containers/c1/restart?signal=SIGINT');
    assert.deepEqual(fake.calls.at(-1)!.args[1], { signal: 'SIGINT' });
  });

  test('list: HostConfig.Annotations from 1.46', async () => {
    assert.deepEqual((await h.request('GET', '/v1.45/containers/json')).json[0].HostConfig, { NetworkMode: 'bridge' });
    assert.deepEqual((await h.request('GET', '/v1.46/containers/json')).json[0].HostConfig.Annotations, { a: '1' });
  });

  test('logs without a TTY: raw-stream media type before 1.42, multiplexed from', async () => {
    assert.equal(
      (await h.request('GET', '/v1.41/containers/c1/logs?stdout=1')).headers['content-type'],
      'application/vnd.docker.raw-stream',
    );
    assert.equal(
      (await h.request('GET', '/v1.42/containers/c1/logs?stdout=1')).headers['content-type'],
      'application/vnd.docker.multiplexed-stream',
    );
  });

  test('wait: no condition and StatusCode alone before 1.30; a failed removal is an empty answer before 1.34', async () => {
    const old = await h.request('POST', '/v1.29/containers/c1/wait?condition=bogus');
    assert.equal(old.status, 200);
    assert.deepEqual(old.json, { StatusCode: 3 });
    assert.equal(fake.calls.at(-1)!.args[1], 'not-running');
    assert.equal((await h.request('POST', '/v1.30/containers/c1/wait?condition=bogus')).status, 400);
    assert.equal((await h.request('POST', '/v1.33/containers/c1/wait?condition=removed')).text, '');
    assert.deepEqual((await h.request('POST', '/v1.34/containers/c1/wait?condition=removed')).json, {
      StatusCode: 0,
      Error: { Message: 'removal failed' },
    });
  });
});
