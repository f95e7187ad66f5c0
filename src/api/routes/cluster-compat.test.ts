// The cluster routes' API-version gates and body decoding on a real ApiServer with a recording
// fake backend: a service spec at both sides of each version dockerd's adjustForAPIVersion uses,
// swarm init's newer options, templating of secrets and configs, the services list's status, and
// field names in any case stored canonical.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import type { ClusterObject } from '../../types/cluster.ts';
import { registerClusterRoutes, type ClusterBackend } from './cluster.ts';

const full = () => ({
  Name: 'web',
  TaskTemplate: {
    ContainerSpec: {
      Image: 'busybox',
      Sysctls: { 'net.core.somaxconn': '1024' },
      CapabilityAdd: ['CAP_NET_ADMIN'],
      CapabilityDrop: ['CAP_MKNOD'],
      Ulimits: [{ Name: 'nofile', Soft: 1, Hard: 2 }],
      OomScoreAdj: 100,
      Healthcheck: { Test: ['CMD', 'true'], StartInterval: 1_000_000_000 },
      Privileges: { NoNewPrivileges: true, Seccomp: { Mode: 'default' }, AppArmor: { Mode: 'default' }, CredentialSpec: { Config: 'c' } },
      Configs: [{ ConfigID: 'x', ConfigName: 'x', Runtime: {} }],
      Mounts: [{ Type: 'tmpfs', Target: '/t', TmpfsOptions: { SizeBytes: 1, Options: [['noexec']] } }],
    },
    Placement: { MaxReplicas: 2 },
    Resources: { Limits: { Pids: 10 } },
  },
  Mode: { ReplicatedJob: { TotalCompletions: 1 } },
});

