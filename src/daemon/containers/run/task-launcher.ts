// Running a container's process in containerd: creates the containerd container and its task with
// FIFO stdio, and re-attaches to tasks that survived a daemon restart (live-restore); applies
// `docker update`'s resources to a running task. Its parts: the spec (run-spec.ts), the host side
// (run-host.ts), the exit wait (exit-watch.ts), the cleanup after a run (task-reaper.ts). It
// checks nothing itself: requests are verified before they get here (verify.ts).
import { existsSync } from 'node:fs';
import { chown, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { DaemonConfig } from '../../../config/daemon-config.ts';
import { internal, invalidParameter, isNotFound } from '../../../errors.ts';
import type { CdiInjection } from '../../../oci/cdi.ts';
import type { CgroupDriver } from '../../../oci/cgroups.ts';
import { serializeSpec } from '../../../oci/spec-types.ts';
import { usesRemap, type IdentityMap } from '../../../oci/userns.ts';
import { PROCESS_TYPE_URL, SPEC_TYPE_URL, jsonAny, type SupervisorClient } from '../../../supervisor/client.ts';
import type { HostConfig } from '../../../types/container-api.ts';
import type { Logger } from '../../../util/log.ts';
import type { RuntimeRegistry } from '../../runtimes.ts';
import { nowIso } from '../../../util/time.ts';
import { etcFilePaths } from '../../../network/sandbox/etc-files.ts';
import { taskRootfs } from '../fs/fuse-rootfs.ts';
import { sysfsPath } from '../fs/netns-sysfs.ts';
import { ensureWritableLayer } from '../fs/writable-layer.ts';
import { makeFifos, openFifoWriter, openOutputFifo, type StdioPaths } from '../io/fifo.ts';
import type { RunNetworking } from '../../../network/container-contract.ts';
import type { OutputHub } from '../io/output-hub.ts';
import type { ContainerVolumes } from '../../volumes/contract.ts';
import type { ContainerRecord } from '../record.ts';
import type { RootfsManager } from '../fs/rootfs.ts';
import { ExitWatcher } from './exit-watch.ts';
import { RunHostSide } from './run-host.ts';
import { RunSpecs, type StartSpecParts } from './run-spec.ts';
import { runningTask, type RunningTask } from './running-task.ts';
import { TaskReaper } from './task-reaper.ts';

export interface LauncherDeps {
  client: SupervisorClient;
  rootfs: RootfsManager;
  runtimes: RuntimeRegistry;
  config: () => DaemonConfig;
  log: Logger;
  execRoot: string;
  runcRoot: string;
  containersDir: string;
  tmpDir: string;
  cgroupDriver: CgroupDriver;
  shmSize: number;
  /** Container networking (bridge and user networks, ports, DNS); without it: loopback only. */
  networks?: RunNetworking;
  /** Named and anonymous volumes (src/daemon/volumes); without it such mounts are refused. */
  volumes?: Pick<ContainerVolumes, 'attach' | 'detach'>;
  /** --userns-remap: containers not opting out (UsernsMode "host") run in a user namespace with it. */
  userns?: IdentityMap;
  /** Rootless without delegated cgroups: limits are refused and runc gets no cgroup to manage. */
  noCgroups?: boolean;
}

export class TaskLauncher {
  private readonly specs: RunSpecs;
  private readonly exits: ExitWatcher;
  private readonly host: RunHostSide;
  private readonly reaper: TaskReaper;

  constructor(private readonly d: LauncherDeps) {
    ({ specs: this.specs, exits: this.exits, host: this.host, reaper: this.reaper } = launcherParts(d, this.killsAll));
  }

  /**
   * Whether SIGKILL goes to every process of the container (runc kill --all, which finds them in
   * the container's cgroup) or to its init alone (which takes its PID namespace down with it):
   * rootless without cgroups has no cgroup to search (runc fails with "lstat : no such file").
   */
  get killsAll(): boolean {
    return !this.d.noCgroups;
  }

  /**
   * Starts a run of a container whose HostConfig was verified (verify.ts: at create, and checkStart
   * just before this); `cdi` holds the CDI edits checkStart resolved.
   */
  async launch(rec: ContainerRecord, hub: OutputHub, find: (ref: string) => ContainerRecord, cdi?: CdiInjection): Promise<RunningTask> {
    const { client } = this.d;
    const id = rec.Id;
    const runtime = this.d.runtimes.resolve(rec.HostConfig.Runtime || this.d.config()['default-runtime'] || 'runc');
    const dir = join(this.d.containersDir, id);
    await mkdir(dir, { recursive: true, mode: 0o710 });
    const remap = usesRemap(rec.HostConfig.UsernsMode, this.d.userns !== undefined) ? this.d.userns : undefined;
    // The remapped root reaches /etc/hosts & co. (bound from here) through the group, as in dockerd.
    if (this.d.userns) await chown(dir, process.getuid!(), this.d.userns.rootGid);
    this.exits.reset(id);
    await this.reaper.clearForRun(id);
    await this.host.createBindSources(rec, remap);
    const { namespaces, ownNetwork } = this.host.namespacesFor(rec, find);
    // The network side is made while containerd gets the container and the FIFOs are made: only
    // Tasks.Create needs the namespace and the /etc files, and their paths are known already.
    const network = this.host.prepareNetwork(rec, dir, namespaces, ownNetwork, remap);
    network.catch(() => undefined); // settled below on every path
    const rootMountsRead = ensureWritableLayer(this.d.rootfs, rec).then((made) => made ?? this.d.rootfs.mounts(rec.Internal.snapshotKey));
    rootMountsRead.catch(() => undefined); // awaited below; a layer made stays the container's (removed with it)
    let containerCreated = false;
    let fifosMade: Promise<StdioPaths> | undefined;
    try {
      const shm = await this.host.shmFor(rec, find);
      const files: StartSpecParts['files'] = { ...etcFilePaths(dir), ...(shm ? { shmPath: shm } : {}) };
      if (remap && namespaces.networkPath && namespaces.networkPath !== 'host') files.sysfsPath = sysfsPath(dir);
      const tty = rec.Config.Tty === true;
      fifosMade = makeFifos(join(this.d.execRoot, 'fifo', id), 'init', { stdin: rec.Config.OpenStdin === true, stderr: !tty });
      fifosMade.catch(() => undefined); // awaited below unless an earlier step fails
      const rootMounts = await rootMountsRead;
      // Volumes mounted (DriverOpts) and filled from the image (copy-up) before the task exists.
      const volumeMounts = this.d.volumes ? await this.d.volumes.attach(rec, rootMounts) : [];
      const spec = await this.specs.forStart(rec, { files, namespaces, rootMounts, volumeMounts, remap, cdi });
      await client.containers.create({
        id,
        runtime: { name: runtime.shim, options: runtimeOptions(this.d, runtime) },
        // serializeSpec, not JSON.stringify: rlimits are bigints (exact 64-bit values).
        spec: { type_url: SPEC_TYPE_URL, value: Buffer.from(serializeSpec(spec)) },
        snapshotter: rec.Internal.snapshotter,
        snapshot_key: rec.Internal.snapshotKey,
        labels: { 'engine.container.name': rec.Name.slice(1) },
      });
      containerCreated = true;
      const fifos = await fifosMade;
      await network;
      return await this.startTask(rec, hub, fifos, { rootMounts, dir }, tty);
    } catch (e) {
      // The network side finishes (or fails) before it is undone; its failure is the one reported,
      // as when it was made first.
      const networkError = await network.then(
        () => undefined,
        (n: unknown) => n,
      );
      // A container made in containerd for a start that fails before its task: deleted at once
      // (forget() at the next start or removal would find it otherwise).
      if (containerCreated)
        await client.containers.delete(id).catch((u) => {
          if (!isNotFound(u)) this.d.log.debug(`undoing a start: container: ${(u as Error).message}`, { id });
        });
      if (fifosMade) {
        await fifosMade.catch(() => undefined); // a failed FIFO creation: the start already reports its own error; the rm below cleans up
        await rm(join(this.d.execRoot, 'fifo', id), { recursive: true, force: true });
      }
      await this.host.undoStart(rec, dir);
      throw networkError ?? e;
    }
  }

  /** The task of a start made in containerd (its container exists, its FIFOs too) and started. */
  private async startTask(
    rec: ContainerRecord,
    hub: OutputHub,
    fifos: StdioPaths,
    root: { rootMounts: StartSpecParts['rootMounts']; dir: string },
    tty: boolean,
  ): Promise<RunningTask> {
    const { client } = this.d;
    const id = rec.Id;
    const out = openOutputFifo(fifos.stdout);
    const err = fifos.stderr ? openOutputFifo(fifos.stderr) : undefined;
    const stdin = fifos.stdin ? openFifoWriter(fifos.stdin) : undefined;
    const ioDone = Promise.all([hub.pump(out, 'stdout'), err ? hub.pump(err, 'stderr') : Promise.resolve()]).then(() => undefined);
    const startedAt = nowIso();
    try {
      await client.tasks.create({
        container_id: id,
        rootfs: await taskRootfs(root.rootMounts, root.dir),
        stdin: fifos.stdin ?? '',
        stdout: fifos.stdout,
        stderr: fifos.stderr ?? '',
        terminal: tty,
      });
    } catch (e) {
      out.destroy();
      err?.destroy();
      stdin?.destroy();
      throw runtimeError(e);
    }
    // A first size for the TTY; the client sends its own right after the start, so a failure here only logs.
    if (tty)
      await client.tasks
        .resizePty(id, { width: 80, height: 24 })
        .catch((e) => this.d.log.debug(`initial TTY size: ${(e as Error).message}`, { id }));
    const exited = this.exits.wait(id, (rec.HostConfig.Memory ?? 0) > 0);
    let pid: number;
    try {
      pid = await client.tasks.start(id);
    } catch (e) {
      await this.forget(id);
      out.destroy();
      err?.destroy();
      throw runtimeError(e);
    }
    return { ...runningTask(pid, exited.promise, ioDone, stdin, exited.cancel), startedAt };
  }

  /** A container just created (nothing of it in containerd yet). */
  created(id: string): void {
    this.reaper.created(id);
  }

  /** A container removed: nothing to remember. */
  removed(id: string): void {
    this.reaper.removed(id);
  }

  /** After an exit: the task, the containerd container, the namespace and FIFOs go (task-reaper.ts). */
  cleanup(rec: ContainerRecord, task?: RunningTask): Promise<void> {
    return this.reaper.cleanup(rec, task);
  }

  /** Kills and deletes whatever containerd still has for this id; the task's exit status if any. */
  forget(id: string): Promise<number | undefined> {
    return this.reaper.forget(id);
  }

  /** At start-up: FIFO directories and network namespaces of containers the store does not know. */
  removeStaleRuntimeDirs(known: Set<string>): Promise<void> {
    return this.reaper.removeStaleRuntimeDirs(known);
  }

  /** live-restore: the task kept running while the daemon was down; reopen its FIFOs and wait again. */
  async reattach(rec: ContainerRecord, hub: OutputHub): Promise<RunningTask | undefined> {
    const t = await this.d.client.tasks.get(rec.Id).catch((e) => {
      if (!isNotFound(e)) this.d.log.debug(`reattach: ${(e as Error).message}`, { id: rec.Id });
      return undefined; // no task to re-attach to: the caller records the exit
    });
    if (!t || (t.status !== 'RUNNING' && t.status !== 'PAUSED')) return undefined;
    const dir = join(this.d.execRoot, 'fifo', rec.Id);
    const outPath = join(dir, 'init-stdout');
    if (!existsSync(outPath)) return undefined;
    const errPath = join(dir, 'init-stderr');
    const out = openOutputFifo(outPath);
    const err = existsSync(errPath) ? openOutputFifo(errPath) : undefined;
    const inPath = join(dir, 'init-stdin');
    const stdin = existsSync(inPath) ? openFifoWriter(inPath) : undefined;
    const ioDone = Promise.all([hub.pump(out, 'stdout'), err ? hub.pump(err, 'stderr') : Promise.resolve()]).then(() => undefined);
    const exited = this.exits.wait(rec.Id, (rec.HostConfig.Memory ?? 0) > 0);
    return runningTask(t.pid, exited.promise, ioDone, stdin, exited.cancel);
  }

  /** `update`: the verified HostConfig's resources applied to the running task (nothing when stopped). */
  async applyResources(rec: ContainerRecord, hostConfig: HostConfig): Promise<void> {
    if (!rec.State.Running) return;
    const spec = this.specs.forResources(rec, hostConfig);
    try {
      await this.d.client.tasks.update(
        rec.Id,
        jsonAny('types.containerd.io/opencontainers/runtime-spec/1/LinuxResources', spec.linux.resources ?? {}),
      );
    } catch (err) {
      throw internal(`Cannot update container ${rec.Id}: ${(err as Error).message}`); // a 500, as dockerd
    }
  }
}

/** The parts of the launcher, each given what it uses of the launcher's collaborators. */
function launcherParts(d: LauncherDeps, killsAll: boolean): { specs: RunSpecs; exits: ExitWatcher; host: RunHostSide; reaper: TaskReaper } {
  const { config, log, shmSize, networks, volumes } = d;
  const specs = new RunSpecs({
    config,
    log,
    tmpDir: d.tmpDir,
    cgroupDriver: d.cgroupDriver,
    shmSize,
    ...(networks ? { networks } : {}),
    volumes: volumes !== undefined,
    ...(d.noCgroups ? { noCgroups: true } : {}),
  });
  const exits = new ExitWatcher(d.client, log);
  const host = new RunHostSide({
    config,
    log,
    execRoot: d.execRoot,
    containersDir: d.containersDir,
    shmSize,
    ...(networks ? { networks } : {}),
    ...(volumes ? { volumes } : {}),
  });
  const reaper = new TaskReaper({ client: d.client, log, execRoot: d.execRoot, host, ...(volumes ? { volumes } : {}), killsAll });
  return { specs, exits, host, reaper };
}

/** The runc shim's options of a runtime (other shims take none). */
function runtimeOptions(
  d: LauncherDeps,
  runtime: ReturnType<RuntimeRegistry['resolve']>,
): ReturnType<SupervisorClient['runcOptions']> | null {
  return runtime.shim === 'io.containerd.runc.v2'
    ? d.client.runcOptions({
        root: runtime.root ?? d.runcRoot,
        binary_name: runtime.binary ?? 'runc',
        systemd_cgroup: d.cgroupDriver === 'systemd',
        ...(process.env.ENGINE_RAMDISK ? { no_pivot_root: true } : {}),
      })
    : null;
}

/** runc's messages arrive wrapped in containerd's; keep the useful part, classed as a 400 like dockerd. */
function runtimeError(err: unknown): Error {
  const msg = (err as Error).message ?? String(err);
  const e = invalidParameter(`failed to create task for container: ${msg}`);
  return e;
}

export { PROCESS_TYPE_URL };
