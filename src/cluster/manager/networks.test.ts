// Overlay networks in the replicated store, against a real one-member etcd: the create request's
// refusals, VNI and subnet allocation from the cluster's pool, name/VNI/subnet conflicts, addresses
// unique under concurrent claims from two managers' clients, removal refused while endpoints exist,
// allocations freed by removal, stale endpoints and those of removed nodes dropped, and the watch
// pushing to the node's driver.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { startTestEtcd } from '../../../test/helpers/etcd-member.ts';
import { after, before, describe, test } from 'node:test';
import type { OverlayEndpoint, OverlayHost, OverlayNode, SwarmNetwork } from '../../network/overlay/contract.ts';
import { Logger } from '../../util/log.ts';
import { until } from '../../../test/helpers/until.ts';
import { EtcdMember } from '../store/etcd-process.ts';
import { ClusterNetworks } from './networks.ts';
import { checkOverlayBody } from './network-records.ts';
import { specPorts } from './published-ports.ts';
import { claimServiceVips, freeServiceVips, resolveNetworkTargets } from './service-vips.ts';
import { ClusterStore } from '../store/store.ts';
import type { ClusterRecord } from '../ca/swarm-object.ts';

const log = new Logger({ level: 'error', format: 'text', raw: false });

test('overlay create requests refused as they should be', () => {
  const refused = (body: object, re: RegExp) => assert.throws(() => checkOverlayBody({ Driver: 'overlay', ...body }), re);
  refused({ Name: '' }, /must not be empty/);
  refused({ Name: 'x', Options: { encrypted: '' } }, /encrypted overlay networks .* not built/);
  refused({ Name: 'x', EnableIPv6: true }, /IPv6 on overlay networks is not built/);
  refused({ Name: 'x', Scope: 'local' }, /invalid scope/);
  refused({ Name: 'x', IPAM: { Config: [{ Subnet: '10.9.0.0/24' }, { Subnet: '10.8.0.0/24' }] } }, /more than one subnet/);
  refused({ Name: 'x', IPAM: { Config: [{ Subnet: '10.9.0.0/24', Gateway: '10.8.0.1' }] } }, /invalid gateway/);
  refused({ Name: 'x', Options: { 'com.docker.network.driver.overlay.vxlanid_list': 'abc' } }, /invalid VXLAN ID/);
  checkOverlayBody({
    Name: 'x',
    Driver: 'overlay',
    Attachable: true,
    IPAM: { Config: [{ Subnet: '10.9.0.0/24', Gateway: '10.9.0.254' }] },
  });
});

class RecordingHost implements OverlayHost {
  node: OverlayNode | null = null;
  networks: SwarmNetwork[] = [];
  endpoints: OverlayEndpoint[] = [];
  async close(): Promise<void> {}
  async setNetworks(node: OverlayNode | null, networks: SwarmNetwork[]): Promise<void> {
    this.node = node;
    this.networks = networks;
  }
  async setEndpoints(endpoints: OverlayEndpoint[]): Promise<void> {
    this.endpoints = endpoints;
  }
  attachTask(): void {}
  localEndpoints(): string[] {
    return [];
  }
}

