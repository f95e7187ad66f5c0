// Issue 27: installing the daemon and the CLI. scripts/install.sh (what `scripts/setup.sh install`
// runs after the build) into scratch directories: units that `systemd-analyze verify` accepts, the
// installed daemon socket-activated by systemd-socket-activate (LISTEN_FDS, -H fd://) telling a fake
// NOTIFY_SOCKET READY=1/STOPPING=1 while the docker CLI and the installed `engine` run containers on
// it; the engine group made in a scratch root's /etc/group; uninstall leaving nothing. Then the
// Debian package of scripts/package.sh: its control fields, the same files as install.sh stages,
// apt's resolution of its dependencies on this host, and dpkg --root install and purge in a
// scratch root (maintainer scripts run chrootless, with DPKG_ROOT).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { REPO_ROOT, TestDaemon, run } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { NotifyReceiver } from '../helpers/notify-receiver.ts';

const INSTALL = join(REPO_ROOT, 'scripts/install.sh');
const PACKAGE = join(REPO_ROOT, 'scripts/package.sh');

/** Every path under `dir`, relative, sorted (directories end with '/'). */
async function tree(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const rel = join(e.parentPath, e.name).slice(dir.length + 1);
    out.push(e.isDirectory() ? rel + '/' : rel);
  }
  return out.sort();
}

/** A scratch root with a group database of its own (groupadd --prefix, dpkg's DPKG_ROOT). */
async function scratchRoot(prefix: string): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  await mkdir(join(root, 'etc'));
  await writeFile(join(root, 'etc/group'), 'root:x:0:\n');
  await writeFile(join(root, 'etc/gshadow'), 'root:*::\n');
  return root;
}

