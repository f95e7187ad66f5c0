import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkHost,
  formatValue,
  isGoDuration,
  maskCredentials,
  parseAddressPool,
  parseBool,
  parseCIDR,
  parseFeature,
  parseInteger,
  parseNetworkOpt,
  parseRuntimeFlag,
  parseSize,
  parseUlimit,
} from './values.ts';

test('parseBool accepts the Go spellings and nothing else', () => {
  for (const t of ['1', 't', 'T', 'true', 'TRUE', 'True']) assert.equal(parseBool(t), true);
  for (const f of ['0', 'f', 'F', 'false', 'FALSE', 'False']) assert.equal(parseBool(f), false);
  assert.throws(() => parseBool('yes'), /"yes" is not a boolean/);
  assert.throws(() => parseBool(''), /is not a boolean/);
});

test('parseInteger takes signed decimal integers only', () => {
  assert.equal(parseInteger('42'), 42);
  assert.equal(parseInteger('-1'), -1);
  assert.throws(() => parseInteger('1.5'), /not an integer/);
  assert.throws(() => parseInteger('abc'), /not an integer/);
  assert.throws(() => parseInteger('99999999999999999999'), /out of range/);
});

test('parseSize reads binary multiples in the Docker CLI spellings', () => {
  const mib64 = 64 * 1024 * 1024;
  for (const s of ['64M', '64m', '64MB', '64MiB', '64 M', '67108864']) assert.equal(parseSize(s), mib64, s);
  assert.equal(parseSize('1k'), 1024);
  assert.equal(parseSize('1.5g'), 1.5 * 1024 ** 3);
  assert.equal(parseSize('10b'), 10);
  assert.throws(() => parseSize('64X'), /invalid size: '64X'/);
  assert.throws(() => parseSize('-1M'), /invalid size/);
  assert.throws(() => parseSize(''), /invalid size/);
});

test('parseUlimit: name=soft[:hard], hard defaults to soft, soft must not exceed hard', () => {
  assert.deepEqual(parseUlimit('nofile=1024:2048'), { Name: 'nofile', Soft: 1024, Hard: 2048 });
  assert.deepEqual(parseUlimit('nproc=512'), { Name: 'nproc', Soft: 512, Hard: 512 });
  assert.deepEqual(parseUlimit('memlock=-1:-1'), { Name: 'memlock', Soft: -1, Hard: -1 });
  assert.throws(() => parseUlimit('nofile=2048:1024'), /soft limit must be less than or equal to hard limit: 2048 > 1024/);
  assert.throws(() => parseUlimit('bogus=1'), /invalid ulimit type: bogus/);
  assert.throws(() => parseUlimit('nofile'), /invalid ulimit argument: nofile/);
  assert.throws(() => parseUlimit('nofile=1:2:3'), /too many limit value arguments/);
  assert.throws(() => parseUlimit('nofile=x'), /not an integer/);
});

test('parseRuntimeFlag lower-cases the name and refuses the built-in one', () => {
  assert.deepEqual(parseRuntimeFlag('Crun=/usr/bin/crun'), ['crun', { path: '/usr/bin/crun' }]);
  assert.throws(() => parseRuntimeFlag('runc=/usr/bin/runc'), /runtime name 'runc' is reserved/);
  assert.throws(() => parseRuntimeFlag('crun'), /invalid runtime argument: crun/);
  assert.throws(() => parseRuntimeFlag('crun='), /invalid runtime argument/);
});

test('parseFeature: the value defaults to true', () => {
  assert.deepEqual(parseFeature('cdi'), ['cdi', true]);
  assert.deepEqual(parseFeature('cdi=false'), ['cdi', false]);
  assert.throws(() => parseFeature('cdi=maybe'), /not a boolean/);
  assert.throws(() => parseFeature('=true'), /invalid feature/);
});

test('parseAddressPool reads base and size and checks the prefix', () => {
  assert.deepEqual(parseAddressPool('base=10.10.0.0/16,size=24'), { base: '10.10.0.0/16', size: 24 });
  assert.deepEqual(parseAddressPool('size=64,base=fd00::/48'), { base: 'fd00::/48', size: 64 });
  assert.throws(() => parseAddressPool('base=10.10.0.0/16,size=8'), /invalid pool size 8/);
  assert.throws(() => parseAddressPool('base=10.10.0.0/16,size=33'), /invalid pool size 33/);
  assert.throws(() => parseAddressPool('base=10.10.0.0,size=24'), /invalid base prefix/);
  assert.throws(() => parseAddressPool('base=10.10.0.0/16'), /needs both base and size/);
  assert.throws(() => parseAddressPool('base=10.10.0.0/16,color=red'), /invalid field key color/);
  assert.throws(() => parseAddressPool('base'), /must be a key=value pair/);
});

test('parseNetworkOpt splits driver=option=value at the first two equals signs', () => {
  assert.deepEqual(parseNetworkOpt('bridge=com.engine.network.driver.mtu=1400'), ['bridge', 'com.engine.network.driver.mtu', '1400']);
  assert.deepEqual(parseNetworkOpt('bridge=opt=a=b'), ['bridge', 'opt', 'a=b']);
  assert.throws(() => parseNetworkOpt('bridge=mtu'), /driver=option=value/);
  assert.throws(() => parseNetworkOpt('bridge'), /driver=option=value/);
});

test('parseCIDR and checkHost', () => {
  assert.deepEqual(parseCIDR('172.17.0.1/16'), { address: '172.17.0.1', prefix: 16, family: 4 });
  assert.equal(parseCIDR('fd00::/64')?.family, 6);
  assert.equal(parseCIDR('10.0.0.0/33'), undefined);
  assert.equal(parseCIDR('10.0.0.0'), undefined);
  assert.equal(parseCIDR('nope/8'), undefined);
  for (const ok of ['unix:///var/run/engine.sock', 'tcp://0.0.0.0:2375', 'tcp://[::1]:2376', ':2375', 'fd://', '']) checkHost(ok);
  assert.throws(() => checkHost('http://x:1'), /invalid bind address format: http:\/\/x:1/);
  assert.throws(() => checkHost('tcp://x:1/path'), /should not contain a path element/);
});

test('isGoDuration, maskCredentials, formatValue', () => {
  assert.ok(isGoDuration('2200h'));
  assert.ok(isGoDuration('1h30m'));
  assert.ok(!isGoDuration('10 days'));
  assert.equal(maskCredentials('http://user:secret@proxy:3128'), 'http://xxxxx:xxxxx@proxy:3128/');
  assert.equal(maskCredentials('http://proxy:3128'), 'http://proxy:3128');
  assert.equal(formatValue(['a', 'b']), '[a b]');
  assert.equal(formatValue({ b: 1, a: { c: true } }), 'map[a:map[c:true] b:1]');
  assert.equal(formatValue(false), 'false');
});