describe('overlay networks in a real etcd', () => {
  let dir: string;
  let member: EtcdMember;
  const stores: ClusterStore[] = [];
  const host = new RecordingHost();
  let one: ClusterNetworks;
  let two: ClusterNetworks;
  before(async () => {
    const etcd = await startTestEtcd(log);
    dir = etcd.dir;
    member = etcd.member;
    for (let i = 0; i < 2; i++) stores.push(await etcd.openStore());
    const cluster = async () => ({ DataPathPort: 4789, DefaultAddrPool: ['10.0.0.0/8'], SubnetSize: 24 }) as ClusterRecord;
    one = new ClusterNetworks({ store: stores[0]!, log, host, nodeId: 'node1', vtep: '192.0.2.1', cluster });
    two = new ClusterNetworks({ store: stores[1]!, log, host: undefined, nodeId: 'node2', vtep: '192.0.2.2', cluster });
    for (const n of ['node1', 'node2']) await stores[0]!.create(`nodes/${n}`, { ID: n });
    await one.start();
  });
  after(async () => {
    await one?.stop(false);
    for (const s of stores) s.close();
    await member?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('allocation, conflicts, unique addresses, removal, the watch', async () => {
    const ingress = await one.create({ Name: 'ingress', Driver: 'overlay', Ingress: true });
    const ov = await two.create({ Name: 'ov', Driver: 'overlay', Attachable: true });
    await assert.rejects(one.create({ Name: 'ov', Driver: 'overlay' }), /network with name ov already exists/);
    await assert.rejects(one.create({ Name: 'ingress2', Driver: 'overlay', Ingress: true }), /an ingress network already exists/);
    await assert.rejects(one.create({ Name: 'given', Driver: 'overlay', IPAM: { Config: [{ Subnet: '10.0.1.128/25' }] } }), /overlaps/);
    const given = await one
      .create({ Name: 'given', Driver: 'overlay', Options: { 'com.docker.network.driver.overlay.vxlanid_list': '4097' } })
      .catch((e: Error) => e);
    assert.match(String(given), /VXLAN ID 4097 is already in use/);

    const nets = await until('both networks pushed to the node', () => (host.networks.length === 2 ? host.networks : undefined), 10_000);
    const byName = new Map(nets.map((n) => [n.Name, n]));
    assert.equal(byName.get('ingress')!.Id, ingress.Id);
    assert.deepEqual(
      [byName.get('ingress')!.subnet, byName.get('ingress')!.vni, byName.get('ingress')!.Ingress],
      ['10.0.0.0/24', 4096, true],
    );
    assert.deepEqual([byName.get('ov')!.subnet, byName.get('ov')!.gateway, byName.get('ov')!.vni], ['10.0.1.0/24', '10.0.1.1', 4097]);
    assert.deepEqual(host.node, { nodeId: 'node1', vtep: '192.0.2.1', port: 4789 });

    // Two managers claim 40 addresses at once: no address is handed out twice, never the gateway.
    const ips = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? one : two).claimAddress(ov.Id)));
    assert.equal(new Set(ips).size, 40);
    assert.ok(!ips.includes('10.0.1.1'));
    await assert.rejects(one.claimAddress(ov.Id, ips[0]), /Address already in use/);

    await two.publish({
      networkId: ov.Id,
      endpointId: 'ep2',
      containerId: 'c2',
      name: 'two',
      aliases: ['b'],
      ip: ips[0]!,
      mac: '02:42:0a:00:01:02',
    });
    const ep = await until('the endpoint pushed', () => host.endpoints.find((e) => e.endpointId === 'ep2'), 10_000);
    assert.deepEqual([ep.nodeId, ep.vtep, ep.name, ep.aliases], ['node2', '192.0.2.2', 'two', ['b']]);
    await assert.rejects(one.remove(ov.Id), /has active endpoints/);

    // node2 comes back without that endpoint: it is dropped, with its address.
    await one.reconcile('node2', []);
    await until('the stale endpoint gone', () => (host.endpoints.length === 0 ? true : undefined), 10_000);
    // A removed node's endpoints go with it.
    await two.publish({
      networkId: ov.Id,
      endpointId: 'ep3',
      containerId: 'c3',
      name: 'three',
      aliases: [],
      ip: ips[0]!,
      mac: '02:42:0a:00:01:02',
    });
    await until('the endpoint pushed', () => host.endpoints.find((e) => e.endpointId === 'ep3'), 10_000);
    await stores[0]!.delete('nodes/node2');
    await until(
      "the removed node's endpoint gone",
      async () => ((await stores[0]!.list('endpoints/')).length === 0 ? true : undefined),
      10_000,
    );
    // The sync that released it pushes the endpoints right after (a moment later on a loaded machine).
    await until('the node told', () => (host.endpoints.length === 0 ? true : undefined), 10_000);
    for (const ip of ips.slice(1)) await one.release(ov.Id, 'none', ip);
    await one.remove(ov.Id);
    await until('the network gone', () => (host.networks.length === 1 ? true : undefined), 10_000);
    // Its name, VNI and subnet are free again.
    const again = await one.create({ Name: 'ov', Driver: 'overlay' });
    const n = await until('the new network', () => host.networks.find((x) => x.Id === again.Id), 10_000);
    assert.deepEqual([n.subnet, n.vni], ['10.0.1.0/24', 4097]);
  });

  test("workers' polls: a digest only while nothing changed; a write through the manager seen at once, one elsewhere soon", async () => {
    type State = { port: number; networks?: SwarmNetwork[]; endpoints?: OverlayEndpoint[]; digest: string; same?: boolean };
    const poll = async (known?: string) => (await one.serveRemote('node1', 'state', known ? { known } : {})) as State;
    const net = await one.create({ Name: 'polled', Driver: 'overlay', Attachable: true });
    const first = await until(
      'the network in a poll',
      async () => ((await poll()).networks?.some((n) => n.Id === net.Id) ? poll() : undefined),
      10_000,
    );
    assert.ok(first.digest);
    assert.deepEqual(await poll(first.digest), { port: 4789, digest: first.digest, same: true });
    const { ip } = (await one.serveRemote('node1', 'claim', { networkId: net.Id })) as { ip: string };
    const ep = { networkId: net.Id, endpointId: 'epp', containerId: 'cp', name: 'p', aliases: [], ip, mac: '02:42:0a:00:02:02' };
    await one.serveRemote('node1', 'publish', { ...ep, vtep: '192.0.2.1' });
    const after = await poll(first.digest);
    assert.equal(after.same, undefined);
    assert.ok(
      after.endpoints?.some((e) => e.endpointId === 'epp'),
      'the worker sees its own publish in its next poll',
    );
    assert.deepEqual(await poll(after.digest), { port: 4789, digest: after.digest, same: true });
    await two.release(net.Id, 'epp', ip); // through another manager: this one hears it from its watch
    await until(
      'the release in a poll',
      async () => ((await poll(after.digest)).endpoints?.every((e) => e.endpointId !== 'epp') ? true : undefined),
      10_000,
    );
    await one.remove(net.Id);
  });

  test('service VIPs: targets resolved, claimed and published (no node, kept by the sync), freed', async () => {
    const net = await one.create({ Name: 'svcnet', Driver: 'overlay' });
    const spec = {
      Name: 'web',
      TaskTemplate: { ContainerSpec: { Image: 'busybox' }, Networks: [{ Target: 'svcnet' }] },
      EndpointSpec: { Ports: [{ TargetPort: 80, PublishedPort: 8080 }] },
    };
    await resolveNetworkTargets(stores[0]!, spec);
    assert.equal(spec.TaskTemplate.Networks[0]!.Target, net.Id);
    await assert.rejects(
      resolveNetworkTargets(stores[0]!, { TaskTemplate: { Networks: [{ Target: 'nosuch' }] } }),
      /network nosuch not found/,
    );
    const ingressId = host.networks.find((x) => x.Ingress)!.Id;
    const { vips } = await claimServiceVips(stores[0]!, 'svc1', spec, [], specPorts(spec));
    assert.deepEqual(
      vips.map((v) => v.NetworkID),
      [net.Id, ingressId],
    );
    assert.match(vips[0]!.Addr, /^10\.0\.\d+\.\d+\/24$/);
    const ep = await until(
      'the VIP endpoints pushed and kept',
      () => {
        const got = host.endpoints.filter((e) => e.vip);
        return got.length === 2 ? got : undefined;
      },
      10_000,
    );
    const onIngress = ep.find((e) => e.networkId === ingressId)!;
    assert.deepEqual([onIngress.name, onIngress.nodeId, onIngress.ports], ['web', '', [{ proto: 'tcp', published: 8080, target: 80 }]]);
    await assert.rejects(one.remove(net.Id), /has active endpoints/);
    // dnsrr without ports: both VIPs unused; freed, the network can go.
    const next = { ...spec, EndpointSpec: { Mode: 'dnsrr' } };
    const again = await claimServiceVips(stores[0]!, 'svc1', next, vips, specPorts(next));
    assert.deepEqual(again.vips, []);
    assert.deepEqual(again.unused, vips);
    await freeServiceVips(stores[0]!, 'svc1', again.unused);
    await until('the VIP endpoints gone', () => (host.endpoints.some((e) => e.vip) ? undefined : true), 10_000);
    await one.remove(net.Id);
  });
});
