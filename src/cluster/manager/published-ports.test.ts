// Published ports of the routing mesh: the pure choice (dynamic ports from 30000, stable across
// updates, duplicates refused) and the claims in a real one-member etcd (two services never share a
// port, even when both ask at once; a removed service's ports can be taken again).
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { startTestEtcd } from '../../../test/helpers/etcd-member.ts';
import type { EtcdMember } from '../store/etcd-process.ts';
import { allocatePorts, freePorts, resolvePorts, specPorts, type PortConfig } from './published-ports.ts';
import type { ClusterStore } from '../store/store.ts';

const spec = (name: string, ports: object[]) => ({ Name: name, EndpointSpec: { Ports: ports } });

test('defaults and dynamic ports: lowest free from 30000, kept by an update, named ones first', () => {
  const wanted = specPorts(spec('a', [{ TargetPort: 80 }, { TargetPort: 53, Protocol: 'udp' }, { TargetPort: 22, PublishMode: 'host' }]));
  assert.deepEqual(wanted[0], { Protocol: 'tcp', TargetPort: 80, PublishedPort: 0, PublishMode: 'ingress' });
  const first = resolvePorts(wanted, [], new Set(['tcp/30000']));
  assert.deepEqual(
    first.ports.map((p) => [p.Protocol, p.PublishedPort, p.PublishMode]),
    [
      ['tcp', 30001, 'ingress'],
      ['udp', 30000, 'ingress'],
      ['tcp', 0, 'host'],
    ],
  );
  assert.equal(first.claim.length, 2, 'host-mode ports are not claimed');
  // An update with the same targets keeps them and claims nothing new.
  const again = resolvePorts(wanted, first.ports, new Set(['tcp/30000', 'tcp/30002']));
  assert.deepEqual(again.ports, first.ports);
  assert.deepEqual(again.claim, []);
  // A new target gets a new one; a number the spec names is never handed out dynamically.
  const more = resolvePorts(specPorts(spec('a', [{ TargetPort: 81 }, { TargetPort: 80, PublishedPort: 30000 }])), [], new Set());
  assert.deepEqual(
    more.ports.map((p) => p.PublishedPort),
    [30001, 30000],
  );
  assert.throws(
    () =>
      resolvePorts(
        specPorts(
          spec('a', [
            { TargetPort: 80, PublishedPort: 8080 },
            { TargetPort: 81, PublishedPort: 8080 },
          ]),
        ),
        [],
        new Set(),
      ),
    /duplicate published ports/,
  );
  // tcp and udp of the same number are different ports.
  const both = resolvePorts(
    specPorts(
      spec('a', [
        { TargetPort: 53, PublishedPort: 53 },
        { TargetPort: 53, PublishedPort: 53, Protocol: 'udp' },
      ]),
    ),
    [],
    new Set(),
  );
  assert.equal(both.claim.length, 2);
});

describe('published port claims in a real etcd', () => {
  let dir: string;
  let member: EtcdMember;
  const stores: ClusterStore[] = [];
  before(async () => {
    const etcd = await startTestEtcd();
    dir = etcd.dir;
    member = etcd.member;
    stores.push(await etcd.openStore(), await etcd.openStore());
  });
  after(async () => {
    for (const s of stores) s.close();
    await member?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('two services never share a port; freed ports are taken again', async () => {
    const [s1, s2] = stores as [ClusterStore, ClusterStore];
    // Two managers at once, each for a service without PublishedPort: different ports.
    const [a, b] = await Promise.all([
      allocatePorts(s1, 'svcA', spec('a', [{ TargetPort: 80 }]), []),
      allocatePorts(s2, 'svcB', spec('b', [{ TargetPort: 80 }]), []),
    ]);
    const got = [a.ports[0]!.PublishedPort, b.ports[0]!.PublishedPort].sort();
    assert.deepEqual(got, [30000, 30001]);
    // A named port held by another service: dockerd's refusal.
    await assert.rejects(
      allocatePorts(s1, 'svcC', spec('c', [{ TargetPort: 80, PublishedPort: a.ports[0]!.PublishedPort }]), []),
      (e: Error & { status?: number }) =>
        e.status === 400 && /port '3000[01]' is already in use by service 'a' \(svcA\) as an ingress port/.test(e.message),
    );
    // An update of A to a named port: the dynamic one is unused (freed by the caller), the new one claimed.
    const upd = await allocatePorts(s1, 'svcA', spec('a', [{ TargetPort: 80, PublishedPort: 8080 }]), a.ports as PortConfig[]);
    assert.deepEqual(
      upd.unused.map((p) => p.PublishedPort),
      [a.ports[0]!.PublishedPort],
    );
    await freePorts(s1, upd.unused);
    const c = await allocatePorts(s1, 'svcC', spec('c', [{ TargetPort: 80 }]), []);
    assert.equal(c.ports[0]!.PublishedPort, a.ports[0]!.PublishedPort, 'the freed port is the lowest free again');
    assert.deepEqual(
      (await s1.list<{ ServiceID: string }>('portalloc/')).map((x) => [x.key, x.value.ServiceID]).sort(),
      [
        [`portalloc/tcp/${a.ports[0]!.PublishedPort}`, 'svcC'],
        [`portalloc/tcp/${b.ports[0]!.PublishedPort}`, 'svcB'],
        ['portalloc/tcp/8080', 'svcA'],
      ].sort(),
    );
  });
});
