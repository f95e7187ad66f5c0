// Managed plugins (issue 14, item 4), end to end with the docker CLI: a real volume-driver plugin
// built here (a static C program, test/fixtures/volume-plugin-c.ts) is created from a directory,
// pushed to a loopback registry, removed, installed again from the registry (privileges granted),
// used as the driver of a volume that a container writes to, disabled/set/enabled, kept enabled
// across a daemon restart, and removed.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTestVolumePlugin, canBuildStatic, TEST_PLUGIN_CONFIG } from '../fixtures/volume-plugin-c.ts';
import { httpOverUnix, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { startRegistry, type TestRegistry } from '../helpers/registry.ts';
import { tarToBuffer } from '../../src/util/tar-writer.ts';
import { until } from '../helpers/until.ts';
import { decodeFrames, type StoredEntry } from '../helpers/log-plugin.ts';

/** The pid of the plugin's process: the one in the plugin's cgroup (its path ends in the plugin id). */
async function pluginPid(id: string): Promise<number | undefined> {
  for (const e of await readdir('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    // Processes come and go while we look: one that is gone is not the plugin.
    const cg = await readFile(`/proc/${e}/cgroup`, 'utf8').catch(() => '');
    const cmd = await readFile(`/proc/${e}/cmdline`, 'utf8').catch(() => '');
    if (cg.includes(`/${id}\n`) && cmd === '/testvol\0') return Number(e);
  }
  return undefined;
}

const skip = !(await canBuildStatic()) && 'gcc is not installed: the test plugin cannot be built (scripts/setup.sh installs it)';

describe('managed plugins', { skip }, () => {
  let d: TestDaemon;
  let reg: TestRegistry;
  let authReg: TestRegistry;
  let dir: string;
  let remote: string;
  const alias = 'testvol';
  const startedAt = Math.floor(Date.now() / 1000) - 1;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-mplugin-'));
    await buildTestVolumePlugin(join(dir, 'plugin'));
    reg = await startRegistry();
    authReg = await startRegistry({ auth: { user: 'alice', password: 'wonderland' } });
    remote = `${reg.host}/testvol:1.0`;
    d = await startDaemon({ config: {} });
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
    await reg?.cleanup();
    await authReg?.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  const ok = async (args: string[]) => {
    const r = await d.docker(args);
    assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}\n${d.output.slice(-2000)}`);
    return r.stdout;
  };
  const inspect = async (name: string) => JSON.parse(await ok(['plugin', 'inspect', name]))[0];

  test('create from a directory (config.json + rootfs), push to a registry, remove', async () => {
    await ok(['plugin', 'create', remote, join(dir, 'plugin')]);
    const p = await inspect(remote);
    assert.equal(p.Name, remote);
    assert.equal(p.Enabled, false);
    assert.deepEqual(p.Config.Interface.Types, ['docker.volumedriver/1.0', 'docker.authz/1.0', 'docker.logdriver/1.0']);
    assert.deepEqual(p.Settings.Env, ['ROOT=/data']);
    assert.equal(p.Config.rootfs.diff_ids.length, 1);

    const pushed = await ok(['plugin', 'push', remote]);
    assert.match(pushed, new RegExp(`The push refers to repository \\[${reg.host}/testvol\\]`));
    assert.match(pushed, /^[0-9a-f]{12}: Pushed$/m);
    assert.match(pushed, /^1\.0: digest: sha256:[0-9a-f]{64} size: \d+$/m);
    const res = await fetch(`http://${reg.host}/v2/testvol/manifests/1.0`, {
      headers: { Accept: 'application/vnd.docker.distribution.manifest.v2+json' },
    });
    assert.equal(res.status, 200);
    const manifest = (await res.json()) as { config: { mediaType: string; digest: string }; layers: Array<{ digest: string }> };
    assert.equal(manifest.config.mediaType, 'application/vnd.docker.plugin.v1+json');
    assert.equal(manifest.layers.length, 1);
    const config = (await (await fetch(`http://${reg.host}/v2/testvol/blobs/${manifest.config.digest}`)).json()) as {
      Network: { Type: string };
      rootfs: { diff_ids: string[] };
    };
    assert.equal(config.Network.Type, 'host');
    assert.deepEqual(config.rootfs.diff_ids, p.Config.rootfs.diff_ids);

    await ok(['plugin', 'rm', remote]);
    assert.equal((await ok(['plugin', 'ls', '-q'])).trim(), '');
    assert.ok(!existsSync(join(d.dataRoot, 'plugins', p.Id)), 'the plugin directory is gone');
  });

  test('create: bad contexts and names are 400s with a message; a taken name is a 409', async () => {
    const onlyRootfs = await tarToBuffer(async (tw) => {
      await tw.directory('rootfs', { mode: 0o755 });
    });
    const noConfig = await d.request('POST', '/plugins/create?name=bad', {
      body: onlyRootfs,
      headers: { 'Content-Type': 'application/x-tar' },
    });
    assert.equal(noConfig.status, 400);
    assert.equal(noConfig.json().message, 'invalid plugin context: config.json is missing');
    const badConfig = await tarToBuffer(async (tw) => {
      await tw.file('config.json', JSON.stringify({ Interface: { Types: ['docker.volumedriver/1.0'] } }));
      await tw.directory('rootfs', { mode: 0o755 });
    });
    const noSocket = await d.request('POST', '/plugins/create?name=bad', {
      body: badConfig,
      headers: { 'Content-Type': 'application/x-tar' },
    });
    assert.equal(noSocket.status, 400);
    assert.match(noSocket.json().message, /Interface.Socket must be a file name/);
    const garbage = await d.request('POST', '/plugins/create?name=bad', {
      body: Buffer.from('not a tar at all'),
      headers: { 'Content-Type': 'application/x-tar' },
    });
    assert.equal(garbage.status, 400);
    assert.equal((await d.request('POST', '/plugins/create', { body: onlyRootfs })).status, 400);
    assert.equal((await d.request('POST', '/plugins/create?name=UPPER', { body: onlyRootfs })).status, 400);
    await ok(['plugin', 'create', 'taken', join(dir, 'plugin')]);
    const taken = await d.docker(['plugin', 'create', 'taken', join(dir, 'plugin')]);
    assert.notEqual(taken.code, 0);
    assert.match(taken.stderr, /plugin "taken:latest" already exists/);
    await ok(['plugin', 'rm', 'taken']);
    // A plugin that cannot run: enable fails with the reason and leaves it disabled.
    await mkdir(join(dir, 'broken', 'rootfs'), { recursive: true });
    await writeFile(join(dir, 'broken', 'config.json'), JSON.stringify({ ...TEST_PLUGIN_CONFIG, Entrypoint: ['/nope'] }));
    await ok(['plugin', 'create', 'broken', join(dir, 'broken')]);
    const cannot = await d.docker(['plugin', 'enable', 'broken']);
    assert.notEqual(cannot.code, 0);
    assert.match(cannot.stderr, /plugin broken:latest failed to start: .*nope/);
    assert.equal((await inspect('broken')).Enabled, false);
    await ok(['plugin', 'rm', 'broken']);
    // config.json keys in any case, as Go reads them (plugin authors write "interface", "entrypoint"…);
    // inspect shows the canonical names.
    await mkdir(join(dir, 'lower', 'rootfs'), { recursive: true });
    const lowerConfig = {
      description: 'lower-case keys',
      interface: { socket: 'lower.sock', types: ['docker.volumedriver/1.0'] },
      entrypoint: ['/testvol'],
      network: { type: 'host' },
    };
    await writeFile(join(dir, 'lower', 'config.json'), JSON.stringify(lowerConfig));
    await ok(['plugin', 'create', 'lower', join(dir, 'lower')]);
    const lower = (await inspect('lower')).Config;
    assert.equal(lower.Description, 'lower-case keys');
    assert.deepEqual(lower.Interface.Socket, 'lower.sock');
    assert.deepEqual(lower.Entrypoint, ['/testvol']);
    assert.equal(lower.Network.Type, 'host');
    assert.equal('interface' in lower, false);
    await ok(['plugin', 'rm', 'lower']);
    assert.equal((await ok(['plugin', 'ls', '-q'])).trim(), '');
    assert.deepEqual(await readdir(join(d.dataRoot, 'plugins', 'tmp')), [], 'no temporary files are left');
  });

  test('privileges from the registry; a pull must accept exactly them', async () => {
    const priv = await d.request('GET', `/plugins/privileges?remote=${encodeURIComponent(remote)}`);
    assert.equal(priv.status, 200);
    assert.deepEqual(priv.json(), [{ Name: 'network', Description: 'permissions to access a network', Value: ['host'] }]);
    const refused = await d.request('POST', `/plugins/pull?remote=${encodeURIComponent(remote)}&name=${alias}`, { body: [] });
    assert.equal(refused.status, 400);
    assert.match(refused.json().message, /incorrect privileges/);
    const missing = await d.request('GET', `/plugins/privileges?remote=${encodeURIComponent(`${reg.host}/nothere:1`)}`);
    assert.ok(missing.status >= 400 && missing.status < 500, `status ${missing.status}`);
    assert.equal((await d.request('GET', '/plugins/privileges')).status, 400);
  });

  test('install from the registry (granted), enabled, listed and filtered', async () => {
    const out = await ok(['plugin', 'install', '--grant-all-permissions', '--alias', alias, remote]);
    assert.match(out, /^1\.0: Pulling from testvol$/m);
    assert.match(out, /^[0-9a-f]{12}: Download complete$/m);
    assert.match(out, /^Digest: sha256:[0-9a-f]{64}$/m);
    assert.match(out, new RegExp(`^Installed plugin ${reg.host}/testvol:1.0$`, 'm'));
    const p = await inspect(alias);
    assert.equal(p.Name, `${alias}:latest`);
    assert.equal(p.Enabled, true);
    assert.equal(p.PluginReference, `${reg.host}/testvol:1.0`);
    const ls = await ok(['plugin', 'ls', '--format', '{{.Name}} {{.Enabled}} {{.Description}}']);
    assert.equal(ls.trim(), `${alias}:latest true engine test volume driver`);
    assert.equal((await ok(['plugin', 'ls', '-q', '--filter', 'capability=volumedriver'])).trim(), p.Id.slice(0, 12));
    assert.equal((await ok(['plugin', 'ls', '-q', '--filter', 'capability=authz'])).trim(), p.Id.slice(0, 12));
    assert.equal((await ok(['plugin', 'ls', '-q', '--filter', 'capability=logdriver'])).trim(), p.Id.slice(0, 12));
    assert.equal((await ok(['plugin', 'ls', '-q', '--filter', 'capability=ipamdriver'])).trim(), '');
    assert.equal((await ok(['plugin', 'ls', '-q', '--filter', 'enabled=false'])).trim(), '');
    assert.equal((await d.request('GET', '/plugins?filters=' + encodeURIComponent('{"bogus":["x"]}'))).status, 400);
    // /info lists it among the volume and log drivers, as dockerd does.
    const plugins = (await d.request('GET', '/v1.51/info')).json().Plugins;
    assert.deepEqual(plugins.Volume, ['local', `${alias}:latest`]);
    assert.deepEqual(plugins.Log, [`${alias}:latest`, 'fluentd', 'gelf', 'journald', 'json-file', 'local', 'none', 'syslog'].sort());
    // Its socket sits in <exec-root>/plugins/<id>/, bound at /run/docker/plugins in the plugin.
    assert.ok(existsSync(join(d.execRoot, 'plugins', p.Id, 'testvol.sock')));
    const again = await d.docker(['plugin', 'enable', alias]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /already enabled/);
  });

  test('it serves as a log driver: lines reach it through a FIFO in its rootfs; docker logs reads the cache', async () => {
    const p = await inspect(alias);
    await ok(['run', '--name', 'mlog', '--log-driver', alias, 'busybox', 'sh', '-c', 'echo via-managed; echo oops >&2']);
    const logs = join(d.dataRoot, 'plugins', p.Id, 'rootfs', 'logs');
    const entries = await until('the plugin stored the lines', async () => {
      const all: StoredEntry[] = [];
      for (const f of await readdir(logs).catch(() => [] as string[])) all.push(...decodeFrames(await readFile(join(logs, f))));
      return all.length >= 2 ? all : undefined;
    });
    // Each stream in order; the two streams may interleave either way.
    assert.deepEqual(entries.map((e) => `${e.source}:${e.line}`).sort(), ['stderr:oops', 'stdout:via-managed']);
    // The FIFO was made under the plugin's rootfs (/run/engine/logging there) and is gone after StopLogging.
    assert.deepEqual(await readdir(join(d.dataRoot, 'plugins', p.Id, 'rootfs', 'run', 'engine', 'logging')), []);
    const r = await d.docker(['logs', 'mlog']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'via-managed\n', 'read from the dual-logging cache (the plugin cannot read)');
    assert.equal(r.stderr, 'oops\n');
    await ok(['rm', 'mlog']);
    // A running container logging through it holds it, as in dockerd.
    await ok(['run', '-d', '--name', 'mlog2', '--log-driver', alias, 'busybox', 'sleep', '60']);
    const busy = await d.docker(['plugin', 'disable', alias]);
    assert.notEqual(busy.code, 0);
    assert.match(busy.stderr, /is in use/);
    await ok(['rm', '-f', 'mlog2']);
  });

  test('the plugin serves volumes: created by it, mounted into a container, data in its rootfs', async () => {
    const p = await inspect(alias);
    await ok(['volume', 'create', '-d', alias, 'mpv1']);
    const v = JSON.parse(await ok(['volume', 'inspect', 'mpv1']))[0];
    assert.equal(v.Driver, alias);
    assert.equal(v.Mountpoint, join(d.dataRoot, 'plugins', p.Id, 'rootfs', 'data', 'mpv1'));
    const marker = await ok([
      'run',
      '--rm',
      '-v',
      'mpv1:/v',
      'busybox',
      'sh',
      '-c',
      'cat /v/made-by-testvol; echo hello > /v/from-container',
    ]);
    assert.equal(marker.trim(), 'mpv1');
    assert.equal(await readFile(join(v.Mountpoint, 'from-container'), 'utf8'), 'hello\n');
    assert.match(await ok(['volume', 'ls', '--filter', `driver=${alias}`]), /mpv1/);

    // A plugin with volumes is in use: disable and rm refuse without --force.
    const busy = await d.docker(['plugin', 'disable', alias]);
    assert.notEqual(busy.code, 0);
    assert.match(busy.stderr, /is in use/);
    await ok(['volume', 'rm', 'mpv1']);
    assert.ok(!existsSync(v.Mountpoint), 'the plugin removed the volume directory');
  });

  test('it serves as an authorization plugin too; disabled, it leaves the chain', async () => {
    const denied = async () => {
      const r = await d.docker(['volume', 'ls', '--filter', 'name=plugin-says-no']);
      return r.code !== 0 && /authorization denied by plugin testvol: testvol refuses plugin-says-no/.test(r.stderr) ? true : undefined;
    };
    const allowed = async () => ((await d.docker(['volume', 'ls', '--filter', 'name=plugin-says-no'])).code === 0 ? true : undefined);
    await writeFile(d.configFile, JSON.stringify({ 'authorization-plugins': [alias] }));
    process.kill(d.pid, 'SIGHUP');
    await until('the managed plugin denying', denied);
    await ok(['volume', 'ls']);
    await ok(['plugin', 'disable', alias]);
    await until('requests allowed with the plugin disabled', allowed);
    await ok(['plugin', 'enable', alias]);
    await until('the plugin denying again', denied);
    await writeFile(d.configFile, JSON.stringify({}));
    process.kill(d.pid, 'SIGHUP');
    await until('the plugin out of the chain after a reload', allowed);
  });

  test('disable, set what the config allows, enable with the new setting', async () => {
    const p = await inspect(alias);
    await ok(['plugin', 'disable', alias]);
    assert.equal((await inspect(alias)).Enabled, false);
    assert.ok(!existsSync(join(d.execRoot, 'plugins', p.Id)), 'the socket directory is gone');
    const vc = await d.docker(['volume', 'create', '-d', alias, 'nope']);
    assert.notEqual(vc.code, 0, 'a disabled plugin serves no volumes');

    const unknown = await d.docker(['plugin', 'set', alias, 'NOPE=1']);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /setting "NOPE" not found in the plugin configuration/);
    const badField = await d.docker(['plugin', 'set', alias, 'ROOT.source=/x']);
    assert.notEqual(badField.code, 0);
    assert.match(badField.stderr, /"ROOT.source" is not settable/);
    await ok(['plugin', 'set', alias, 'ROOT=/data2']);
    assert.deepEqual((await inspect(alias)).Settings.Env, ['ROOT=/data2']);

    await ok(['plugin', 'enable', '--timeout', '20', alias]);
    const noSet = await d.docker(['plugin', 'set', alias, 'ROOT=/data3']);
    assert.notEqual(noSet.code, 0);
    assert.match(noSet.stderr, /disable plugin before setting/);
    await ok(['volume', 'create', '-d', alias, 'mpv2']);
    assert.ok(existsSync(join(d.dataRoot, 'plugins', p.Id, 'rootfs', 'data2', 'mpv2', 'made-by-testvol')));
  });

  test('an enabled plugin comes back after a daemon restart and still serves its volumes', async () => {
    const before = await inspect(alias);
    await d.stop();
    await d.restart();
    const after = await inspect(alias);
    assert.equal(after.Id, before.Id);
    assert.equal(after.Enabled, true);
    assert.deepEqual(after.Settings.Env, ['ROOT=/data2']);
    const out = await ok(['run', '--rm', '-v', 'mpv2:/v', 'busybox', 'cat', '/v/made-by-testvol']);
    assert.equal(out.trim(), 'mpv2');
    // Through the API too: the list shape docker-py and dockerode read.
    const list = await httpOverUnix(d.socket, 'GET', '/v1.51/plugins');
    assert.equal(list.status, 200);
    assert.equal(JSON.parse(list.body.toString())[0].Name, `${alias}:latest`);
  });

  test('a plugin that dies is started again; after kill -9 of the daemon it keeps running and is adopted', async () => {
    const p = await inspect(alias);
    const first = await until('the plugin process', () => pluginPid(p.Id));
    process.kill(first, 'SIGKILL');
    const second = await until(
      'the plugin started again',
      async () => {
        const pid = await pluginPid(p.Id);
        return pid !== undefined && pid !== first ? pid : undefined;
      },
      30_000,
    );
    assert.match(d.output, /managed plugin testvol:latest exited with status 137; starting it again/);
    await until(
      'the plugin serving again',
      async () => ((await d.docker(['volume', 'inspect', 'mpv2'])).code === 0 ? true : undefined),
      30_000,
    );

    await d.kill9();
    await d.restart();
    assert.equal(await pluginPid(p.Id), second, 'the same plugin process serves the new daemon');
    assert.equal((await inspect(alias)).Enabled, true);
    const out = await ok(['run', '--rm', '-v', 'mpv2:/v', 'busybox', 'cat', '/v/made-by-testvol']);
    assert.equal(out.trim(), 'mpv2');
  });

  test('upgrade: refused while enabled; disabled, it takes the new rootfs and config and keeps its settings', async () => {
    const p = await inspect(alias);
    const v2 = `${reg.host}/testvol:2.0`;
    // The second version keeps its volumes in a PropagatedMount: on the host they are under the
    // plugin's propagated-mount directory, not in its rootfs.
    await buildTestVolumePlugin(join(dir, 'plugin2'), '2', {
      Description: 'engine test volume driver, second version',
      PropagatedMount: '/data2',
    });
    await ok(['plugin', 'create', v2, join(dir, 'plugin2')]);
    await ok(['plugin', 'push', v2]);
    await ok(['plugin', 'rm', v2]);

    const busy = await d.request('POST', `/plugins/${alias}/upgrade?remote=${encodeURIComponent(v2)}`, {
      body: [{ Name: 'network', Description: '', Value: ['host'] }],
    });
    assert.equal(busy.status, 409);
    assert.equal(busy.json().message, 'plugin must be disabled before upgrading');
    await ok(['volume', 'rm', 'mpv2']);
    await ok(['plugin', 'disable', alias]);
    const out = await ok(['plugin', 'upgrade', '--grant-all-permissions', '--skip-remote-check', alias, v2]);
    assert.match(out, new RegExp(`Upgraded plugin ${alias}:latest to ${v2}`));
    const up = await inspect(alias);
    assert.equal(up.Id, p.Id);
    assert.equal(up.Config.Description, 'engine test volume driver, second version');
    assert.equal(up.PluginReference, v2);
    assert.deepEqual(up.Settings.Env, ['ROOT=/data2']);
    assert.equal(await readFile(join(d.dataRoot, 'plugins', p.Id, 'rootfs', 'VERSION'), 'utf8'), '2\n');
    await ok(['plugin', 'enable', alias]);
    await ok(['volume', 'create', '-d', alias, 'mpv3']);
    const v = JSON.parse(await ok(['volume', 'inspect', 'mpv3']))[0];
    assert.equal(v.Mountpoint, join(d.dataRoot, 'plugins', p.Id, 'propagated-mount', 'mpv3'));
    assert.equal(
      (await ok(['run', '--rm', '-v', 'mpv3:/v', 'busybox', 'sh', '-c', 'cat /v/made-by-testvol; echo x > /v/from-container'])).trim(),
      'mpv3',
    );
    assert.equal(await readFile(join(v.Mountpoint, 'from-container'), 'utf8'), 'x\n');
    await ok(['volume', 'rm', 'mpv3']);
  });

  test('rm refuses an enabled plugin; rm -f stops and removes it', async () => {
    const p = await inspect(alias);
    const refused = await d.docker(['plugin', 'rm', alias]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /is enabled/);
    await ok(['plugin', 'rm', '-f', alias]);
    assert.equal((await ok(['plugin', 'ls', '-q'])).trim(), '');
    assert.ok(!existsSync(join(d.dataRoot, 'plugins', p.Id)));
    assert.ok(!existsSync(join(d.execRoot, 'plugins', p.Id)));
    const gone = await d.request('GET', `/plugins/${alias}/json`);
    assert.equal(gone.status, 404);
    assert.equal(gone.json().message, `plugin "${alias}" not found`);
    const events = await ok([
      'events',
      '--since',
      String(startedAt),
      '--until',
      String(Math.ceil(Date.now() / 1000)),
      '--filter',
      'type=plugin',
      '--filter',
      `plugin=${p.Id}`,
      '--format',
      '{{.Action}}',
    ]);
    assert.deepEqual(events.trim().split('\n'), [
      'pull',
      'enable',
      'disable',
      'enable',
      'disable',
      'enable',
      'disable',
      'pull',
      'enable',
      'remove',
    ]);
  });

  test('a registry that wants credentials: X-Registry-Auth from docker login carries push, privileges and install', async () => {
    const priv = `${authReg.host}/private:1`;
    await ok(['plugin', 'create', priv, join(dir, 'plugin')]);
    const anonymous = await d.docker(['plugin', 'push', priv]);
    assert.notEqual(anonymous.code, 0, 'push without credentials is refused');
    const login = await d.docker(['login', authReg.host, '-u', 'alice', '--password-stdin'], { input: 'wonderland' });
    assert.equal(login.code, 0, login.stderr);
    await ok(['plugin', 'push', priv]);
    await ok(['plugin', 'rm', priv]);
    const noAuth = await d.request('GET', `/plugins/privileges?remote=${encodeURIComponent(priv)}`);
    assert.ok(noAuth.status >= 400, `status ${noAuth.status}`);
    assert.match(noAuth.json().message, /no basic auth credentials/);
    await ok(['plugin', 'install', '--grant-all-permissions', '--disable', '--alias', 'private', priv]);
    const p = await inspect('private');
    assert.equal(p.Enabled, false);
    assert.equal(p.PluginReference, priv);
    await ok(['plugin', 'rm', 'private']);
    await ok(['logout', authReg.host]);
  });
});
