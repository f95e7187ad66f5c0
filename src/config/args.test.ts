import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from './args.ts';

const values = (argv: string[]) => Object.fromEntries(parseArgs(argv).values);

test('long flags take their value after a space or an equals sign', () => {
  assert.deepEqual(values(['--data-root', '/a', '--exec-root=/b']), { 'data-root': '/a', 'exec-root': '/b' });
  assert.deepEqual(values(['--mtu=1400', '--shutdown-timeout', '-1']), { mtu: 1400, 'shutdown-timeout': -1 });
});

test('booleans: bare means true, =false turns off, a following word is not consumed', () => {
  assert.deepEqual(values(['--debug', '--icc=false', '--ipv6=true']), { debug: true, icc: false, ipv6: true });
  assert.deepEqual(values(['--debug=false']), { debug: false });
  assert.throws(() => parseArgs(['--debug', 'false']), /"engined" accepts no arguments \(got "false"\)/);
  assert.throws(() => parseArgs(['--icc=nope']), /invalid argument "nope" for "--icc" flag: "nope" is not a boolean/);
});

test('short forms: -D, -H value, -Hvalue, -H=value, grouped bools', () => {
  assert.deepEqual(values(['-D']), { debug: true });
  assert.deepEqual(values(['-H', 'unix:///a', '-Hunix:///b', '-H=tcp://0.0.0.0:2375']), {
    hosts: ['unix:///a', 'unix:///b', 'tcp://0.0.0.0:2375'],
  });
  assert.deepEqual(values(['-Dl', 'warn']), { debug: true, 'log-level': 'warn' });
  assert.deepEqual(values(['-Dlerror']), { debug: true, 'log-level': 'error' });
  assert.deepEqual(values(['-D=false']), { debug: false });
  assert.deepEqual(values(['-s', 'btrfs', '-G', 'staff', '-p', '/run/x.pid', '-b', 'none']), {
    'storage-driver': 'btrfs',
    group: 'staff',
    pidfile: '/run/x.pid',
    bridge: 'none',
  });
});

test('action flags are reported apart from the configuration', () => {
  const p = parseArgs(['-v', '--validate', '--help']);
  assert.equal(p.version, true);
  assert.equal(p.validate, true);
  assert.equal(p.help, true);
  assert.equal(p.values.size, 0);
  assert.equal(p.given.size, 0);
});

test('repeatable list flags accumulate in order', () => {
  const v = values([
    '--label',
    'a=b',
    '--label=c=d',
    '--dns',
    '1.1.1.1',
    '--dns',
    '8.8.8.8',
    '--insecure-registry',
    'r:5000',
    '--registry-mirror',
    'https://m',
    '--exec-opt',
    'native.cgroupdriver=systemd',
    '--storage-opt',
    'overlay2.size=1G',
    '--host-gateway-ip',
    '10.0.0.1',
    '--host-gateway-ip',
    'fd00::1',
    '--cdi-spec-dir',
    '/x',
    '--authorization-plugin',
    'p',
  ]);
  assert.deepEqual(v, {
    labels: ['a=b', 'c=d'],
    dns: ['1.1.1.1', '8.8.8.8'],
    'insecure-registries': ['r:5000'],
    'registry-mirrors': ['https://m'],
    'exec-opts': ['native.cgroupdriver=systemd'],
    'storage-opts': ['overlay2.size=1G'],
    'host-gateway-ips': ['10.0.0.1', 'fd00::1'],
    'cdi-spec-dirs': ['/x'],
    'authorization-plugins': ['p'],
  });
});

test('a repeated single-value flag keeps the last value', () => {
  assert.deepEqual(values(['--log-level', 'warn', '-l', 'error']), { 'log-level': 'error' });
});

test('structured flags build the same shapes as the file', () => {
  const v = values([
    '--add-runtime',
    'crun=/usr/bin/crun',
    '--add-runtime=kata=/opt/kata',
    '--feature',
    'cdi',
    '--feature',
    'containerd-snapshotter=false',
    '--default-ulimit',
    'nofile=1024:2048',
    '--default-ulimit',
    'nproc=100',
    '--default-address-pool',
    'base=10.10.0.0/16,size=24',
    '--default-network-opt',
    'bridge=com.engine.network.driver.mtu=1400',
    '--default-network-opt',
    'bridge=com.engine.network.bridge.host_binding_ipv4=127.0.0.1',
    '--log-opt',
    'max-size=10m',
    '--log-opt',
    'max-file=3',
  ]);
  assert.deepEqual(v, {
    runtimes: { crun: { path: '/usr/bin/crun' }, kata: { path: '/opt/kata' } },
    features: { cdi: true, 'containerd-snapshotter': false },
    'default-ulimits': { nofile: { Name: 'nofile', Soft: 1024, Hard: 2048 }, nproc: { Name: 'nproc', Soft: 100, Hard: 100 } },
    'default-address-pools': [{ base: '10.10.0.0/16', size: 24 }],
    'default-network-opts': {
      bridge: { 'com.engine.network.driver.mtu': '1400', 'com.engine.network.bridge.host_binding_ipv4': '127.0.0.1' },
    },
    'log-opts': { 'max-size': '10m', 'max-file': '3' },
  });
});

test('--add-runtime refuses the built-in name and a name given twice', () => {
  assert.throws(
    () => parseArgs(['--add-runtime', 'runc=/x']),
    /invalid argument "runc=\/x" for "--add-runtime" flag: runtime name 'runc' is reserved/,
  );
  assert.throws(() => parseArgs(['--add-runtime', 'a=/x', '--add-runtime', 'A=/y']), /runtime 'a' was already defined/);
});

test('errors name the flag', () => {
  assert.throws(
    () => parseArgs(['--bogus']),
    (e: Error & { usage?: boolean }) => e.message === 'unknown flag: --bogus' && e.usage === true,
  );
  assert.throws(() => parseArgs(['--bogus=1']), /^ConfigError: unknown flag: --bogus$/);
  assert.throws(() => parseArgs(['-x']), /unknown shorthand flag: 'x' in -x/);
  assert.throws(() => parseArgs(['--builder', 'x']), /unknown flag: --builder/); // file-only
  assert.throws(() => parseArgs(['--data-root']), /flag needs an argument: --data-root/);
  assert.throws(() => parseArgs(['-H']), /flag needs an argument: 'H' in -H/);
  assert.throws(() => parseArgs(['--mtu', 'big']), /invalid argument "big" for "--mtu" flag/);
  assert.throws(() => parseArgs(['-l']), /flag needs an argument: 'l' in -l/);
  assert.throws(() => parseArgs(['--default-ulimit', 'nofile']), /for "--default-ulimit" flag: invalid ulimit argument/);
  assert.throws(() => parseArgs(['--log-opt', 'novalue']), /for "--log-opt" flag: "novalue" is not of the form key=value/);
  assert.throws(() => parseArgs(['--storage-driver=', 'x']), /accepts no arguments/);
});

test('given lists every key set, an empty string value means the default', () => {
  const p = parseArgs(['--bip=', '-D', '--']);
  assert.deepEqual([...p.given].sort(), ['bip', 'debug']);
  assert.equal(p.values.has('bip'), false);
  assert.throws(() => parseArgs(['--', '-D']), /accepts no arguments \(got "-D"\)/);
});
