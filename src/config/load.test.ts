import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type LoadOutcome } from './load.ts';
import type { LoadedConfig } from './daemon-config.ts';
import { OPTIONS } from './options.ts';

const dir = mkdtempSync(join(tmpdir(), 'engine-config-load-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const VERSION = { version: '1.2.3', commit: 'abc1234' };
let counter = 0;

/** Writes daemon.json (object or raw text) to a fresh temp path. */
function configFile(doc: unknown): string {
  const path = join(dir, `daemon-${++counter}.json`);
  writeFileSync(path, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return path;
}

/** Loads with a temp config file (empty unless given), never the host's /etc/engine/daemon.json. */
function load(argv: string[], doc: unknown = {}, env: NodeJS.ProcessEnv = { HOME: '/home/u' }): LoadOutcome {
  return loadConfig(['--config-file', configFile(doc), ...argv], env, VERSION);
}
function run(argv: string[], doc: unknown = {}, env?: NodeJS.ProcessEnv): LoadedConfig {
  const out = load(argv, doc, env);
  assert.equal(out.kind, 'run', out.kind === 'exit' ? out.stderr : '');
  return (out as { loaded: LoadedConfig }).loaded;
}
function failure(argv: string[], doc: unknown = {}, env?: NodeJS.ProcessEnv): string {
  const out = load(argv, doc, env);
  assert.equal(out.kind, 'exit');
  assert.equal((out as { code: number }).code, 1);
  return (out as { stderr: string }).stderr;
}

test('-v and --version print the version and exit 0', () => {
  for (const flag of ['-v', '--version']) {
    assert.deepEqual(loadConfig([flag], {}, VERSION), { kind: 'exit', code: 0, stdout: 'Engine version 1.2.3, build abc1234\n' });
  }
});

test('--help lists every flag with its short form and default, sorted', () => {
  const out = loadConfig(['--help'], {}, VERSION);
  assert.equal(out.kind, 'exit');
  const text = (out as { stdout: string }).stdout;
  assert.equal((out as { code: number }).code, 0);
  assert.match(text, /^Usage:\tengined \[OPTIONS\]/);
  for (const o of OPTIONS.filter((x) => !x.fileOnly)) {
    const names = o.short ? `-${o.short}, --${o.flag}` : `--${o.flag}`;
    assert.ok(text.includes(names), names);
  }
  assert.match(text, /-H, --host list +Daemon socket\(s\) to listen on/);
  assert.match(text, /--data-root string +Root directory of persistent state \(default "\/var\/lib\/engine"\)/);
  assert.match(text, /--max-concurrent-downloads int +Concurrent layer downloads per pull \(default 3\)/);
  assert.match(text, /--icc +Enable inter-container communication on the default bridge \(default true\)/);
  assert.doesNotMatch(text, /--builder/);
  const flags = [...text.matchAll(/^ {2}(?:-\w, | {4})--([\w-]+)/gm)].map((m) => m[1]);
  assert.deepEqual(flags, [...flags].sort());
});

test('command-line mistakes exit 1 with a hint', () => {
  const out = loadConfig(['--no-such-flag'], {}, VERSION);
  assert.deepEqual(out, { kind: 'exit', code: 1, stderr: "unknown flag: --no-such-flag\nSee 'engined --help'.\n" });
  assert.match(failure(['--mtu']), /flag needs an argument: --mtu/);
});

test('a named configuration file that is missing is an error naming it', () => {
  const path = join(dir, 'missing.json');
  const out = loadConfig(['--config-file', path], {}, VERSION);
  assert.deepEqual(out, {
    kind: 'exit',
    code: 1,
    stderr: `unable to configure the Engine daemon with file ${path}: open ${path}: no such file or directory\n`,
  });
});

test(
  'the default configuration file may be absent',
  { skip: existsSync('/etc/engine/daemon.json') && 'host has /etc/engine/daemon.json' },
  () => {
    const out = loadConfig([], { HOME: '/home/u' }, VERSION);
    assert.equal(out.kind, 'run');
    assert.equal((out as { loaded: LoadedConfig }).loaded.config['config-file'], '/etc/engine/daemon.json');
    assert.equal((out as { loaded: LoadedConfig }).loaded.fileKeys.size, 0);
  },
);

test('defaults come from the table', () => {
  const { config, warnings, flagKeys, fileKeys } = run([]);
  assert.equal(config['data-root'], '/var/lib/engine');
  assert.equal(config['log-level'], 'info');
  assert.equal(config['max-concurrent-downloads'], 3);
  assert.equal(config['default-runtime'], 'runc');
  assert.deepEqual(config.hosts, []);
  assert.deepEqual(config['cdi-spec-dirs'], ['/etc/cdi', '/var/run/cdi']);
  assert.equal(config.bip, undefined);
  assert.equal(config.tlscacert, '/home/u/.engine/ca.pem');
  assert.deepEqual(warnings, []);
  assert.deepEqual([...flagKeys], ['config-file']);
  assert.equal(fileKeys.size, 0);
});

test('file and flags merge, and the result records where each key came from', () => {
  const { config, flagKeys, fileKeys } = run(['--label', 'a=b', '-H', 'unix:///tmp/e.sock'], {
    'data-root': '/srv/engine',
    'exec-opts': ['native.cgroupdriver=cgroupfs'],
  });
  assert.equal(config['data-root'], '/srv/engine');
  assert.deepEqual(config['exec-opts'], ['native.cgroupdriver=cgroupfs']);
  assert.deepEqual(config.labels, ['a=b']);
  assert.deepEqual(config.hosts, ['unix:///tmp/e.sock']);
  assert.deepEqual([...flagKeys].sort(), ['config-file', 'hosts', 'labels']);
  assert.deepEqual([...fileKeys].sort(), ['data-root', 'exec-opts']);
});

test('invalid JSON is reported with the file name', () => {
  const path = configFile('{"debug": true,}');
  const out = loadConfig(['--config-file', path], {}, VERSION);
  assert.equal(out.kind, 'exit');
  assert.match((out as { stderr: string }).stderr, new RegExp(`^unable to configure the Engine daemon with file ${path}: invalid JSON: `));
});

test('unknown directives are all listed, sorted', () => {
  const err = failure([], { 'zzz-option': 1, debug: true, 'aaa-option': true, proxies: { 'gopher-proxy': 'x' } });
  assert.match(
    err,
    /^unable to configure the Engine daemon with file \/.*\.json: the following directives don't match any configuration option: aaa-option, proxies\.gopher-proxy, zzz-option\n$/,
  );
});

test('an option set as a flag and in the file refuses start-up, naming each', () => {
  const err = failure(['--debug', '-H', 'unix:///a.sock', '--log-format=json', '--feature', 'cdi=false', '--icc=false'], {
    debug: false,
    hosts: ['unix:///b.sock'],
    'log-format': 'text',
    features: { cdi: true },
    'data-root': '/x',
  });
  assert.match(err, /: the following directives are specified both as a flag and in the configuration file: /);
  assert.ok(
    err.endsWith(
      'debug: (from flag: true, from file: false), features: (from flag: map[cdi:false], from file: map[cdi:true]), ' +
        'hosts: (from flag: [unix:///a.sock], from file: [unix:///b.sock]), log-format: (from flag: json, from file: text)\n',
    ),
    err,
  );
});

test('a conflict counts whatever the file value, and proxy credentials are masked', () => {
  assert.match(failure(['--bip', '10.1.0.1/16'], { bip: '' }), /bip: \(from flag: 10\.1\.0\.1\/16, from file: \)/);
  const err = failure(['--http-proxy', 'http://u:p@proxy:3128'], { proxies: { 'http-proxy': 'http://u2:p2@proxy:3128' } });
  assert.match(err, /http-proxy: \(from flag: http:\/\/xxxxx:xxxxx@proxy:3128\/, from file: http:\/\/xxxxx:xxxxx@proxy:3128\/\)/);
  assert.doesNotMatch(err, /p2/);
});

test('host-gateway-ip and host-gateway-ips together are refused; the old key conflicts with the flag', () => {
  assert.match(
    failure([], { 'host-gateway-ip': '10.0.0.1', 'host-gateway-ips': ['10.0.0.2'] }),
    /host-gateway-ip and host-gateway-ips must not both be specified in the config file/,
  );
  assert.match(
    failure(['--host-gateway-ip', '10.0.0.3'], { 'host-gateway-ip': '10.0.0.1' }),
    /specified both as a flag and in the configuration file: host-gateway-ip: \(from flag: \[10\.0\.0\.3\], from file: 10\.0\.0\.1\)/,
  );
  assert.deepEqual(run([], { 'host-gateway-ip': '10.0.0.1' }).config['host-gateway-ips'], ['10.0.0.1']);
});

test('--add-runtime and file runtimes merge; one name in both conflicts', () => {
  const { config } = run(['--add-runtime', 'crun=/usr/bin/crun', '--default-runtime', 'kata'], {
    runtimes: { kata: { path: '/opt/kata' } },
  });
  assert.deepEqual(config.runtimes, { kata: { path: '/opt/kata' }, crun: { path: '/usr/bin/crun' } });
  assert.match(
    failure(['--add-runtime', 'kata=/usr/bin/kata'], { runtimes: { kata: { path: '/opt/kata' } } }),
    /runtimes\.kata: \(from flag: \/usr\/bin\/kata, from file: map\[path:\/opt\/kata\]\)/,
  );
});

test('default-runtime must name runc, a registered runtime or a shim name', () => {
  assert.match(failure(['--default-runtime', 'nope']), /specified default runtime 'nope' does not exist/);
  assert.equal(run(['--default-runtime', 'io.containerd.runsc.v1']).config['default-runtime'], 'io.containerd.runsc.v1');
  assert.equal(run([], { 'default-runtime': 'custom', runtimes: { custom: { path: '/bin/custom' } } }).config['default-runtime'], 'custom');
});

test('--validate prints configuration OK, or the error naming the file', () => {
  const good = configFile({ debug: true, labels: ['a=b'] });
  assert.deepEqual(loadConfig(['--validate', '--config-file', good], {}, VERSION), { kind: 'exit', code: 0, stdout: 'configuration OK\n' });
  const bad = configFile({ 'log-level': 'loud', bogus: 1 });
  const out = loadConfig(['--validate', '--config-file', bad], {}, VERSION);
  assert.deepEqual(out, {
    kind: 'exit',
    code: 1,
    stderr: `unable to configure the Engine daemon with file ${bad}: the following directives don't match any configuration option: bogus\n`,
  });
  const badValue = configFile({ 'log-level': 'loud' });
  assert.deepEqual(loadConfig(['--validate', '--config-file', badValue], {}, VERSION), {
    kind: 'exit',
    code: 1,
    stderr: `unable to configure the Engine daemon with file ${badValue}: invalid logging level: loud\n`,
  });
  // An option that is not supported prints its warning beside "configuration OK".
  const pending = loadConfig(['--validate', '--config-file', configFile({ 'selinux-enabled': true })], {}, VERSION);
  assert.deepEqual(pending, {
    kind: 'exit',
    code: 0,
    stdout: 'configuration OK\n',
    stderr: 'WARNING: selinux-enabled is set but SELinux is not supported\n',
  });
});

test('values are validated', () => {
  const cases: [string[], unknown, RegExp][] = [
    [['--log-level', 'loud'], {}, /invalid logging level: loud/],
    [['--log-format', 'xml'], {}, /invalid log format: xml/],
    [[], { 'default-cgroupns-mode': 'shared' }, /invalid default cgroup namespace \(shared\)/],
    [[], { 'default-ipc-mode': 'host' }, /default IPC mode setting \(host\) is invalid/],
    [['--exec-opt', 'native.cgroupdriver=magic'], {}, /invalid exec-opt \(native.cgroupdriver=magic\)/],
    [['--exec-opt', 'foo=bar'], {}, /invalid exec-opt \(foo=bar\): unknown option: 'foo'/],
    [['--exec-opt', 'nonsense'], {}, /must be formatted 'opt=value'/],
    [['-s', 'aufs'], {}, /invalid storage-driver: aufs/],
    [['--max-concurrent-downloads', '-1'], {}, /invalid max concurrent downloads: -1/],
    [[], { 'max-download-attempts': -3 }, /invalid max download attempts: -3/],
    [['--mtu', '20'], {}, /invalid default MTU: 20/],
    [['--mtu', '70000'], {}, /invalid default MTU: 70000/],
    [['--shutdown-timeout', '-2'], {}, /invalid shutdown-timeout: -2/],
    [['--default-shm-size', 'lots'], {}, /invalid default-shm-size/],
    [['--label', 'novalue'], {}, /bad attribute format: novalue/],
    [['--label', 'a=1', '--label', 'a=2'], {}, /conflict labels for a=2 and a=1/],
    [['--dns', '8.8.8'], {}, /IP address is not correctly formatted: 8.8.8/],
    [['--dns-search', 'bad_domain!'], {}, /bad_domain! is not a valid domain/],
    [['--bip', '10.0.0.1'], {}, /invalid bip/],
    [['--fixed-cidr-v6', '10.0.0.0/8'], {}, /invalid fixed-cidr-v6/],
    [['--default-gateway', 'fd00::1'], {}, /invalid default-gateway/],
    [['--ip', 'localhost'], {}, /invalid ip/],
    [['--host-gateway-ip', '10.0.0.1', '--host-gateway-ip', '10.0.0.2'], {}, /only one IPv4 and one IPv6/],
    [['-H', 'http://0.0.0.0:1'], {}, /invalid bind address format/],
    [['--registry-mirror', 'ftp://m'], {}, /invalid mirror: unsupported scheme "ftp"/],
    [['--insecure-registry', 'http://r:5000'], {}, /should not contain ':\/\/'/],
    [['--node-generic-resource', 'gpu'], {}, /could not parse GenericResource: incorrect term gpu, missing '=' or malformed expression/],
    [['--network-control-plane-mtu', '60'], {}, /invalid network-control-plane-mtu: 60/],
    [['--cluster-default-advertise-addr', '10.0.0.1:2377'], {}, /invalid cluster-default-advertise-addr "10.0.0.1:2377"/],
    [[], { 'cluster-default-advertise-addr': 'eth 0' }, /an IP address or a network interface name \(without a port\)/],
  ];
  for (const [argv, doc, re] of cases) assert.match(failure(argv, doc), re, argv.join(' '));
});

test('the cluster flags: an IP or interface name as the default advertise address, an MTU; neither warns', () => {
  for (const v of ['10.0.0.1', 'fd00::1', 'eth0', 'enp0s31f6', 'br-1.10'])
    assert.equal(run(['--cluster-default-advertise-addr', v]).config['cluster-default-advertise-addr'], v);
  const loaded = run(['--cluster-default-advertise-addr', 'eth0', '--network-control-plane-mtu', '1400']);
  assert.equal(loaded.config['network-control-plane-mtu'], 1400);
  assert.ok(!loaded.warnings.some((w) => /advertise|control-plane/.test(w)), loaded.warnings.join('\n'));
  assert.equal(run([], { 'network-control-plane-mtu': 0 }).config['network-control-plane-mtu'], 1500);
});

test('validation errors from a file name the file', () => {
  const err = failure([], { mtu: 10 });
  assert.match(err, /^unable to configure the Engine daemon with file \/.*: invalid default MTU: 10/);
});

test('accepted spellings are normalised', () => {
  assert.equal(run(['--log-level', 'warning']).config['log-level'], 'warn');
  assert.equal(run(['-l', 'ERROR']).config['log-level'], 'error');
  const { config } = run([], { mtu: 0, 'max-concurrent-downloads': 0, 'shutdown-timeout': -1, labels: ['a=b', 'a=b'] });
  assert.equal(config.mtu, 1500);
  assert.equal(config['max-concurrent-downloads'], 3);
  assert.equal(config['shutdown-timeout'], -1);
  assert.deepEqual(config.labels, ['a=b']);
  assert.equal(run(['--default-shm-size', '64MiB']).config['default-shm-size'], '64MiB');
});

test('--debug sets log-level debug unless log-level was given', () => {
  assert.equal(run(['-D']).config['log-level'], 'debug');
  assert.equal(run([], { debug: true }).config['log-level'], 'debug');
  assert.equal(run(['-D', '-l', 'warn']).config['log-level'], 'warn');
  assert.equal(run(['-D'], { 'log-level': 'error' }).config['log-level'], 'error');
  assert.equal(run([], { debug: true, 'log-level': '' }).config['log-level'], 'debug');
});

test('--tlsverify implies tls', () => {
  assert.equal(run(['--tlsverify']).config.tls, true);
  assert.equal(run([], { tlsverify: true }).config.tls, true);
  assert.equal(run([]).config.tls, false);
});

test('environment: ENGINE_DRIVER is only the storage-driver default', () => {
  assert.equal(run([], {}, { ENGINE_DRIVER: 'btrfs' }).config['storage-driver'], 'btrfs');
  assert.equal(run(['-s', 'zfs'], {}, { ENGINE_DRIVER: 'btrfs' }).config['storage-driver'], 'zfs');
  assert.equal(run([], { 'storage-driver': 'fuse-overlayfs' }, { ENGINE_DRIVER: 'btrfs' }).config['storage-driver'], 'fuse-overlayfs');
  assert.match(failure([], {}, { ENGINE_DRIVER: 'aufs' }), /invalid storage-driver: aufs/);
});

test('environment: ENGINE_CERT_PATH, ~ expansion and ENGINE_TLS_VERIFY', () => {
  const certs = run([], {}, { HOME: '/home/u', ENGINE_CERT_PATH: '/etc/engine/certs' }).config;
  assert.deepEqual(
    [certs.tlscacert, certs.tlscert, certs.tlskey],
    ['/etc/engine/certs/ca.pem', '/etc/engine/certs/cert.pem', '/etc/engine/certs/key.pem'],
  );
  const explicit = run(['--tlscert', '~/mine.pem'], {}, { HOME: '/home/u', ENGINE_CERT_PATH: '/etc/engine/certs' }).config;
  assert.equal(explicit.tlscert, '/home/u/mine.pem');
  assert.equal(explicit.tlskey, '/etc/engine/certs/key.pem');
  assert.equal(run([], {}, { HOME: '/home/v', ENGINE_CERT_PATH: '~/c' }).config.tlskey, '/home/v/c/key.pem');
  const verify = run([], {}, { HOME: '/h', ENGINE_TLS_VERIFY: '1' }).config;
  assert.equal(verify.tlsverify, true);
  assert.equal(verify.tls, true);
  assert.equal(run([], {}, { HOME: '/h', ENGINE_TLS_VERIFY: '' }).config.tlsverify, false);
  assert.equal(run(['--tlsverify=false'], {}, { HOME: '/h', ENGINE_TLS_VERIFY: '1' }).config.tlsverify, false);
});

test('environment: proxy variables fill only what flags and file left unset', () => {
  const env = { HOME: '/h', HTTP_PROXY: 'http://env:1', https_proxy: 'http://envs:2', NO_PROXY: 'localhost', no_proxy: 'ignored' };
  const fromEnv = run([], {}, env);
  assert.equal(fromEnv.config['proxies.http-proxy'], 'http://env:1');
  assert.equal(fromEnv.config['proxies.https-proxy'], 'http://envs:2');
  assert.equal(fromEnv.config['proxies.no-proxy'], 'localhost');
  assert.deepEqual(fromEnv.warnings, [], 'proxies from the environment are not "set" options');
  const mixed = run(['--http-proxy', 'http://flag:1'], { proxies: { 'no-proxy': 'file.example' } }, env).config;
  assert.equal(mixed['proxies.http-proxy'], 'http://flag:1');
  assert.equal(mixed['proxies.https-proxy'], 'http://envs:2');
  assert.equal(mixed['proxies.no-proxy'], 'file.example');
});

test('warnings: pending and unsupported options set to a non-default value, and unknown features', () => {
  const { warnings } = run(['--icc=false', '--iptables=true', '--selinux-enabled', '--feature', 'teleport'], {
    'live-restore': true,
    'max-concurrent-downloads': 3,
    'default-ulimits': { nofile: { Name: 'nofile', Soft: 1, Hard: 2 } },
    builder: { gc: { enabled: false } },
    debug: true,
  });
  // Which of these warn follows the option table's build status (unsupported ones always do).
  const expected = ['builder', 'icc', 'live-restore', 'selinux-enabled']
    .map((k) => OPTIONS.find((o) => o.key === k)!)
    .filter((o) => o.status !== 'built')
    .map((o) => `${o.key} is set but ${o.note}`);
  assert.deepEqual(warnings, [...expected, 'features.teleport is set but is not a known feature']);
  assert.ok(warnings.includes('selinux-enabled is set but SELinux is not supported'));
});

test("issue 14's options are built: none warns; --selinux-enabled keeps its clear refusal", () => {
  const { warnings } = run(
    [
      '--authorization-plugin',
      'authz1',
      '--cdi-spec-dir',
      '/tmp/cdi',
      '--experimental',
      '--metrics-addr',
      '127.0.0.1:9323',
      '--userns-remap',
      'default',
      '--node-generic-resource',
      'gpu=UUID1',
      '--rootless=false',
    ],
    { features: { cdi: false } },
  );
  assert.deepEqual(warnings, []);
  for (const key of [
    'authorization-plugins',
    'cdi-spec-dirs',
    'metrics-addr',
    'userns-remap',
    'node-generic-resources',
    'rootless',
    'features',
  ])
    assert.equal(OPTIONS.find((o) => o.key === key)!.status, 'built', key);
  assert.deepEqual(run(['--selinux-enabled']).warnings, ['selinux-enabled is set but SELinux is not supported']);
});

test('the full sample configuration file validates', () => {
  const sample = {
    'allow-direct-routing': false,
    'authorization-plugins': [],
    bip: '',
    bip6: '',
    bridge: '',
    builder: {
      gc: {
        enabled: true,
        defaultKeepStorage: '10GB',
        policy: [
          { keepStorage: '10GB', filter: ['unused-for=2200h'] },
          { keepStorage: '50GB', filter: ['unused-for=3300h'] },
          { keepStorage: '100GB', all: true },
        ],
      },
    },
    'cgroup-parent': '',
    supervisor: '/run/supervisor/supervisor.sock',
    'supervisor-namespace': 'engine',
    'supervisor-plugins-namespace': 'engine-plugins',
    'data-root': '',
    debug: true,
    'default-address-pools': [
      { base: '172.30.0.0/16', size: 24 },
      { base: '172.31.0.0/16', size: 24 },
    ],
    'default-cgroupns-mode': 'private',
    'default-gateway': '',
    'default-gateway-v6': '',
    'default-network-opts': {},
    'default-runtime': 'runc',
    'default-shm-size': '64M',
    'default-ulimits': { nofile: { Hard: 64000, Name: 'nofile', Soft: 64000 } },
    dns: [],
    'dns-opts': [],
    'dns-search': [],
    'exec-opts': [],
    'exec-root': '',
    experimental: false,
    features: { cdi: true, 'containerd-snapshotter': true },
    'fixed-cidr': '',
    'fixed-cidr-v6': '',
    group: '',
    'host-gateway-ip': '',
    hosts: [],
    proxies: {
      'http-proxy': 'http://proxy.example.com:80',
      'https-proxy': 'https://proxy.example.com:443',
      'no-proxy': '*.test.example.com,.example.org',
    },
    icc: false,
    init: false,
    'init-path': '/usr/libexec/engine-init',
    'insecure-registries': [],
    ip: '0.0.0.0',
    'ip-forward': false,
    'ip-masq': false,
    iptables: false,
    ip6tables: false,
    ipv6: false,
    labels: [],
    'live-restore': true,
    'log-driver': 'json-file',
    'log-format': 'text',
    'log-level': '',
    'log-opts': {
      'cache-disabled': 'false',
      'cache-max-file': '5',
      'cache-max-size': '20m',
      'cache-compress': 'true',
      env: 'os,customer',
      labels: 'somelabel',
      'max-file': '5',
      'max-size': '10m',
    },
    'max-concurrent-downloads': 3,
    'max-concurrent-uploads': 5,
    'max-download-attempts': 5,
    mtu: 0,
    'no-new-privileges': false,
    'node-generic-resources': ['NVIDIA-GPU=UUID1', 'NVIDIA-GPU=UUID2'],
    pidfile: '',
    'raw-logs': false,
    'registry-mirrors': [],
    runtimes: {
      'cc-runtime': { path: '/usr/bin/cc-runtime' },
      custom: { path: '/usr/local/bin/my-runc-replacement', runtimeArgs: ['--debug'] },
    },
    'seccomp-profile': '',
    'selinux-enabled': false,
    'shutdown-timeout': 15,
    'storage-driver': '',
    'storage-opts': [],
    'cluster-default-advertise-addr': '',
    tls: true,
    tlscacert: '',
    tlscert: '',
    tlskey: '',
    tlsverify: true,
    'userland-proxy': false,
    'userland-proxy-path': '/usr/libexec/engine-proxy',
    'userns-remap': '',
  };
  const path = configFile(sample);
  const out = loadConfig(['--validate', '--config-file', path], { HOME: '/root' }, VERSION);
  assert.equal(out.kind, 'exit');
  assert.equal((out as { code: number }).code, 0, (out as { stderr?: string }).stderr);
  const { config } = run([], sample, { HOME: '/root' });
  assert.equal(config['data-root'], '/var/lib/engine');
  assert.equal(config['log-level'], 'debug');
  assert.equal(config.mtu, 1500);
  assert.equal(config.tlscacert, '/root/.engine/ca.pem');
  assert.equal(config['storage-driver'], 'overlay2');
  assert.equal(config['proxies.https-proxy'], 'https://proxy.example.com:443');
});

test('DOCKER_MIN_API_VERSION raises the oldest API version served; out of range it stops the start', () => {
  assert.equal(run([], {}, { HOME: '/home/u', DOCKER_MIN_API_VERSION: '1.40' }).minApiVersion, '1.40');
  assert.equal(run([], {}, { HOME: '/home/u' }).minApiVersion, undefined);
  assert.deepEqual(load([], {}, { HOME: '/home/u', DOCKER_MIN_API_VERSION: '1.12' }), {
    kind: 'exit',
    code: 1,
    stderr: 'invalid DOCKER_MIN_API_VERSION: minimum supported API version is 1.24: 1.12\n',
  });
});

test('console-addr: off by default, from the flag or daemon.json, a conflict when both are set', () => {
  assert.equal(run([]).config['console-addr'], undefined);
  assert.equal(run(['--console-addr', '127.0.0.1:9090']).config['console-addr'], '127.0.0.1:9090');
  assert.equal(run([], { 'console-addr': '[::1]:9090' }).config['console-addr'], '[::1]:9090');
  assert.match(failure(['--console-addr', '127.0.0.1:9090'], { 'console-addr': '127.0.0.1:9091' }), /console-addr/);
});