describe('cluster routes by API version', () => {
  const { backend, calls } = fakeBackend<ClusterBackend>({
    create: { ID: 'x1' },
    update: {},
    init: 'node1',
    list: [],
    logs: async () => (async function* () {})(),
  });
  const h = new RouteHarness((r) => registerClusterRoutes(r, backend));
  after(() => h.close());
  const created = async (v: string, body: unknown) => {
    const res = await h.request('POST', `/v${v}/services/create`, { body });
    assert.equal(res.status, 201, res.text);
    return calls.at(-1)!.args[1] as any;
  };

  test('1.40: Sysctls, CredentialSpec.Config, config Runtime and MaxReplicas dropped before', async () => {
    const old = await created('1.39', full());
    assert.equal(old.TaskTemplate.ContainerSpec.Sysctls, undefined);
    assert.equal(old.TaskTemplate.ContainerSpec.Privileges.CredentialSpec.Config, undefined);
    assert.equal(old.TaskTemplate.ContainerSpec.Configs[0].Runtime, undefined);
    assert.equal(old.TaskTemplate.Placement.MaxReplicas, undefined);
    const cur = await created('1.40', full());
    assert.deepEqual(cur.TaskTemplate.ContainerSpec.Sysctls, { 'net.core.somaxconn': '1024' });
    assert.equal(cur.TaskTemplate.Placement.MaxReplicas, 2);
    assert.deepEqual(cur.TaskTemplate.ContainerSpec.Configs[0].Runtime, {});
  });

  test('1.41: capabilities, ulimits, pids limit and job modes dropped before', async () => {
    const old = await created('1.40', full());
    assert.equal(old.TaskTemplate.ContainerSpec.CapabilityAdd, undefined);
    assert.equal(old.TaskTemplate.ContainerSpec.CapabilityDrop, undefined);
    assert.equal(old.TaskTemplate.ContainerSpec.Ulimits, undefined);
    assert.equal(old.TaskTemplate.Resources.Limits.Pids, undefined);
    assert.deepEqual(old.Mode, {});
    const cur = await created('1.41', full());
    assert.deepEqual(cur.TaskTemplate.ContainerSpec.CapabilityAdd, ['CAP_NET_ADMIN']);
    assert.equal(cur.TaskTemplate.Resources.Limits.Pids, 10);
    assert.deepEqual(cur.Mode, { ReplicatedJob: { TotalCompletions: 1 } });
  });

  test('1.44: seccomp, apparmor, no-new-privileges and StartInterval dropped before', async () => {
    const old = (await created('1.43', full())).TaskTemplate.ContainerSpec;
    assert.deepEqual(old.Privileges, { CredentialSpec: { Config: 'c' } });
    assert.equal(old.Healthcheck.StartInterval, undefined);
    const cur = (await created('1.44', full())).TaskTemplate.ContainerSpec;
    assert.equal(cur.Privileges.NoNewPrivileges, true);
    assert.deepEqual(cur.Privileges.Seccomp, { Mode: 'default' });
    assert.equal(cur.Healthcheck.StartInterval, 1_000_000_000);
  });

  test('1.46: tmpfs Options and OomScoreAdj dropped before; also on update', async () => {
    const old = (await created('1.45', full())).TaskTemplate.ContainerSpec;
    assert.deepEqual(old.Mounts[0].TmpfsOptions, { SizeBytes: 1 });
    assert.equal(old.OomScoreAdj, undefined);
    const cur = (await created('1.46', full())).TaskTemplate.ContainerSpec;
    assert.deepEqual(cur.Mounts[0].TmpfsOptions.Options, [['noexec']]);
    assert.equal(cur.OomScoreAdj, 100);
    await h.request('POST', '/v1.45/services/x1/update?version=3', { body: full() });
    assert.equal((calls.at(-1)!.args[2] as any).TaskTemplate.ContainerSpec.OomScoreAdj, undefined);
  });

  test('a 1.41 client’s spec keeps Networks, UpdateConfig.Order and ForceUpdate as sent, names canonical', async () => {
    const spec = await created('1.41', {
      name: 'web',
      taskTemplate: { containerSpec: { image: 'busybox' }, forceUpdate: 2 },
      networks: [{ target: 'ov', aliases: ['www'] }],
      updateConfig: { parallelism: 2, order: 'start-first' },
      rollbackConfig: { order: 'start-first', failureAction: 'pause' },
      unknownField: true,
    });
    assert.deepEqual(spec, {
      Name: 'web',
      TaskTemplate: { ContainerSpec: { Image: 'busybox' }, ForceUpdate: 2 },
      Networks: [{ Target: 'ov', Aliases: ['www'] }],
      UpdateConfig: { Parallelism: 2, Order: 'start-first' },
      RollbackConfig: { Order: 'start-first', FailureAction: 'pause' },
    });
    const bad = await h.request('POST', '/v1.41/services/create', { body: { TaskTemplate: { ForceUpdate: 'x' } } });
    assert.equal(bad.status, 400);
    assert.equal(
      bad.json.message,
      'invalid JSON: json: cannot unmarshal string into Go struct field ServiceSpec.TaskTemplate.ForceUpdate of type uint64',
    );
  });

  test('secret and config templating needs 1.37; a config keeps Templating as sent', async () => {
    const tpl = { Name: 'c', Data: 'eA==', templating: { name: 'golang' } };
    const old = await h.request('POST', '/v1.36/configs/create', { body: tpl });
    assert.equal(old.status, 400);
    assert.equal(old.json.message, 'config templating is not supported on the specified API version: 1.36');
    assert.equal(
      (await h.request('POST', '/v1.36/secrets/create', { body: tpl })).json.message,
      'secret templating is not supported on the specified API version: 1.36',
    );
    assert.equal((await h.request('POST', '/v1.37/configs/create', { body: tpl })).status, 201);
    assert.deepEqual(calls.at(-1)!.args[1], { Name: 'c', Data: 'eA==', Templating: { Name: 'golang' } });
  });

  test('swarm init: DefaultAddrPool/SubnetSize from 1.39, DataPathPort from 1.40', async () => {
    const body = { ListenAddr: '0.0.0.0:2377', DefaultAddrPool: ['10.20.0.0/16'], SubnetSize: 24, DataPathPort: 4789 };
    await h.request('POST', '/v1.38/swarm/init', { body });
    assert.deepEqual(calls.at(-1)!.args[0], { ListenAddr: '0.0.0.0:2377' });
    await h.request('POST', '/v1.39/swarm/init', { body });
    assert.deepEqual(calls.at(-1)!.args[0], { ListenAddr: '0.0.0.0:2377', DefaultAddrPool: ['10.20.0.0/16'], SubnetSize: 24 });
    await h.request('POST', '/v1.40/swarm/init', { body: { listenaddr: '0.0.0.0:2377', datapathport: 4789 } });
    assert.deepEqual(calls.at(-1)!.args[0], { ListenAddr: '0.0.0.0:2377', DataPathPort: 4789 });
  });

  test('services list: status from 1.41', async () => {
    await h.request('GET', '/v1.40/services?status=1');
    assert.deepEqual(calls.at(-1)!.args[2], { status: false });
    await h.request('GET', '/v1.41/services?status=1');
    assert.deepEqual(calls.at(-1)!.args[2], { status: true });
  });

  test('node and swarm specs are decoded too', async () => {
    await h.request('POST', '/nodes/n1/update?version=1', { body: { availability: 'drain', role: 'worker', labels: { a: 'b' } } });
    assert.deepEqual(calls.at(-1)!.args[2] as ClusterObject, { Availability: 'drain', Role: 'worker', Labels: { a: 'b' } });
  });

  test('1.30: older clients have the image pinned by the daemon (queryRegistry) on create and update', async () => {
    await h.request('POST', '/v1.29/services/create', { body: { TaskTemplate: { ContainerSpec: { Image: 'busybox' } } } });
    assert.equal((calls.at(-1)!.args[2] as { queryRegistry?: boolean }).queryRegistry, true);
    await h.request('POST', '/v1.30/services/create', { body: { TaskTemplate: { ContainerSpec: { Image: 'busybox' } } } });
    assert.equal((calls.at(-1)!.args[2] as { queryRegistry?: boolean }).queryRegistry, undefined);
    await h.request('POST', '/v1.29/services/x1/update?version=1', { body: {} });
    assert.equal((calls.at(-1)!.args[3] as { queryRegistry?: boolean }).queryRegistry, true);
    await h.request('POST', '/v1.30/services/x1/update?version=1', { body: {} });
    assert.equal((calls.at(-1)!.args[3] as { queryRegistry?: boolean }).queryRegistry, undefined);
  });

  test('service logs: raw-stream media type before 1.42, multiplexed from', async () => {
    assert.equal((await h.request('GET', '/v1.41/services/x1/logs?stdout=1')).headers['content-type'], 'application/vnd.docker.raw-stream');
    assert.equal(
      (await h.request('GET', '/v1.42/services/x1/logs?stdout=1')).headers['content-type'],
      'application/vnd.docker.multiplexed-stream',
    );
  });
});
