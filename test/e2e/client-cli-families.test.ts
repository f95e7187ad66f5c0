// The `engine` CLI's container and image extras and its plugin family against a real daemon, side
// by side with the docker CLI 28 where the output is cheap to compare: commit (the new image's ID,
// --change and --message applied), diff (same lines as docker diff), export (to a pipe and -o;
// refused on a terminal), import (a file and stdin, with a tag), update (names, then the changes in
// inspect; no flag is docker's error), search's usage error; plugin create from a local directory
// (config.json + rootfs), ls (same table and JSON as docker), enable, set (refused while enabled),
// disable, set, inspect, rm.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTestVolumePlugin, canBuildStatic } from '../fixtures/volume-plugin-c.ts';
import { REPO_ROOT, run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { startRegistry, type TestRegistry } from '../helpers/registry.ts';

/** docker's relative times (go-units HumanDuration), which the two CLIs print a moment apart. */
const AGO = /(\d+ \w+|Less than a second|About an? \w+) ago/g;

const ENGINE = join(REPO_ROOT, 'bin/engine');
const noGcc = !(await canBuildStatic()) && 'gcc is not installed: the test plugin cannot be built (scripts/setup.sh installs it)';

describe('engine CLI: commit, diff, export, import, update, plugin', () => {
  let d: TestDaemon;
  let work: string;
  let env: NodeJS.ProcessEnv;
  let reg: TestRegistry | undefined;
  const engine = (args: string[], opts: { input?: string | Buffer } = {}) =>
    run(ENGINE, args, { env, input: opts.input, timeoutMs: 120_000 });
  const ok = async (args: string[], opts: { input?: string | Buffer } = {}) => {
    const r = await engine(args, opts);
    assert.equal(r.code, 0, `engine ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'engine-cli-families-'));
    d = await startDaemon();
    await loadBusybox(d);
    env = { PATH: process.env.PATH, HOME: work, ENGINE_HOST: d.host, ENGINE_CONFIG: join(work, 'config') };
  });
  after(async () => {
    await d?.cleanup();
    await reg?.cleanup();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('commit and diff: the image ID, --change/--message applied; diff lines as docker diff', async () => {
    await ok(['run', '--name', 'src', 'busybox', 'sh', '-c', 'echo hi > /tmp/x; mkdir /newdir; rm /bin/true']);
    const diff = await ok(['diff', 'src']);
    assert.equal(diff, (await d.docker(['diff', 'src'])).stdout);
    assert.match(diff, /^A \/newdir$/m);
    assert.match(diff, /^A \/tmp\/x$/m);
    assert.match(diff, /^D \/bin\/true$/m);
    assert.equal(await ok(['container', 'diff', 'src']), diff);
    const id = (await ok(['commit', '-m', 'from the cli', '-c', 'ENV FROM_CLI=1', '-a', 'me', 'src', 'committed:v1'])).trim();
    assert.match(id, /^sha256:[0-9a-f]{64}$/);
    assert.equal(
      (await ok(['inspect', '-f', '{{.Id}} {{.Comment}} {{.Author}} {{index .Config.Env 1}}', 'committed:v1'])).trim(),
      `${id} from the cli me FROM_CLI=1`,
    );
    assert.equal((await ok(['run', '--rm', 'committed:v1', 'cat', '/tmp/x'])).trim(), 'hi');
    const missing = await engine(['commit', 'no-such-container']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^Error response from daemon: No such container: no-such-container/);
  });

  test('export to a pipe and to -o, import from a file and from stdin', async () => {
    const r = await run(ENGINE, ['export', 'src'], { env, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.length > 1_000_000, `export wrote ${r.stdout.length} bytes`);
    const tar = join(work, 'src.tar');
    await ok(['export', '-o', tar, 'src']);
    assert.equal((await stat(tar)).mode & 0o777, 0o600);
    const imported = (await ok(['import', '-m', 'imported', '-c', 'CMD ["cat", "/tmp/x"]', tar, 'imported:file'])).trim();
    assert.match(imported, /^sha256:[0-9a-f]{64}$/);
    assert.equal((await ok(['run', '--rm', 'imported:file'])).trim(), 'hi');
    assert.equal((await ok(['inspect', '-f', '{{.Comment}}', 'imported:file'])).trim(), 'imported');
    const fromStdin = (await ok(['image', 'import', '-', 'imported:stdin'], { input: await readFile(tar) })).trim();
    assert.match(fromStdin, /^sha256:[0-9a-f]{64}$/);
    assert.equal((await ok(['run', '--rm', 'imported:stdin', 'cat', '/tmp/x'])).trim(), 'hi');
    const notThere = await engine(['import', join(work, 'none.tar')]);
    assert.equal(notThere.code, 1);
    assert.match(notThere.stderr, /no such file or directory/);
  });

  test('update: names printed, the new limits and restart policy in inspect; no flag is an error', async () => {
    await ok(['run', '-d', '--name', 'upd', 'busybox', 'sleep', '300']);
    assert.equal(await ok(['update', '--memory', '64m', '--cpu-shares', '512', '--restart', 'on-failure:3', 'upd']), 'upd\n');
    assert.equal(
      (
        await ok([
          'inspect',
          '-f',
          '{{.HostConfig.Memory}} {{.HostConfig.CpuShares}} {{.HostConfig.RestartPolicy.Name}}:{{.HostConfig.RestartPolicy.MaximumRetryCount}}',
          'upd',
        ])
      ).trim(),
      '67108864 512 on-failure:3',
    );
    assert.equal(await ok(['container', 'update', '--pids-limit', '50', 'upd']), 'upd\n');
    assert.equal((await ok(['inspect', '-f', '{{.HostConfig.PidsLimit}}', 'upd'])).trim(), '50');
    const none = await engine(['update', 'upd']);
    const docker = await d.docker(['update', 'upd']);
    assert.deepEqual([none.code, none.stderr], [docker.code, docker.stderr]);
    const partly = await engine(['update', '--memory', '32m', 'upd', 'no-such-container']);
    assert.equal(partly.code, 1);
    assert.equal(partly.stdout, 'upd\n');
    assert.match(partly.stderr, /No such container: no-such-container/);
    await ok(['rm', '-f', 'upd']);
  });

  test('help of the new families and a usage error of search', async () => {
    const help = await ok(['service', '--help']);
    assert.match(help, /^Usage: {2}engine service COMMAND\n\nManage Swarm services\n/);
    assert.match(help, /^ {2}rollback {4}Revert changes to a service's configuration$/m);
    assert.match(await ok(['commit', '--help']), /-c, --change list +Apply Dockerfile instruction to the created image/);
    const search = await engine(['search']);
    assert.equal(search.code, 1);
    assert.match(search.stderr, /^engine: 'engine search' requires 1 argument\n\nUsage: {2}engine search \[OPTIONS\] TERM\n/);
  });

  test('plugin create, ls, enable, set, disable, inspect, rm', { skip: noGcc }, async () => {
    const dir = join(work, 'plugin');
    await buildTestVolumePlugin(dir);
    assert.equal(await ok(['plugin', 'create', 'clivol', dir]), 'clivol\n');
    const table = await ok(['plugin', 'ls']);
    assert.equal(table, (await d.docker(['plugin', 'ls'])).stdout);
    assert.match(table, /^ID +NAME +DESCRIPTION +ENABLED\n[0-9a-f]{12} +clivol:latest +.* +false\n$/);
    assert.equal(await ok(['plugin', 'ls', '--format', 'json']), (await d.docker(['plugin', 'ls', '--format', 'json'])).stdout);
    assert.equal(await ok(['plugin', 'enable', 'clivol']), 'clivol\n');
    assert.equal((await ok(['plugin', 'ls', '--format', '{{.Name}} {{.Enabled}}'])).trim(), 'clivol:latest true');
    const busy = await engine(['plugin', 'set', 'clivol', 'ROOT=/other']);
    assert.equal(busy.code, 1);
    assert.match(busy.stderr, /^Error response from daemon: cannot set on an active plugin/);
    assert.equal(await ok(['plugin', 'disable', 'clivol']), 'clivol\n');
    assert.equal(await ok(['plugin', 'set', 'clivol', 'ROOT=/other']), '');
    assert.match(await ok(['plugin', 'inspect', '-f', '{{json .Settings.Env}}', 'clivol']), /"ROOT=\/other"/);
    const both = await engine(['plugin', 'rm', 'clivol', 'no-such-plugin']);
    assert.equal(both.code, 1);
    assert.equal(both.stdout, 'clivol\n');
    assert.match(both.stderr, /^Error response from daemon: plugin "no-such-plugin" not found/);
    assert.equal(await ok(['plugin', 'ls', '-q']), '');
  });

  test('plugin push to a registry, install (privileges prompt, --alias), upgrade', { skip: noGcc }, async () => {
    reg = await startRegistry();
    const remote = `${reg.host}/clivol:1.0`;
    await ok(['plugin', 'create', remote, join(work, 'plugin')]);
    const pushed = await ok(['plugin', 'push', remote]);
    assert.match(pushed, /^1\.0: digest: sha256:[0-9a-f]{64} size: \d+$/m);
    await ok(['plugin', 'rm', remote]);
    // Declined at the prompt: nothing installed.
    const declined = await engine(['plugin', 'install', '--alias', 'vol', remote], { input: 'n\n' });
    assert.equal(declined.code, 1);
    assert.match(
      declined.stdout,
      new RegExp(
        `^Plugin "${reg.host}/clivol:1.0" is requesting the following privileges:\n - network: \\[host\\]\nDo you grant the above permissions\\? \\[y/N\\] $`,
      ),
    );
    assert.equal(await ok(['plugin', 'ls', '-q']), '');
    const installed = await ok(['plugin', 'install', '--alias', 'vol', remote], { input: 'y\n' });
    assert.match(installed, new RegExp(`\nInstalled plugin ${reg.host}/clivol:1.0\n$`));
    assert.equal(
      (await ok(['plugin', 'ls', '--format', '{{.Name}} {{.Enabled}} {{.PluginReference}}'])).trim(),
      `vol:latest true ${remote}`,
    );
    const enabled = await engine(['plugin', 'upgrade', 'vol']);
    assert.deepEqual([enabled.code, enabled.stderr], [1, 'the plugin must be disabled before upgrading\n']);
    await ok(['plugin', 'disable', 'vol']);
    const up = await ok(['plugin', 'upgrade', '--grant-all-permissions', 'vol', remote]);
    assert.match(up, new RegExp(`^Upgrading plugin vol:latest from ${reg.host}/clivol:1.0 to ${reg.host}/clivol:1.0\n`));
    assert.match(up, new RegExp(`Upgraded plugin vol to ${reg.host}/clivol:1.0\n$`));
    await ok(['plugin', 'rm', 'vol']);
  });

  test('prune prompts as docker (declined: nothing removed, exit 0); system df -v as docker', async () => {
    await ok(['create', '--name', 'stopped', 'busybox', 'true']);
    const declined = await engine(['container', 'prune'], { input: 'n\n' });
    assert.deepEqual(declined, {
      code: 0,
      stdout: 'WARNING! This will remove all stopped containers.\nAre you sure you want to continue? [y/N] ',
      stderr: '',
    });
    assert.match(await ok(['ps', '-aq', '--filter', 'name=stopped']), /^[0-9a-f]{12}\n$/);
    const df = await ok(['system', 'df', '-v']);
    assert.equal(
      df.replace(AGO, 'AGO').replace(/ +/g, ' '),
      (await d.docker(['system', 'df', '-v'])).stdout.replace(AGO, 'AGO').replace(/ +/g, ' '),
    );
    assert.match(df, /^Images space usage:\n\nREPOSITORY +TAG +IMAGE ID +CREATED +SIZE +SHARED SIZE +UNIQUE SIZE +CONTAINERS\n/);
    assert.match(df, /\nBuild cache usage: \S+\n\nCACHE ID +CACHE TYPE +SIZE +CREATED +LAST USED +USAGE +SHARED\n/);
    const pruned = await ok(['container', 'prune', '-f']);
    assert.match(pruned, /^Deleted Containers:\n[0-9a-f]{64}\n/m);
    assert.match(pruned, /\nTotal reclaimed space: \S+\n$/);
    assert.equal(await ok(['ps', '-aq', '--filter', 'name=stopped']), '');
    const net = await ok(['network', 'prune'], { input: 'y\n' });
    assert.match(
      net,
      /^WARNING! This will remove all custom networks not used by at least one container\.\nAre you sure you want to continue\? \[y\/N\] /,
    );
  });
});
