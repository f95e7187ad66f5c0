import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { convertFileValues, parseConfigText, readConfigFile, unknownDirectives } from './file.ts';

const dir = mkdtempSync(join(tmpdir(), 'engine-config-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const convert = (doc: unknown) => convertFileValues(parseConfigText(JSON.stringify(doc)));
const typed = (doc: unknown) => Object.fromEntries(convert(doc).values);

test('a missing file is no file unless the path was named', () => {
  assert.equal(readConfigFile(join(dir, 'absent.json'), false), null);
  assert.throws(() => readConfigFile(join(dir, 'absent.json'), true), /open .*absent\.json: no such file or directory/);
  mkdirSync(join(dir, 'adir'));
  assert.throws(() => readConfigFile(join(dir, 'adir'), true), /is a directory/);
});

test('empty files, byte order marks and UTF-16 files are read', () => {
  const empty = join(dir, 'empty.json');
  writeFileSync(empty, '  \n');
  assert.equal(readConfigFile(empty, true)?.size, 0);
  const bom = join(dir, 'bom.json');
  writeFileSync(bom, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"debug": true}')]));
  assert.deepEqual(Object.fromEntries(readConfigFile(bom, true)!), { debug: true });
  const utf16 = join(dir, 'utf16.json');
  writeFileSync(utf16, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"debug": false}', 'utf16le')]));
  assert.deepEqual(Object.fromEntries(readConfigFile(utf16, true)!), { debug: false });
});

test('invalid JSON and non-object documents are refused', () => {
  assert.throws(() => parseConfigText('{"debug": tru}'), /invalid JSON/);
  assert.throws(() => parseConfigText('[1]'), /must be a JSON object/);
  assert.throws(() => parseConfigText('{"proxies": "http://x"}'), /proxies: expected an object/);
});

test('proxies are flattened; unknown directives are all listed, sorted', () => {
  const raw = parseConfigText(
    JSON.stringify({ proxies: { 'http-proxy': 'http://p:3128', 'ftp-proxy': 'x' }, zeta: 1, alpha: 2, debug: true, 'config-file': '/x' }),
  );
  assert.equal(raw.get('proxies.http-proxy'), 'http://p:3128');
  assert.deepEqual(unknownDirectives(raw), ['alpha', 'config-file', 'proxies.ftp-proxy', 'zeta']);
});

test('scalar types are checked; empty strings mean the default', () => {
  assert.deepEqual(typed({ debug: true, mtu: 1400, 'data-root': '/d', bip: '' }), { debug: true, mtu: 1400, 'data-root': '/d' });
  assert.deepEqual([...convert({ bip: '' }).given], ['bip']);
  assert.throws(() => convert({ debug: 'true' }), /^ConfigError: debug: expected a boolean, got string "true"$/);
  assert.throws(() => convert({ mtu: 1.5 }), /mtu: expected an integer, got number 1.5/);
  assert.throws(() => convert({ 'data-root': 5 }), /data-root: expected a string, got number 5/);
  assert.throws(() => convert({ dns: '8.8.8.8' }), /dns: expected an array of strings/);
  assert.throws(() => convert({ dns: ['8.8.8.8', 1] }), /dns\[1\]: expected a string/);
  assert.deepEqual(typed({ 'default-shm-size': 67108864 }), { 'default-shm-size': '67108864' });
});

test('log-opts must be strings', () => {
  assert.deepEqual(typed({ 'log-opts': { 'max-size': '10m' } }), { 'log-opts': { 'max-size': '10m' } });
  assert.throws(() => convert({ 'log-opts': { 'max-file': 3 } }), /log-opts\.max-file: expected a string, got number 3/);
});

test('default-network-opts is an object of objects of strings', () => {
  assert.deepEqual(typed({ 'default-network-opts': { bridge: { 'com.engine.network.driver.mtu': '1400' } } }), {
    'default-network-opts': { bridge: { 'com.engine.network.driver.mtu': '1400' } },
  });
  assert.throws(() => convert({ 'default-network-opts': { bridge: 'x' } }), /default-network-opts\.bridge: expected an object/);
  assert.throws(
    () => convert({ 'default-network-opts': { bridge: { mtu: 1400 } } }),
    /default-network-opts\.bridge\.mtu: expected a string/,
  );
});

test('features are booleans', () => {
  assert.deepEqual(typed({ features: { cdi: false } }), { features: { cdi: false } });
  assert.throws(() => convert({ features: { cdi: 'no' } }), /features\.cdi: expected a boolean/);
});

test('default-ulimits entries carry Name, Soft and Hard', () => {
  assert.deepEqual(typed({ 'default-ulimits': { nofile: { Name: 'nofile', Soft: 1024, Hard: 2048 }, nproc: { Soft: 5, Hard: 5 } } }), {
    'default-ulimits': { nofile: { Name: 'nofile', Soft: 1024, Hard: 2048 }, nproc: { Name: 'nproc', Soft: 5, Hard: 5 } },
  });
  assert.throws(
    () => convert({ 'default-ulimits': { nofile: { Name: 'nofile', Soft: '1', Hard: 2 } } }),
    /default-ulimits\.nofile\.Soft: expected an integer/,
  );
  assert.throws(
    () => convert({ 'default-ulimits': { nofile: { Name: 'nofile', Soft: 3, Hard: 2 } } }),
    /soft limit must be less than or equal to hard limit: 3 > 2/,
  );
  assert.throws(() => convert({ 'default-ulimits': { x: { Name: 'x', Soft: 1, Hard: 2 } } }), /invalid ulimit type: x/);
  assert.throws(() => convert({ 'default-ulimits': { nofile: { Name: 'nofile', Soft: 1, Hard: 2, Max: 3 } } }), /unknown field "Max"/);
});

test('runtimes take either a path (with args) or a runtimeType (with options)', () => {
  assert.deepEqual(
    typed({
      runtimes: {
        custom: { path: '/usr/local/bin/my-runc', runtimeArgs: ['--debug'] },
        gvisor: {
          runtimeType: 'io.containerd.runsc.v1',
          options: { TypeUrl: 'io.containerd.runsc.v1.options', ConfigPath: '/etc/runsc.toml' },
        },
      },
    }),
    {
      runtimes: {
        custom: { path: '/usr/local/bin/my-runc', runtimeArgs: ['--debug'] },
        gvisor: {
          runtimeType: 'io.containerd.runsc.v1',
          options: { TypeUrl: 'io.containerd.runsc.v1.options', ConfigPath: '/etc/runsc.toml' },
        },
      },
    },
  );
  assert.throws(
    () => convert({ runtimes: { x: { path: '/a', runtimeType: 'io.x.v1' } } }),
    /runtime x: cannot configure both path and runtimeType/,
  );
  assert.throws(() => convert({ runtimes: { x: {} } }), /runtime x: either a runtimeType or a path must be configured/);
  assert.throws(
    () => convert({ runtimes: { x: { path: '/a', options: { a: 1 } } } }),
    /runtime x: options cannot be used with a path runtime/,
  );
  assert.throws(
    () => convert({ runtimes: { x: { runtimeType: 'io.x.v1', runtimeArgs: ['-a'] } } }),
    /runtime x: args cannot be used with a runtimeType runtime/,
  );
  assert.throws(() => convert({ runtimes: { runc: { path: '/usr/bin/runc' } } }), /runtime name 'runc' is reserved/);
  assert.throws(() => convert({ runtimes: { x: { path: '/a', args: [] } } }), /runtimes\.x: unknown field "args"/);
  assert.throws(
    () => convert({ runtimes: { x: { path: '/a', runtimeArgs: '--debug' } } }),
    /runtimes\.x\.runtimeArgs: expected an array of strings/,
  );
});

test('default-address-pools are {base, size} with a valid CIDR and size', () => {
  assert.deepEqual(typed({ 'default-address-pools': [{ base: '172.30.0.0/16', size: 24 }] }), {
    'default-address-pools': [{ base: '172.30.0.0/16', size: 24 }],
  });
  assert.throws(
    () => convert({ 'default-address-pools': [{ base: '172.30.0.0', size: 24 }] }),
    /default-address-pools\[0\]: invalid base prefix/,
  );
  assert.throws(() => convert({ 'default-address-pools': [{ base: '172.30.0.0/16', size: 8 }] }), /invalid pool size 8/);
  assert.throws(() => convert({ 'default-address-pools': [{ base: '172.30.0.0/16', size: '24' }] }), /\.size: expected an integer/);
  assert.throws(() => convert({ 'default-address-pools': { base: '172.30.0.0/16', size: 24 } }), /expected an array/);
});

test('host-gateway-ips and the older single host-gateway-ip', () => {
  assert.deepEqual(typed({ 'host-gateway-ips': ['10.0.0.1', 'fd00::1'] }), { 'host-gateway-ips': ['10.0.0.1', 'fd00::1'] });
  assert.deepEqual(typed({ 'host-gateway-ip': '10.0.0.1' }), { 'host-gateway-ips': ['10.0.0.1'] });
  assert.deepEqual(typed({ 'host-gateway-ip': '' }), { 'host-gateway-ips': [] });
  assert.deepEqual([...convert({ 'host-gateway-ip': '10.0.0.1' }).given], ['host-gateway-ips']);
  assert.throws(() => convert({ 'host-gateway-ip': ['10.0.0.1'] }), /host-gateway-ip: expected a string/);
});

test('builder gc settings are shape-checked', () => {
  const builder = {
    gc: {
      enabled: true,
      defaultKeepStorage: '10GB',
      policy: [
        { keepStorage: '10GB', filter: ['unused-for=2200h'] },
        { keepStorage: '100GB', all: true },
      ],
    },
  };
  assert.deepEqual(typed({ builder }), { builder });
  assert.throws(() => convert({ builder: { gc: { enabled: 'yes' } } }), /builder\.gc\.enabled: expected a boolean/);
  assert.throws(() => convert({ builder: { gc: { defaultKeepStorage: 'lots' } } }), /builder\.gc\.defaultKeepStorage: invalid size/);
  assert.throws(() => convert({ builder: { gc: { policy: {} } } }), /builder\.gc\.policy: expected an array/);
  assert.throws(() => convert({ builder: { gc: { policy: [{ filter: ['unused-for=soon'] }] } } }), /"soon" is not a duration/);
  assert.throws(() => convert({ builder: { gc: { policy: [{ filter: 'unused-for=1h' }] } } }), /filter: expected an array of strings/);
  assert.throws(() => convert({ builder: { gc: { policy: [{ keep: '1GB' }] } } }), /builder\.gc\.policy\[0\]\.keep: unknown/);
  assert.throws(() => convert({ builder: { cache: {} } }), /builder\.cache: unknown builder setting/);
  assert.throws(() => convert({ builder: [] }), /builder: expected an object/);
});
