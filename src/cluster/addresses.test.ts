// The advertise address of init/join: the request's, else --cluster-default-advertise-addr (an IP
// or an interface name, with the listen port), else a specific listen address.
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { test } from 'node:test';
import { chooseAdvertise, parseAddr } from './addresses.ts';

test('the request, then the daemon default (IP or interface), then the listen address', () => {
  const anyListen = parseAddr('0.0.0.0:2377', 2377, 'listen address');
  const listen = parseAddr('10.1.1.1:4000', 2377, 'listen address');
  assert.deepEqual(chooseAdvertise(listen, '10.2.2.2', '10.3.3.3'), { host: '10.2.2.2', port: 4000 });
  assert.deepEqual(chooseAdvertise(listen, '10.2.2.2:5000', '10.3.3.3'), { host: '10.2.2.2', port: 5000 });
  assert.deepEqual(chooseAdvertise(listen, undefined, '10.3.3.3'), { host: '10.3.3.3', port: 4000 });
  assert.deepEqual(chooseAdvertise(anyListen, '', 'fd00::3'), { host: 'fd00::3', port: 2377 });
  assert.deepEqual(chooseAdvertise(listen, undefined, undefined), listen);
  // An interface name: its one IPv4 address (lo: 127.0.0.1).
  const lo = networkInterfaces().lo?.filter((a) => a.family === 'IPv4') ?? [];
  if (lo.length === 1) assert.deepEqual(chooseAdvertise(anyListen, undefined, 'lo'), { host: lo[0]!.address, port: 2377 });
  assert.throws(
    () => chooseAdvertise(anyListen, undefined, 'nosuchif0'),
    /invalid default advertise address: no such interface "nosuchif0"/,
  );
  assert.throws(() => chooseAdvertise(anyListen, undefined, '0.0.0.0'), /must be a non-zero IP address or network interface/);
});
