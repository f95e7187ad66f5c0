// Inspect's HostConfig: every field of dockerd's struct in its order, null for unset lists, [] kept.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostConfigView } from './host-config-view.ts';

test('unset fields get their Go zero value; [] and null stay apart; omitempty fields only when set', () => {
  const v = hostConfigView({ NetworkMode: 'bridge', CapAdd: [], MaskedPaths: [], Memory: 1 << 20, Tmpfs: {}, Init: false });
  assert.deepEqual(v.CapAdd, []);
  assert.equal(v.CapDrop, null);
  assert.deepEqual(v.MaskedPaths, []);
  assert.equal(v.ReadonlyPaths, null);
  assert.equal(v.PidsLimit, null);
  assert.equal(v.ContainerIDFile, '');
  assert.equal(v.Memory, 1 << 20);
  assert.deepEqual(v.ConsoleSize, [0, 0]);
  assert.deepEqual(v.RestartPolicy, { Name: '', MaximumRetryCount: 0 });
  assert.ok(!('Tmpfs' in v) && !('Sysctls' in v) && !('Mounts' in v) && !('Runtime' in v), 'empty omitempty fields are left out');
  assert.equal(v.Init, false, 'Init is a *bool: false is shown');
  const keys = Object.keys(v);
  assert.deepEqual(keys.slice(0, 4), ['Binds', 'ContainerIDFile', 'LogConfig', 'NetworkMode']);
  assert.deepEqual(keys.slice(-3), ['MaskedPaths', 'ReadonlyPaths', 'Init']);
  assert.ok(keys.indexOf('Isolation') < keys.indexOf('CpuShares'), 'Resources follow Isolation, as the embedded struct');
});

test('set omitempty fields are shown, and fields beyond the struct pass through', () => {
  const hc = { Sysctls: { 'net.ipv4.ip_forward': '1' }, Runtime: 'runc', Extra: 'x' };
  const v = hostConfigView(hc);
  assert.deepEqual(v.Sysctls, { 'net.ipv4.ip_forward': '1' });
  assert.equal(v.Runtime, 'runc');
  assert.equal((v as Record<string, unknown>).Extra, 'x');
});
