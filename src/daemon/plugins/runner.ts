// Runs a managed plugin as a container in the supervisor's plugins namespace, as dockerd does: the
// unpacked rootfs used in place (no snapshot), its socket directory `<exec-root>/plugins/<id>/`
// bound at /run/docker/plugins, the config's mounts, devices, capabilities and host namespaces,
// output appended to `<plugin dir>/plugin.log`. Enabling waits until the plugin's socket accepts
// connections; disabling sends SIGTERM, then SIGKILL after a grace period.
import { execFile } from 'node:child_process';
import { mkdir, rm, symlink } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EngineError } from '../../errors.ts';
import type { CgroupDriver } from '../../oci/cgroups.ts';
import { SPEC_TYPE_URL, type SupervisorClient } from '../../supervisor/client.ts';
import { grpcCode, GrpcStatus } from '../../supervisor/errors.ts';
import type { Logger } from '../../util/log.ts';
import { pluginSpec } from './plugin-spec.ts';
import type { PluginFiles, PluginRecord } from './store.ts';

const run = promisify(execFile);

export interface PluginRunnerDeps {
  /** The client in the plugins namespace. */
  client: SupervisorClient;
  files: PluginFiles;
  /** `<exec-root>/plugins`: one socket directory per plugin id. */
  socketsRoot: string;
  runcRoot: string;
  cgroupDriver: CgroupDriver;
  log: Pick<Logger, 'warn' | 'debug'>;
}

const notFound = (err: unknown) => grpcCode(err) === GrpcStatus.NOT_FOUND;

export class PluginRunner {
  constructor(private readonly d: PluginRunnerDeps) {}

  socketDir(id: string): string {
    return join(this.d.socketsRoot, id);
  }
  /**
   * The path the daemon connects to. A unix socket path holds at most 107 bytes; under a long
   * exec-root (test daemons) `<exec-root>/plugins/<64 hex>/<socket>` is longer, so the daemon goes
   * through a short symlink to the same directory, `<exec-root>/plugins/<12 hex>`.
   */
  socketPath(rec: PluginRecord): string {
    const full = join(this.socketDir(rec.Id), rec.Config.Interface.Socket);
    return Buffer.byteLength(full) <= 107 ? full : join(this.shortDir(rec.Id), rec.Config.Interface.Socket);
  }
  private shortDir(id: string): string {
    return join(this.d.socketsRoot, id.slice(0, 12));
  }

  /** Starts the plugin and waits (up to `timeoutSec`) for its socket to accept connections. */
  async start(rec: PluginRecord, timeoutSec: number): Promise<void> {
    const client = this.d.client;
    const id = rec.Id;
    await this.forget(id);
    await rm(this.socketDir(id), { recursive: true, force: true });
    await mkdir(this.socketDir(id), { recursive: true, mode: 0o700 });
    await rm(this.shortDir(id), { force: true });
    if (this.socketPath(rec).startsWith(this.shortDir(id) + '/')) await symlink(id, this.shortDir(id));
    if (rec.Config.PropagatedMount) await this.sharePropagatedMount(id);
    const spec = pluginSpec(rec, {
      socketDir: this.socketDir(id),
      rootfs: this.d.files.rootfs(id),
      propagatedMount: this.d.files.propagatedMount(id),
      cgroupDriver: this.d.cgroupDriver,
    });
    await client.containers.create({
      id,
      runtime: {
        name: 'io.containerd.runc.v2',
        options: client.runcOptions({ root: this.d.runcRoot, binary_name: 'runc', systemd_cgroup: this.d.cgroupDriver === 'systemd' }),
      },
      spec: { type_url: SPEC_TYPE_URL, value: Buffer.from(JSON.stringify(spec)) },
      labels: { 'engine.plugin.name': rec.Name },
    });
    try {
      const log = `file://${this.d.files.logFile(id)}`;
      await client.tasks.create({ container_id: id, rootfs: [], stdin: '', stdout: log, stderr: log, terminal: false });
      await client.tasks.start(id);
      await this.waitForSocket(rec, timeoutSec);
    } catch (err) {
      await this.stop(id, 2000);
      // The socket wait names the plugin already; runtime errors (runc's "exec: …") get its name here.
      const msg = (err as Error).message;
      throw msg.startsWith(`plugin ${rec.Name} `)
        ? err
        : new EngineError(err instanceof EngineError ? err.code : 'INTERNAL', `plugin ${rec.Name} failed to start: ${msg}`);
    }
  }