describe('install and uninstall (scripts/install.sh)', () => {
  test('units verify; the installed daemon is socket-activated and notifies; uninstall leaves nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'engine-inst-'));
    const [prefix, etc, units, varDir] = ['p', 'etc', 'units', 'var'].map((n) => join(dir, n)) as [string, string, string, string];
    const opts = ['--prefix', prefix, '--sysconfdir', etc, '--unitdir', units, '--localstatedir', varDir, '--no-group'];
    const rx = NotifyReceiver.open(join(dir, 'notify.sock'));
    let d: TestDaemon | undefined;
    try {
      const inst = await run('bash', [INSTALL, 'install', ...opts], { cwd: REPO_ROOT });
      assert.equal(inst.code, 0, inst.stderr);
      assert.equal(await readlink(join(prefix, 'bin/engined')), '../lib/engine/bin/engined');
      assert.equal(await readlink(join(prefix, 'bin/engine')), '../lib/engine/bin/engine');
      assert.equal(await readFile(join(etc, 'engine/daemon.json'), 'utf8'), '{}\n');
      const service = await readFile(join(units, 'engine.service'), 'utf8');
      assert.match(service, /^Type=notify$/m);
      assert.match(service, new RegExp(`^ExecStart=${prefix}/bin/engined -H fd:// --config-file ${etc}/engine/daemon.json$`, 'm'));
      assert.match(service, /^Requires=engine\.socket$/m);
      const socketUnit = await readFile(join(units, 'engine.socket'), 'utf8');
      assert.match(socketUnit, /^ListenStream=\/run\/engine\.sock$/m);
      assert.match(socketUnit, /^SocketGroup=engine$/m);

      // systemd-analyze verify runs without a running systemd (a manager of its own in test mode);
      // it checks keys, sections and that ExecStart's program exists.
      const verify = await run('systemd-analyze', ['verify', join(units, 'engine.service'), join(units, 'engine.socket')]);
      assert.equal(verify.code, 0, verify.stderr);
      assert.equal(verify.stderr.trim(), '');
      await writeFile(join(dir, 'broken.service'), '[Service]\nType=notify\nExecStart=engined -H fd://\nStartLimitBurst=3\n');
      const broken = await run('systemd-analyze', ['verify', join(dir, 'broken.service')]);
      assert.notEqual(broken.code, 0, 'verify refuses a relative ExecStart');
      await rm(join(dir, 'broken.service'));

      // engine.socket's part played by systemd-socket-activate: it listens, and on the first
      // connection execs the installed daemon with the socket at fd 3 (LISTEN_FDS=1, LISTEN_PID).
      d = new TestDaemon(join(dir, 'd'), { noDefaultHost: true, args: ['-H', 'fd://', '--config-file', join(etc, 'engine/daemon.json')] });
      await mkdir(d.dir);
      const child = spawn(
        'systemd-socket-activate',
        ['-l', d.socket, '-E', `NOTIFY_SOCKET=${rx.address}`, join(prefix, 'bin/engined'), ...d.baseArgs()],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      d.child = child;
      child.stdout!.on('data', (x) => (d!.output += x));
      child.stderr!.on('data', (x) => (d!.output += x));
      d.exited = new Promise((res) => child.on('exit', (code) => res((d!.exitCode = code))));
      await d.waitForOutput(/Listening on .*engine\.sock as 3/);
      assert.equal(rx.drain().length, 0, 'nothing runs before the first connection');
      await d.waitReady(); // its first /_ping starts the daemon
      assert.match(d.output, /Execing .*\/p\/bin\/engined \(.* -H fd:\/\/ /);
      assert.match(d.output, /msg="API listen on fd:\/\/3"/);
      assert.doesNotMatch(d.output, /group engine not found/, 'the socket is systemd’s: no group change');
      const ready = await rx.waitFor(/^READY=1$/m);
      assert.match(rx.messages[ready]!, new RegExp(`^MAINPID=${child.pid}$`, 'm'), 'execed in place: the activator’s pid');

      await loadBusybox(d);
      const r = await d.docker(['run', '--rm', 'busybox', 'echo', 'hi from an activated socket']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'hi from an activated socket\n');
      const home = join(dir, 'home');
      const cli = await run(join(prefix, 'bin/engine'), ['run', '--rm', 'busybox', 'echo', 'hi from the installed CLI'], {
        env: { ...process.env, HOME: home, ENGINE_HOST: d.host },
      });
      assert.equal(cli.code, 0, cli.stderr);
      assert.equal(cli.stdout, 'hi from the installed CLI\n');

      const beforeStop = rx.drain().length;
      assert.equal(await d.stop(), 0);
      await rx.waitFor(/^STOPPING=1$/m, beforeStop, 1000);
      await d.cleanup();
      d = undefined;
      await rm(home, { recursive: true, force: true });
      assert.ok(existsSync(join(varDir, 'cache/engine/compile-cache')), 'the installed daemon keeps its code cache under localstatedir');

      const un = await run('bash', [INSTALL, 'uninstall', ...opts], { cwd: REPO_ROOT });
      assert.equal(un.code, 0, un.stderr);
      rx.close();
      await rm(rx.address);
      // Node made var/ and var/cache/ for its cache; install made nothing else that is left.
      assert.deepEqual(await tree(dir), ['var/', 'var/cache/']);
    } finally {
      rx.close();
      await d?.cleanup();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('the engine group is made (and only then removed again); an edited daemon.json is kept', async () => {
    const root = await scratchRoot('engine-root-');
    try {
      const inst = await run('bash', [INSTALL, 'install', '--destdir', root], { cwd: REPO_ROOT });
      assert.equal(inst.code, 0, inst.stderr);
      assert.match(inst.stdout, /created the system group engine/);
      assert.match(await readFile(join(root, 'etc/group'), 'utf8'), /^engine:x:[0-9]+:$/m);
      assert.match(
        await readFile(join(root, 'etc/systemd/system/engine.service'), 'utf8'),
        /^ExecStart=\/usr\/local\/bin\/engined -H fd:\/\/$/m,
      );
      assert.ok(existsSync(join(root, 'usr/local/lib/engine/dist/bundle/engined.js')));
      assert.ok(existsSync(join(root, 'usr/local/lib/engine/node_modules/etcd3/package.json')));
      // A second install keeps the group (and what the first one recorded) and the configuration.
      await writeFile(join(root, 'etc/engine/daemon.json'), '{"debug": true}\n');
      const again = await run('bash', [INSTALL, 'install', '--destdir', root], { cwd: REPO_ROOT });
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /group engine exists/);
      assert.match(again.stdout, /daemon\.json exists: kept/);

      // Through scripts/setup.sh, which hands uninstall over before installing or building anything.
      const un = await run('bash', [join(REPO_ROOT, 'scripts/setup.sh'), 'uninstall', '--destdir', root], { cwd: REPO_ROOT });
      assert.equal(un.code, 0, un.stderr);
      assert.match(un.stdout, /daemon\.json was changed: kept/);
      assert.match(un.stdout, /removed the group engine/);
      assert.equal(await readFile(join(root, 'etc/group'), 'utf8'), 'root:x:0:\n');
      // groupadd/groupdel leave their backups (group-, gshadow-) as on any system.
      assert.deepEqual(await tree(root), [
        'etc/',
        'etc/engine/',
        'etc/engine/daemon.json',
        'etc/group',
        'etc/group-',
        'etc/gshadow',
        'etc/gshadow-',
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('the Debian package (scripts/package.sh)', () => {
  test('fields, the files install.sh stages, apt resolves it here, dpkg --root install and purge', async () => {
    const out = await mkdtemp(join(tmpdir(), 'engine-deb-'));
    const staged = await mkdtemp(join(tmpdir(), 'engine-staged-'));
    const root = await scratchRoot('engine-dpkg-');
    try {
      const pkg = await run('bash', [PACKAGE, out], {
        cwd: REPO_ROOT,
        env: { ...process.env, ENGINE_DEB_COMPRESSION: 'gzip' },
        timeoutMs: 300_000,
      });
      assert.equal(pkg.code, 0, pkg.stderr);
      const deb = pkg.stdout.trim();
      assert.match(deb, /\/engine_[0-9.]+_amd64\.deb$/);
      const field = async (f: string) => (await run('dpkg-deb', ['-f', deb, f])).stdout.trim();
      assert.equal(await field('Package'), 'engine');
      assert.equal(await field('Architecture'), 'amd64');
      const depends = (await field('Depends')).split(/,\s*/).map((x) => x.split(' ')[0]!);
      for (const p of ['containerd', 'runc', 'iptables', 'iproute2', 'tini']) assert.ok(depends.includes(p), `Depends names ${p}`);
      // Each dependency is one the daemon needs: all of them are in setup.sh's DEB_RUNTIME (or the base system).
      const setup = await readFile(join(REPO_ROOT, 'scripts/setup.sh'), 'utf8');
      const runtime = setup.match(/^DEB_RUNTIME=\(([^)]*)\)/m)![1]!.split(/\s+/);
      for (const p of depends) assert.ok(runtime.includes(p) || ['passwd', 'libc6', 'libstdc++6'].includes(p), `${p} is in DEB_RUNTIME`);

      const files = (await run('sh', ['-c', `dpkg-deb --fsys-tarfile '${deb}' | tar t`])).stdout
        .trim()
        .split('\n')
        .map((f) => f.replace(/^\.\//, ''))
        .filter((f) => f !== '' && !f.startsWith('usr/share/doc/'))
        .sort();
      const st = await run(
        'bash',
        [INSTALL, 'install', '--prefix', '/usr', '--unitdir', '/lib/systemd/system', '--destdir', staged, '--no-group'],
        { cwd: REPO_ROOT },
      );
      assert.equal(st.code, 0, st.stderr);
      const stagedFiles = (await tree(staged)).filter((f) => f !== 'usr/lib/engine/install-state' && f !== 'usr/share/');
      assert.deepEqual(
        files.filter((f) => f !== 'usr/share/'),
        stagedFiles,
        'the package holds what setup.sh install installs',
      );
      const conffiles = (await run('sh', ['-c', `dpkg-deb --ctrl-tarfile '${deb}' | tar xO ./conffiles`])).stdout;
      assert.equal(conffiles, '/etc/engine/daemon.json\n');

      // apt on this host: every dependency resolves (it would install the missing ones on a fresh one).
      const apt = await run('apt-get', ['install', '-s', '-o', 'Debug::NoLocking=1', deb], { timeoutMs: 120_000 });
      assert.equal(apt.code, 0, apt.stdout + apt.stderr);
      assert.match(apt.stdout, /^Inst engine /m);

      // dpkg into a scratch root: its own database, maintainer scripts run with DPKG_ROOT.
      await mkdir(join(root, 'var/lib/dpkg/info'), { recursive: true });
      await mkdir(join(root, 'var/lib/dpkg/updates'));
      await writeFile(join(root, 'var/lib/dpkg/status'), '');
      const dpkg = (args: string[]) => run('dpkg', [`--root=${root}`, '--force-script-chrootless', '--force-depends', ...args]);
      const i = await dpkg(['-i', deb]);
      assert.equal(i.code, 0, i.stderr);
      assert.match((await run('dpkg', [`--root=${root}`, '-s', 'engine'])).stdout, /^Status: install ok installed$/m);
      assert.match(await readFile(join(root, 'etc/group'), 'utf8'), /^engine:x:[0-9]+:$/m, 'postinst made the group');
      // postinst drops the unpacked CLI from the page cache (scripts/page-cache.mjs): its runs map less of it.
      const cached = await run('fincore', ['--bytes', '--noheadings', '--output', 'RES', join(root, 'usr/lib/engine/bin/engine')]);
      assert.equal(cached.stdout.trim(), '0', cached.stderr);
      for (const f of [
        'usr/bin/engined',
        'usr/bin/engine',
        'lib/systemd/system/engine.service',
        'lib/systemd/system/engine.socket',
        'etc/engine/daemon.json',
      ])
        assert.ok(existsSync(join(root, f)), f);
      assert.doesNotMatch((await tree(root)).join('\n'), /\.wants\//, 'nothing is enabled');
      // Not the host's /var/cache/engine, where the installed wrapper keeps the daemon's code cache.
      const cacheEnv = { ...process.env, NODE_COMPILE_CACHE: join(root, 'cache'), HOME: join(root, 'home') };
      const version = await run(join(root, 'usr/bin/engined'), ['--version'], { env: cacheEnv });
      assert.match(version.stdout, /^Engine version [0-9.]+, build [0-9a-f]+/);
      const cliVersion = await run(join(root, 'usr/bin/engine'), ['--version'], { env: cacheEnv });
      assert.equal(cliVersion.code, 0, cliVersion.stderr);
      assert.match(cliVersion.stdout, /[0-9]+\.[0-9]+\.[0-9]+/);
      for (const d of ['home', 'cache']) await rm(join(root, d), { recursive: true, force: true });

      const purge = await dpkg(['--purge', 'engine']);
      assert.equal(purge.code, 0, purge.stderr);
      const left = (await tree(root)).filter((f) => f === 'var/lib/dpkg/' || !f.startsWith('var/lib/dpkg/'));
      assert.deepEqual(left, ['etc/', 'etc/group', 'etc/group-', 'etc/gshadow', 'etc/gshadow-', 'var/', 'var/lib/', 'var/lib/dpkg/']);
    } finally {
      for (const d of [out, staged, root]) await rm(d, { recursive: true, force: true });
    }
  });
});
