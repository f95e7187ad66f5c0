import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PortAllocator, requestedPorts } from './ports.ts';

describe('port publishing', () => {
  test('exposed ports and bindings from PortBindings, PublishAllPorts over ExposedPorts', () => {
    const r = requestedPorts(
      {
        PortBindings: {
          '80/tcp': [
            { HostIp: '', HostPort: '8080' },
            { HostIp: '127.0.0.1', HostPort: '' },
          ],
          '53/udp': [{ HostPort: '5300-5301' }],
        },
        PublishAllPorts: true,
      },
      { '9000/tcp': {}, '80/tcp': {} },
    );
    assert.deepEqual(
      r.exposed.map((p) => `${p.port}/${p.proto}`),
      ['53/udp', '80/tcp', '9000/tcp'],
    );
    assert.deepEqual(
      r.bindings.map((b) => `${b.hostIp}:${b.hostPortLo}-${b.hostPortHi}->${b.port}/${b.proto}`),
      [':5300-5301->53/udp', ':8080-8080->80/tcp', '127.0.0.1:0-0->80/tcp', ':0-0->9000/tcp'],
    );
    assert.throws(() => requestedPorts({ PortBindings: { '80/tcp': [{ HostPort: '9-1' }] } }, {}), /invalid port specification/);
  });

  test('allocation: fixed ports conflict, ranges and ephemeral ports move on, wildcard overlaps', async () => {
    const a = new PortAllocator({ lo: 40000, hi: 40002 });
    const bind = async (p: number) => p;
    assert.equal((await a.allocate('c1', { proto: 'tcp', hostIp: '0.0.0.0', lo: 8080, hi: 8080 }, bind)).port, 8080);
    await assert.rejects(
      a.allocate('c2', { proto: 'tcp', hostIp: '127.0.0.1', lo: 8080, hi: 8080 }, bind),
      /Bind for 127\.0\.0\.1:8080 failed: port is already allocated/,
    );
    assert.equal(
      (await a.allocate('c2', { proto: 'udp', hostIp: '0.0.0.0', lo: 8080, hi: 8080 }, bind)).port,
      8080,
      'another protocol is another port',
    );
    assert.equal((await a.allocate('c2', { proto: 'tcp', hostIp: '', lo: 8080, hi: 8081 }, bind)).port, 8081);
    const e1 = await a.allocate('c3', { proto: 'tcp', hostIp: '', lo: 0, hi: 0 }, bind);
    // Something else on the host holds the next ephemeral port: it is skipped.
    const e2 = await a.allocate('c3', { proto: 'tcp', hostIp: '', lo: 0, hi: 0 }, async (p) => {
      if (p === 40001) throw new Error('EADDRINUSE');
      return p;
    });
    assert.deepEqual([e1.port, e2.port], [40000, 40002]);
    a.releaseOwner('c1');
    assert.equal((await a.allocate('c4', { proto: 'tcp', hostIp: '127.0.0.1', lo: 8080, hi: 8080 }, bind)).port, 8080);
  });

  test('allocation: ports another daemon forwards are passed over unless asked for by number', async () => {
    const a = new PortAllocator({ lo: 40000, hi: 40003 });
    const bind = async (p: number) => p;
    const avoid = (p: number) => p === 40000 || p === 40002;
    assert.equal((await a.allocate('c1', { proto: 'tcp', hostIp: '', lo: 0, hi: 0, avoid }, bind)).port, 40001);
    assert.equal((await a.allocate('c1', { proto: 'tcp', hostIp: '', lo: 40002, hi: 40003, avoid }, bind)).port, 40003);
    assert.equal(
      (await a.allocate('c2', { proto: 'tcp', hostIp: '', lo: 40002, hi: 40002, avoid }, bind)).port,
      40002,
      "a fixed port is the user's call",
    );
  });
});
