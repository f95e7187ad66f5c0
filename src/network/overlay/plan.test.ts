// Overlay rules without a kernel: VNI, subnet and address choice, device names, peer entry diffs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { overlayDevices, parseVniList, pickAddress, pickOverlaySubnet, pickVni, planPeers, VNI_START } from './plan.ts';

test('VNIs: the lowest free from 4096; vxlanid_list parsed', () => {
  assert.equal(pickVni([]), VNI_START);
  assert.equal(pickVni([4096, 4097, 4099]), 4098);
  assert.equal(parseVniList('5000'), 5000);
  assert.equal(parseVniList('5000,5001'), 5000);
  assert.throws(() => parseVniList('x'), /invalid VXLAN ID/);
  assert.throws(() => parseVniList(String(1 << 24)), /invalid VXLAN ID/);
});

test('subnets: SubnetSize pieces of the pools, skipping overlaps', () => {
  assert.equal(pickOverlaySubnet(['10.0.0.0/8'], 24, []), '10.0.0.0/24');
  assert.equal(pickOverlaySubnet(['10.0.0.0/8'], 24, ['10.0.0.0/24', '10.0.2.0/24']), '10.0.1.0/24');
  assert.equal(pickOverlaySubnet(['10.0.0.0/8'], 24, ['10.0.0.0/23']), '10.0.2.0/24');
  assert.equal(pickOverlaySubnet(['10.10.0.0/30'], 31, ['10.10.0.0/31', '10.10.0.2/31']), undefined);
  assert.equal(pickOverlaySubnet(['10.10.0.0/30', '10.20.0.0/16'], 26, ['10.10.0.0/30']), '10.20.0.0/26');
});

test('addresses: first free host address, never the gateway or the broadcast', () => {
  assert.equal(pickAddress('10.0.1.0/24', '10.0.1.1', []), '10.0.1.2');
  assert.equal(pickAddress('10.0.1.0/24', '10.0.1.1', ['10.0.1.2', '10.0.1.4']), '10.0.1.3');
  assert.equal(pickAddress('10.0.1.0/30', '10.0.1.1', ['10.0.1.2']), undefined);
});

test('device names stay within 15 characters', () => {
  const d = overlayDevices('0123456789abcdef0123456789abcdef');
  assert.equal(d.bridge, 'ov-0123456789ab');
  assert.ok(d.bridge.length <= 15 && d.vxlan.length <= 15);
});

test('peer entries: removals first, kept entries untouched, a moved MAC replaced', () => {
  const a = { ip: '10.0.1.2', mac: '02:42:0a:00:01:02', vtep: '192.168.5.2' };
  const b = { ip: '10.0.1.3', mac: '02:42:0a:00:01:03', vtep: '192.168.5.3' };
  const bMoved = { ...b, vtep: '192.168.5.4' };
  assert.deepEqual(planPeers('vx-1', [], []), { bridge: [], ip: [] });
  const p = planPeers('vx-1', [a, b], [a, bMoved]);
  assert.deepEqual(p.bridge, [
    'fdb del 02:42:0a:00:01:03 dev vx-1 dst 192.168.5.3 self',
    'fdb append 02:42:0a:00:01:03 dev vx-1 dst 192.168.5.4 self permanent',
  ]);
  assert.deepEqual(p.ip, ['neigh del 10.0.1.3 dev vx-1', 'neigh replace 10.0.1.3 lladdr 02:42:0a:00:01:03 dev vx-1 nud permanent']);
  assert.deepEqual(planPeers('vx-1', [a], []).ip, ['neigh del 10.0.1.2 dev vx-1']);
});