  private async waitForSocket(rec: PluginRecord, timeoutSec: number): Promise<void> {
    const path = this.socketPath(rec);
    const deadline = Date.now() + Math.max(1, timeoutSec) * 1000;
    let last = '';
    for (let delay = 50; ; delay = Math.min(delay * 2, 500)) {
      const ok = await new Promise<boolean>((resolve) => {
        const s = connect(path, () => {
          s.destroy();
          resolve(true);
        });
        s.on('error', (e) => {
          last = e.message;
          resolve(false);
        });
      });
      if (ok) return;
      const task = await this.d.client.tasks.get(rec.Id).catch(() => undefined); // No task yet (or containerd busy) means "still starting": keep waiting for the socket.
      if (task && task.status === 'STOPPED') {
        throw new EngineError(
          'INTERNAL',
          `plugin ${rec.Name} exited (status ${task.exit_status}) before it created its socket ${rec.Config.Interface.Socket}; see ${this.d.files.logFile(rec.Id)}`,
        );
      }
      if (Date.now() + delay > deadline)
        throw new EngineError(
          'INTERNAL',
          `plugin ${rec.Name} did not listen on its socket ${rec.Config.Interface.Socket} within ${timeoutSec}s: ${last}`,
        );
      await new Promise((r) => setTimeout(r, delay));
    }
  }

  /** Resolves with the exit status when the plugin's task exits; undefined when there is no exit to report (no task, containerd gone). */
  async waitExit(id: string): Promise<number | undefined> {
    return this.d.client.tasks.wait(id).then(
      (r) => r.exit_status,
      (err) => {
        if (!notFound(err)) this.d.log.debug('plugin task wait ended without an exit', { id, error: (err as Error).message });
        return undefined;
      },
    );
  }

  /** Whether the plugin's task is running (after a daemon restart with live-restore). */
  async running(id: string): Promise<boolean> {
    const t = await this.d.client.tasks.get(id).catch((err) => {
      if (!notFound(err)) this.d.log.debug('plugin task lookup failed', { id, error: (err as Error).message });
      return undefined;
    });
    return t?.status === 'RUNNING';
  }

  /** SIGTERM, SIGKILL after `graceMs`, then the task and container are deleted. */
  async stop(id: string, graceMs = 10_000): Promise<void> {
    const client = this.d.client;
    const exited = client.tasks.wait(id).then(
      () => true,
      () => true,
    );
    try {
      await client.tasks.kill(id, 15, { all: true });
      const done = await Promise.race([exited, new Promise<boolean>((r) => setTimeout(() => r(false), graceMs))]);
      if (!done) {
        this.d.log.warn('plugin did not stop after SIGTERM; killing it', { id });
        await client.tasks.kill(id, 9, { all: true });
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      }
    } catch (err) {
      if (!notFound(err)) this.d.log.debug('plugin stop: kill failed', { id, error: (err as Error).message });
    }
    await this.forget(id);
    await this.unsharePropagatedMount(id);
    await rm(this.socketDir(id), { recursive: true, force: true });
    await rm(this.shortDir(id), { force: true });
  }

  /** Deletes what containerd still holds for the plugin (a task and container left by an earlier run). */
  private async forget(id: string): Promise<void> {
    await this.d.client.tasks.delete(id).catch((err) => {
      if (!notFound(err)) this.d.log.debug('plugin task delete failed', { id, error: (err as Error).message });
    });
    await this.d.client.containers.delete(id).catch((err) => {
      if (!notFound(err)) this.d.log.debug('plugin container delete failed', { id, error: (err as Error).message });
    });
  }

  /** PropagatedMount: a host directory bound onto itself and made rshared, so the plugin's mounts show on the host. */
  private async sharePropagatedMount(id: string): Promise<void> {
    const dir = this.d.files.propagatedMount(id);
    await mkdir(dir, { recursive: true, mode: 0o755 });
    await this.unsharePropagatedMount(id);
    await run('mount', ['--bind', dir, dir]);
    await run('mount', ['--make-rshared', dir]);
  }

  private async unsharePropagatedMount(id: string): Promise<void> {
    const dir = this.d.files.propagatedMount(id);
    await run('umount', ['-R', dir]).catch(() => undefined); // Not mounted (the usual case): umount fails, which is what "nothing to undo" looks like.
  }
}
