// A rootless engined for the e2e tests: a test user (created with its subordinate ranges when
// missing, removed after), a scratch home it owns, /dev/net/tun opened up to 0666 when it is not
// (slirp4netns opens it as the user; set back after), and bin/engined started as that user from a
// login shell, which hands over to bin/engined-rootless (rootlesskit). Busybox goes straight into
// the daemon's containerd (no registry). rootless.test.ts and storage-fuse-rootless.test.ts use it.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { chmod, chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SupervisorClient } from '../../src/supervisor/client.ts';
import { ensureBusyboxImage } from '../fixtures/busybox-image.ts';
import { ENGINED, httpOverUnix, run } from './daemon.ts';
import { until } from './until.ts';

export function idOf(name: string): number | undefined {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  return line ? Number(line.split(':')[2]) : undefined;
}

/** A word for the login shell's command line, passed on unchanged. */
export const shellWord = (w: string) => `'${w.replaceAll("'", `'\\''`)}'`;

export class RootlessDaemon {
  dir = '';
  uid = -1;
  /** The daemon's stdout and stderr so far. */
  output = '';
  private createdUser = false;
  private tunMode: number | undefined;
  private child: ChildProcess | undefined;

  constructor(
    readonly user: string,
    private readonly dirPrefix: string,
  ) {}

  get socket(): string {
    return join(this.dir, 'run', 'engine.sock');
  }

  /** The XDG directories the daemon's data, socket and configuration go under. */
  xdg(): Record<string, string> {
    return { XDG_RUNTIME_DIR: join(this.dir, 'run'), XDG_DATA_HOME: join(this.dir, 'data'), XDG_CONFIG_HOME: join(this.dir, 'config') };
  }

  /** A command as the user, with the docker CLI pointed at the daemon. */
  asUser(cmd: string[], timeoutMs = 120_000) {
    const env = [`HOME=${this.dir}`, `DOCKER_HOST=unix://${this.socket}`, `DOCKER_CONFIG=${join(this.dir, 'docker-config')}`];
    return run('runuser', ['-u', this.user, '--', 'env', ...env, ...cmd], { timeoutMs });
  }

  /** The user, /dev/net/tun and the scratch home; nothing started yet. */
  async prepare(): Promise<void> {
    if (idOf(this.user) === undefined) {
      // A regular account: useradd gives it subordinate ranges from /etc/login.defs.
      const r = await run('useradd', ['--no-create-home', '--shell', '/bin/sh', this.user]);
      assert.equal(r.code, 0, r.stderr);
      this.createdUser = true;
    }
    this.uid = idOf(this.user)!;
    const tun = statSync('/dev/net/tun').mode & 0o777;
    if (tun !== 0o666) {
      this.tunMode = tun;
      await chmod('/dev/net/tun', 0o666);
    }
    this.dir = await mkdtemp(join(tmpdir(), this.dirPrefix));
    await chmod(this.dir, 0o755);
    await chown(this.dir, this.uid, this.uid);
  }

  /** bin/engined as the user from a login shell, with `args`; waits for /_ping and loads busybox. */
  async start(args: string[] = [], image: Parameters<typeof ensureBusyboxImage>[1] = {}): Promise<void> {
    const exports = Object.entries({ HOME: this.dir, ...this.xdg() }).map(([k, v]) => `${k}=${shellWord(v)}`);
    const command = [ENGINED, ...args].map(shellWord).join(' ');
    const child = spawn('runuser', ['-l', this.user, '-c', `cd ${shellWord(this.dir)} && export ${exports.join(' ')} && exec ${command}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout!.on('data', (d) => (this.output += d));
    child.stderr!.on('data', (d) => (this.output += d));
    const ready = await until(
      'the rootless daemon to answer',
      async () => {
        if (child.exitCode !== null) return 'exited';
        return (await httpOverUnix(this.socket, 'GET', '/_ping', { timeoutMs: 2000 })).status === 200 ? 'ready' : undefined;
      },
      90_000,
      200,
    ).catch((err: Error) => err.message);
    assert.equal(ready, 'ready', `rootless daemon: ${ready}:\n${this.output}`);
    const client = new SupervisorClient(join(this.dir, 'run', 'engine', 'containerd', 'containerd.sock'), { namespace: 'engine' });
    try {
      await ensureBusyboxImage(client, image);
    } finally {
      client.close();
    }
  }

  /** Stops the daemon (SIGTERM, SIGKILL after 30 s) and restores what prepare() changed. */
  async cleanup(): Promise<void> {
    const pid = this.dir ? Number(await readFile(join(this.dir, 'run', 'engine.pid'), 'utf8').catch(() => '0')) : 0;
    if (pid > 0) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    const child = this.child;
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
    if (this.tunMode !== undefined) await chmod('/dev/net/tun', this.tunMode);
    if (this.createdUser) {
      const r = await run('userdel', [this.user]);
      if (r.code !== 0) console.error(`userdel ${this.user}: ${r.stderr}`);
    }
  }
}
