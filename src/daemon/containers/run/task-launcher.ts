// Running a container's process in containerd: builds the OCI spec, creates the containerd
// container and its task with FIFO stdio, waits for the exit, and cleans up after it. Also
// re-attaches to tasks that survived a daemon restart (live-restore), applies `docker update`'s
// resources to a running task. It checks nothing itself: requests are verified
// before they get here (verify.ts).
import { applyCdiProcessEdits, type CdiInjection } from '../../../oci/cdi.ts';
import { existsSync } from 'node:fs';
import { chown, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import type { DaemonConfig } from '../../../config/daemon-config.ts';
import { conflict, internal, invalidParameter, isNotFound } from '../../../errors.ts';
import { cgroupVersion, type CgroupDriver } from '../../../oci/cgroups.ts';
import { readOwnCapabilities } from '../../../oci/caps.ts';
import { hostNetSysctls } from '../../../oci/sysctls.ts';
import { parseSeccompProfile, type DockerSeccompProfile } from '../../../oci/seccomp.ts';
import { buildSpec, type DaemonSpecDefaults } from '../../../oci/spec.ts';
import { serializeSpec } from '../../../oci/spec-types.ts';
import { listHostDevices, resolveDeviceMappings } from '../../../oci/devices.ts';
import { resolveUser } from '../../../oci/user.ts';
import { usesRemap, type IdentityMap } from '../../../oci/userns.ts';
import { PROCESS_TYPE_URL, SPEC_TYPE_URL, jsonAny, type SupervisorClient } from '../../../supervisor/client.ts';
import { withMounted } from '../../../supervisor/mounts.ts';
import type { HostConfig } from '../../../types/container-api.ts';
import type { Logger } from '../../../util/log.ts';
import { resolveInitPath } from '../../init-binary.ts';
import type { RuntimeRegistry } from '../../runtimes.ts';
import { nowIso } from '../../../util/time.ts';
import { etcFilePaths, writeEtcFiles } from '../../../network/sandbox/etc-files.ts';
import { mountShm, shmPath, unmountShm } from '../fs/ipc-shm.ts';
import { taskRootfs, unmountFuseRoot } from '../fs/fuse-rootfs.ts';
import { mountNetnsSysfs, sysfsPath, unmountNetnsSysfs } from '../fs/netns-sysfs.ts';
import { makeFifos, openFifoWriter, openOutputFifo, type StdioPaths } from '../io/fifo.ts';
import { createNetns, netnsPath, removeNetns } from '../../../network/host/netns.ts';
import type { RunNetworking, SandboxInfo } from '../../../network/container-contract.ts';
import type { OutputHub } from '../io/output-hub.ts';
import { inheritedBinds, resolveMounts } from '../create/mount-plan.ts';
import type { ContainerVolumes } from '../../volumes/service.ts';
import type { ContainerRecord } from '../record.ts';
import type { RootfsManager } from '../fs/rootfs.ts';
import { readFileSync } from 'node:fs';

export interface TaskExit {
  status: number;
  at: string;
  oom: boolean;
}

/** The namespaces a run joins, by path ('host' for the host's); absent: a new one. */
type RunNamespaces = { networkPath?: string; ipcPath?: string; pidPath?: string; utsPath?: string };

export interface RunningTask {
  pid: number;
  exited: Promise<TaskExit>;
  /** Resolves when the shim closed the output FIFOs (all output delivered). */
  ioDone: Promise<void>;
  stdin?: Writable;
  /** When the task began to be made (dockerd's StartedAt: before its NewTask), so a quick exit's
   * FinishedAt never precedes it; absent for a re-attached task. */
  startedAt?: string;
  /** Stops watching without touching the task (live-restore shutdown). */
  detach(): void;
}

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

/** How long the exit of a memory-limited task killed by SIGKILL waits for its OOM event. */
const OOM_EVENT_WAIT_MS = 250;

function tsToIso(ts: { seconds: string | number; nanos: number } | null | undefined): string {
  if (!ts || Number(ts.seconds) <= 0) return new Date().toISOString();
  const ms = Number(ts.seconds) * 1000;
  return `${new Date(ms).toISOString().slice(0, 19)}.${String(ts.nanos).padStart(9, '0')}Z`;
}

export class TaskLauncher {
  private readonly oomed = new Set<string>();
  /** Exits waiting (briefly) for an OOM event that may still be on its way: see waitExit. */
  private readonly oomWaiters = new Map<string, () => void>();
  private readonly daemonCaps = readOwnCapabilities();
  private readonly netSysctls = hostNetSysctls();
  /**
   * Containers this process knows containerd holds nothing of, and whose sandbox, FIFOs and mounts
   * are gone: created here and never started, or whose exit cleanup finished without an error. A
   * start and a removal of these skip forget()'s calls (two containerd round trips, mount table
   * reads, sandbox teardown) that could only answer "not found". In memory only: after a restart
   * (a crash included) the set is empty and every start and removal forgets as before.
   */
  private readonly clean = new Set<string>();

  constructor(private readonly d: LauncherDeps) {
    this.daemonDefaults(); // validates the daemon's defaults (seccomp profile file) at start-up
    // One filter: containerd ORs the filters of a list, ANDs the terms of one. As two filters this
    // took every event of the namespace (a task's exit too) for an OOM kill.
    d.client.subscribe([`namespace==${d.client.namespace},topic=="/tasks/oom"`], (e) => {
      if (e.topic !== '/tasks/oom') return;
      const id = (e.event as { container_id?: string } | null)?.container_id;
      if (!id) return;
      this.oomed.add(id);
      this.oomWaiters.get(id)?.();
    });
  }

  /**
   * Whether SIGKILL goes to every process of the container (runc kill --all, which finds them in
   * the container's cgroup) or to its init alone (which takes its PID namespace down with it):
   * rootless without cgroups has no cgroup to search (runc fails with "lstat : no such file").
   */
  get killsAll(): boolean {
    return !this.d.noCgroups;
  }

  private seccompCache?: { path: string; profile: DockerSeccompProfile };

  /** --seccomp-profile <file>, read once (as dockerd, at start-up: a bad file refuses to start). */
  private seccompFile(path: string): DockerSeccompProfile {
    if (this.seccompCache?.path === path) return this.seccompCache.profile;
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw invalidParameter(`opening seccomp profile (${path}) failed: ${(err as Error).message}`);
    }
    const profile = parseSeccompProfile(text);
    this.seccompCache = { path, profile };
    return profile;
  }

  private daemonDefaults(): DaemonSpecDefaults {
    const cfg = this.d.config();
    const profile = cfg['seccomp-profile'];
    return {
      seccompProfile:
        profile === 'builtin' || profile === '' ? 'builtin' : profile === 'unconfined' ? 'unconfined' : this.seccompFile(profile),
      noNewPrivileges: cfg['no-new-privileges'],
      defaultUlimits: Object.values(cfg['default-ulimits']),
      defaultShmSize: this.d.shmSize,
      cgroupParent: cfg['cgroup-parent'] ?? '',
      cgroupDriver: this.d.cgroupDriver,
      cgroupVersion: cgroupVersion(),
      defaultCgroupnsMode: cfg['default-cgroupns-mode'],
      defaultIpcMode: cfg['default-ipc-mode'],
      initPath: resolveInitPath(cfg['init-path']),
      init: cfg.init,
      availableCapabilities: this.daemonCaps,
      netSysctls: this.netSysctls,
      ...(this.d.noCgroups ? { noCgroups: true } : {}),
    };
  }

  /**
   * The host directory bound at /dev/shm for IpcMode shareable (its tmpfs is mounted here) or
   * container:<id> (the donor's, which must be shareable and running); undefined otherwise.
   */
  private async shmFor(rec: ContainerRecord, find: (ref: string) => ContainerRecord): Promise<string | undefined> {
    const mode = rec.HostConfig.IpcMode || this.d.config()['default-ipc-mode'];
    if (mode === 'shareable') {
      const path = shmPath(join(this.d.containersDir, rec.Id));
      await mountShm(path, rec.HostConfig.ShmSize || this.d.shmSize);
      return path;
    }
    if (mode.startsWith('container:')) {
      const donor = find(mode.slice('container:'.length));
      if (!donor.State.Running) throw conflict(`cannot join IPC of a non running container: ${donor.Id}`);
      if ((donor.HostConfig.IpcMode || 'private') !== 'shareable') {
        throw invalidParameter(`container ${donor.Id}: non-shareable IPC (hint: use IpcMode:shareable for the donor container)`);
      }
      return shmPath(join(this.d.containersDir, donor.Id));
    }
    return undefined;
  }

  /**
   * The namespaces of a run, as paths (checked now: a namespace shared with a container that is not
   * running is refused before anything is made); `ownNetwork` when the daemon makes the container's
   * network namespace (bound at netnsPath, so its path is known before it exists).
   */
  private namespacesFor(rec: ContainerRecord, find: (ref: string) => ContainerRecord): { namespaces: RunNamespaces; ownNetwork: boolean } {
    const hc = rec.HostConfig;
    const ns: RunNamespaces = {};
    const mode = hc.NetworkMode ?? 'bridge';
    let ownNetwork = false;
    if (mode === 'host') ns.networkPath = 'host';
    else if (mode.startsWith('container:')) {
      const other = find(mode.slice('container:'.length));
      if (!other.State.Running)
        throw conflict(`cannot join network namespace of a non running container: container ${other.Id} is ${other.State.Status}`);
      ns.networkPath = other.Internal.netnsPath ?? `/proc/${other.State.Pid}/ns/net`;
    } else {
      ns.networkPath = netnsPath(this.d.execRoot, rec.Id);
      ownNetwork = true;
    }
    for (const [field, key] of [
      ['IpcMode', 'ipcPath'],
      ['PidMode', 'pidPath'],
      ['UTSMode', 'utsPath'],
    ] as const) {
      const v = hc[field];
      if (v === 'host') ns[key] = 'host';
      else if (v?.startsWith('container:')) {
        const other = find(v.slice('container:'.length));
        if (!other.State.Running)
          throw conflict(`cannot join namespace of a non running container: container ${other.Id} is ${other.State.Status}`);
        ns[key] = `/proc/${other.State.Pid}/ns/${key === 'ipcPath' ? 'ipc' : key === 'pidPath' ? 'pid' : 'uts'}`;
      }
    }
    return { namespaces: ns, ownNetwork };
  }

  /**
   * The network side of a run: the container's own namespace when the daemon makes it (bound under
   * exec-root/netns, so it outlives the task and a daemon restart; with the networks service its
   * interfaces, addresses and published ports too), its /etc files (which name its addresses) and,
   * remapped, the namespace's /sys.
   */
  private async prepareNetwork(
    rec: ContainerRecord,
    dir: string,
    namespaces: RunNamespaces,
    ownNetwork: boolean,
    remap: IdentityMap | undefined,
  ): Promise<void> {
    let sandbox: SandboxInfo | undefined;
    if (ownNetwork && this.d.networks) {
      sandbox = await this.d.networks.setupSandbox(rec);
      rec.Internal.netnsPath = sandbox.netnsPath;
    } else if (ownNetwork) {
      rec.Internal.netnsPath = await createNetns(this.d.execRoot, rec.Id);
    }
    await writeEtcFiles({
      dir,
      hostname: rec.Config.Hostname ?? rec.Id.slice(0, 12),
      domainname: rec.Config.Domainname ?? '',
      extraHosts: this.d.networks
        ? this.d.networks.extraHosts(rec)
        : (rec.HostConfig.ExtraHosts ?? []).map((h) => {
            const i = h.lastIndexOf(':');
            return `${h.slice(i + 1)} ${h.slice(0, i)}`;
          }),
      addresses: sandbox?.addresses ?? [],
      dns: sandbox?.dns ?? {
        servers: rec.HostConfig.Dns?.length ? rec.HostConfig.Dns : this.d.config().dns,
        options: rec.HostConfig.DnsOptions?.length ? rec.HostConfig.DnsOptions : this.d.config()['dns-opts'],
        search: rec.HostConfig.DnsSearch?.length ? rec.HostConfig.DnsSearch : this.d.config()['dns-search'],
      },
      hostNetwork: namespaces.networkPath === 'host',
    });
    if (remap && namespaces.networkPath && namespaces.networkPath !== 'host') await mountNetnsSysfs(namespaces.networkPath, sysfsPath(dir));
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
    this.oomed.delete(id);
    // Leftovers of an earlier run (a crash between start and cleanup); none for a clean container,
    // which stops being one here, before anything of this run exists.
    if (!this.clean.delete(id)) await this.forget(id);
    // As dockerd: a -v bind whose host path is missing gets it created (a directory); --mount
    // type=bind sources must exist (checked at create).
    for (const m of resolveMounts({ ...rec.HostConfig, Mounts: [], Tmpfs: {} }, this.d.volumes !== undefined)) {
      if (m.type === 'bind' && !existsSync(m.source)) {
        await mkdir(m.source, { recursive: true, mode: 0o755 });
        // dockerd gives a created bind source to the container's (remapped) root.
        if (remap) await chown(m.source, remap.rootUid, remap.rootGid);
      }
    }
    const { namespaces, ownNetwork } = this.namespacesFor(rec, find);
    // The network side is made while containerd gets the container and the FIFOs are made: only
    // Tasks.Create needs the namespace and the /etc files, and their paths are known already.
    const network = this.prepareNetwork(rec, dir, namespaces, ownNetwork, remap);
    network.catch(() => undefined); // settled below on every path
    const rootMountsRead = this.d.rootfs.mounts(rec.Internal.snapshotKey);
    rootMountsRead.catch(() => undefined); // a read: nothing to undo when a step before it fails
    let containerCreated = false;
    let fifosMade: Promise<StdioPaths> | undefined;
    try {
      const shm = await this.shmFor(rec, find);
      const files: Parameters<typeof buildSpec>[0]['files'] = { ...etcFilePaths(dir), ...(shm ? { shmPath: shm } : {}) };
      if (remap && namespaces.networkPath && namespaces.networkPath !== 'host') files.sysfsPath = sysfsPath(dir);
      const tty = rec.Config.Tty === true;
      fifosMade = makeFifos(join(this.d.execRoot, 'fifo', id), 'init', { stdin: rec.Config.OpenStdin === true, stderr: !tty });
      fifosMade.catch(() => undefined); // awaited below unless an earlier step fails
      const rootMounts = await rootMountsRead;
      // Volumes mounted (DriverOpts) and filled from the image (copy-up) before the task exists.
      const volumeMounts = this.d.volumes ? await this.d.volumes.attach(rec, rootMounts) : [];
      const user = await this.user(rec, rootMounts);
      const ownMounts = resolveMounts(rec.HostConfig, this.d.volumes !== undefined);
      const warnings: string[] = [];
      const spec = buildSpec(
        {
          id,
          config: rec.Config,
          hostConfig: specHostConfig(rec.HostConfig),
          args: [rec.Path, ...rec.Args],
          user,
          daemon: this.daemonDefaults(),
          files,
          namespaces,
          mounts: [...ownMounts, ...inheritedBinds(rec.Mounts, ownMounts), ...volumeMounts, ...(cdi?.mounts ?? [])],
          devices: [...resolveDeviceMappings(rec.HostConfig.Devices), ...(cdi?.devices ?? [])],
          ...(rec.HostConfig.Links?.length && this.d.networks ? { linkEnv: this.d.networks.linkEnvironment(rec) } : {}),
          ...(rec.HostConfig.Privileged ? { hostDevices: listHostDevices() } : {}),
          ...(remap ? { userns: { uidMappings: remap.uids, gidMappings: remap.gids } } : {}),
        },
        warnings,
      );
      for (const w of warnings) this.d.log.warn(w, { id });
      if (cdi) applyCdiProcessEdits(spec, cdi);

      const options =
        runtime.shim === 'io.containerd.runc.v2'
          ? client.runcOptions({
              root: runtime.root ?? this.d.runcRoot,
              binary_name: runtime.binary ?? 'runc',
              systemd_cgroup: this.d.cgroupDriver === 'systemd',
              ...(process.env.ENGINE_RAMDISK ? { no_pivot_root: true } : {}),
            })
          : null;
      await client.containers.create({
        id,
        runtime: { name: runtime.shim, options },
        // serializeSpec, not JSON.stringify: rlimits are bigints (exact 64-bit values).
        spec: { type_url: SPEC_TYPE_URL, value: Buffer.from(serializeSpec(spec)) },
        snapshotter: rec.Internal.snapshotter,
        snapshot_key: rec.Internal.snapshotKey,
        labels: { 'engine.container.name': rec.Name.slice(1) },
      });
      containerCreated = true;
      const fifos = await fifosMade;
      await network;
      const out = openOutputFifo(fifos.stdout);
      const err = fifos.stderr ? openOutputFifo(fifos.stderr) : undefined;
      const stdin = fifos.stdin ? openFifoWriter(fifos.stdin) : undefined;
      const ioDone = Promise.all([hub.pump(out, 'stdout'), err ? hub.pump(err, 'stderr') : Promise.resolve()]).then(() => undefined);
      const startedAt = nowIso();
      try {
        await client.tasks.create({
          container_id: id,
          rootfs: await taskRootfs(rootMounts, dir),
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
      const exited = this.waitExit(id, (rec.HostConfig.Memory ?? 0) > 0);
      let pid: number;
      try {
        pid = await client.tasks.start(id);
      } catch (e) {
        await this.forget(id);
        out.destroy();
        err?.destroy();
        throw runtimeError(e);
      }
      return { ...this.running(pid, exited.promise, ioDone, stdin, exited.cancel), startedAt };
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
      await unmountShm(shmPath(dir));
      await unmountNetnsSysfs(sysfsPath(dir));
      await unmountFuseRoot(dir);
      // Undoing a failed start: its error is the one reported; what cannot be undone is logged.
      if (this.d.networks)
        await this.d.networks
          .teardownSandbox(id)
          .catch((u) => this.d.log.debug(`undoing a start: sandbox: ${(u as Error).message}`, { id }));
      await this.d.volumes?.detach(rec).catch((u) => this.d.log.debug(`undoing a start: volumes: ${(u as Error).message}`, { id }));
      if (rec.Internal.netnsPath) {
        if (existsSync(rec.Internal.netnsPath)) await removeNetns(rec.Internal.netnsPath);
        delete rec.Internal.netnsPath;
      }
      throw networkError ?? e;
    }
  }

  private running(
    pid: number,
    exited: Promise<TaskExit>,
    ioDone: Promise<void>,
    stdin: Writable | undefined,
    cancel: () => void,
  ): RunningTask {
    return { pid, exited, ioDone, ...(stdin ? { stdin } : {}), detach: cancel };
  }

  /** Resolves when an OOM event for `id` arrives, or after `ms`. */
  private oomEvent(id: string, ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.oomWaiters.get(id) === done) this.oomWaiters.delete(id);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.oomWaiters.set(id, done);
    });
  }

  /** Tasks.Wait, re-issued when containerd restarts underneath (the task itself keeps running). */
  private waitExit(id: string, memoryLimited: boolean): { promise: Promise<TaskExit>; cancel: () => void } {
    let cancelled = false;
    const promise = (async (): Promise<TaskExit> => {
      for (;;) {
        try {
          const r = await this.d.client.tasks.wait(id, '', { waitForReady: true });
          // The OOM event comes on the event stream, the exit on this call: a memory-limited task
          // killed by SIGKILL gives the event a moment to arrive.
          if (memoryLimited && r.exit_status === 137 && !this.oomed.has(id)) await this.oomEvent(id, OOM_EVENT_WAIT_MS);
          return { status: r.exit_status, at: tsToIso(r.exited_at as { seconds: string; nanos: number } | null), oom: this.oomed.has(id) };
        } catch (err) {
          if (cancelled) return new Promise<TaskExit>(() => undefined);
          if (isNotFound(err)) return { status: 255, at: new Date().toISOString(), oom: false };
          // containerd restarting underneath: the task lives on; wait again shortly.
          this.d.log.debug(`waiting for the exit: ${(err as Error).message}`, { id });
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    })();
    return {
      promise,
      cancel: () => {
        cancelled = true;
      },
    };
  }

  /** A container just created (nothing of it in containerd yet): see `clean`. */
  created(id: string): void {
    this.clean.add(id);
  }

  /** A container removed: nothing to remember. */
  removed(id: string): void {
    this.clean.delete(id);
  }

  /**
   * After an exit: delete the task and the containerd container, release the namespace and FIFOs.
   * `task`: the run whose exit was seen (its output read to the end or given up on), so its Tasks.Get
   * is skipped and its FIFOs go meanwhile.
   */
  async cleanup(rec: ContainerRecord, task?: RunningTask): Promise<void> {
    const fifoDir = join(this.d.execRoot, 'fifo', rec.Id);
    const [complete] = await Promise.all([
      task ? this.forgetExited(rec.Id) : this.forgetAll(rec.Id),
      task ? rm(fifoDir, { recursive: true, force: true }) : undefined,
    ]);
    if (rec.Internal.netnsPath) {
      if (existsSync(rec.Internal.netnsPath)) await removeNetns(rec.Internal.netnsPath);
      delete rec.Internal.netnsPath;
    }
    if (!task) await rm(fifoDir, { recursive: true, force: true });
    await this.d.volumes?.detach(rec).catch((err) => this.d.log.warn(`releasing volumes: ${(err as Error).message}`, { id: rec.Id }));
    if (complete) this.clean.add(rec.Id);
  }

  /**
   * Kills and deletes whatever containerd still has for this id (task first: a container deleted
   * before its task leaves an orphan). Returns the task's exit status when there was one.
   */
  async forget(id: string): Promise<number | undefined> {
    if (this.clean.has(id)) return undefined;
    return (await this.forgetTask(id)).status;
  }

  /** forget(), true when every step succeeded (nothing can be left). */
  private async forgetAll(id: string): Promise<boolean> {
    return (await this.forgetTask(id)).complete;
  }

  /**
   * forgetAll() for a task whose exit was seen: its process is gone, so the host side (sandbox,
   * namespace, mounts) is released while containerd deletes the stopped task (no Tasks.Get, kill or
   * wait first), and the containerd container goes after the task. Should the delete fail, the
   * long way (forgetAll) decides.
   */
  private async forgetExited(id: string): Promise<boolean> {
    const { client } = this.d;
    const hostSide = this.releaseHostSide(id);
    hostSide.catch(() => undefined); // settled below on every path
    try {
      await client.tasks.delete(id);
    } catch (err) {
      if (!isNotFound(err)) this.d.log.debug(`task delete after its exit: ${(err as Error).message}`, { id });
      await hostSide.catch((e) => this.d.log.debug(`host side after an exit: ${(e as Error).message}`, { id }));
      return this.forgetAll(id);
    }
    const containerGone = client.containers.delete(id).catch((err) => {
      if (!isNotFound(err)) throw err;
    });
    const [c, h] = await Promise.allSettled([containerGone, hostSide]);
    if (c.status === 'rejected') throw c.reason;
    if (h.status === 'rejected') throw h.reason;
    return true;
  }

  private async forgetTask(id: string): Promise<{ status: number | undefined; complete: boolean }> {
    const { client } = this.d;
    let status: number | undefined;
    let complete = true;
    try {
      const t = await client.tasks.get(id);
      if (t.status === 'RUNNING' || t.status === 'PAUSED' || t.status === 'CREATED') {
        // The kill may race the task's own exit, and the wait only bounds how long the delete below
        // waits; the delete reports what matters.
        await client.tasks
          .kill(id, 9, { all: this.killsAll })
          .catch((e) => this.d.log.debug(`forget: kill: ${(e as Error).message}`, { id }));
        await Promise.race([
          client.tasks.wait(id).catch((e) => this.d.log.debug(`forget: wait: ${(e as Error).message}`, { id })),
          new Promise((r) => setTimeout(r, 5000)),
        ]);
      }
      status = (await client.tasks.delete(id)).exit_status;
    } catch (err) {
      if (!isNotFound(err)) {
        complete = false;
        this.d.log.debug(`task cleanup: ${(err as Error).message}`, { id });
      }
    }
    const containerGone = client.containers.delete(id).catch((err) => {
      if (!isNotFound(err)) throw err;
    });
    if (!complete) {
      // The task may still be there: its sandbox stays unless containerd lets the container go.
      await containerGone;
      await this.releaseHostSide(id);
      return { status, complete };
    }
    // With the task gone, the containerd container and the host side go at the same time.
    const [c, h] = await Promise.allSettled([containerGone, this.releaseHostSide(id)]);
    if (c.status === 'rejected') throw c.reason;
    if (h.status === 'rejected') throw h.reason;
    return { status, complete };
  }

  /** The sandbox, namespace and mounts of a run (after its task is gone). */
  private async releaseHostSide(id: string): Promise<void> {
    // The sandbox goes with the task: addresses, ports, veths, namespace.
    if (this.d.networks) await this.d.networks.teardownSandbox(id);
    const ns = netnsPath(this.d.execRoot, id);
    if (existsSync(ns)) await removeNetns(ns);
    await unmountShm(shmPath(join(this.d.containersDir, id)));
    await unmountNetnsSysfs(sysfsPath(join(this.d.containersDir, id)));
    await unmountFuseRoot(join(this.d.containersDir, id));
  }

  /** At start-up: FIFO directories and network namespaces of containers the store does not know. */
  async removeStaleRuntimeDirs(known: Set<string>): Promise<void> {
    for (const [sub, remove] of [
      ['fifo', (p: string) => rm(p, { recursive: true, force: true })],
      ['netns', removeNetns],
    ] as const) {
      const names = await readdir(join(this.d.execRoot, sub)).catch(() => [] as string[]); // no such directory yet: nothing stale
      for (const name of names) {
        if (known.has(name)) continue;
        await remove(join(this.d.execRoot, sub, name)).catch((err) =>
          this.d.log.warn(`removing stale ${sub} ${name}: ${(err as Error).message}`),
        );
      }
    }
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
    const exited = this.waitExit(rec.Id, (rec.HostConfig.Memory ?? 0) > 0);
    return this.running(t.pid, exited.promise, ioDone, stdin, exited.cancel);
  }

  private async user(
    rec: ContainerRecord,
    rootMounts: Parameters<typeof withMounted>[0],
  ): Promise<{ uid: number; gid: number; additionalGids: number[] }> {
    const spec = rec.Config.User ?? '';
    const groupAdd = rec.HostConfig.GroupAdd ?? [];
    const numeric = /^\d+(:\d+)?$/.test(spec);
    if ((spec === '' || numeric) && groupAdd.every((g) => /^\d+$/.test(g))) {
      const [u = '0', g] = spec.split(':');
      return {
        uid: Number(u),
        gid: g !== undefined ? Number(g) : spec === '' ? 0 : Number(u) === 0 ? 0 : Number(u),
        additionalGids: groupAdd.map(Number),
      };
    }
    return withMounted(rootMounts, this.d.tmpDir, async (root) => resolveUser(root, spec, groupAdd));
  }

  /** `update`: the verified HostConfig's resources applied to the running task (nothing when stopped). */
  async applyResources(rec: ContainerRecord, hostConfig: HostConfig): Promise<void> {
    if (!rec.State.Running) return;
    const spec = buildSpec({
      id: rec.Id,
      config: rec.Config,
      hostConfig,
      args: [rec.Path, ...rec.Args],
      user: { uid: 0, gid: 0, additionalGids: [] },
      daemon: this.daemonDefaults(),
      files: {},
      mounts: [],
    });
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

/**
 * The HostConfig as the spec builder should see it at start: PidsLimit 0 or negative means "no
 * limit" in the API (as dockerd, no pids entry at all; crun rejects the -1 runc accepts).
 */
function specHostConfig(hc: HostConfig): HostConfig {
  if (hc.PidsLimit === undefined || hc.PidsLimit > 0) return hc;
  const { PidsLimit: _unset, ...rest } = hc;
  return rest;
}

/** runc's messages arrive wrapped in containerd's; keep the useful part, classed as a 400 like dockerd. */
function runtimeError(err: unknown): Error {
  const msg = (err as Error).message ?? String(err);
  const e = invalidParameter(`failed to create task for container: ${msg}`);
  return e;
}

export { PROCESS_TYPE_URL };
