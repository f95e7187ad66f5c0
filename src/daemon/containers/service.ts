// The containers backend: records in the store, filesystems in the snapshotter, tasks in
// containerd. Listing and inspecting read the in-memory records and never wait on a container that
// is busy; state-changing operations on one container run one at a time (per-container lock).
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AttachOptions, AttachSession } from '../../types/attach.ts';
import type { LogChunk, LogsRequest } from '../../types/logs.ts';
import type { DaemonConfig } from '../../config/daemon-config.ts';
import { conflict, invalidParameter, isNotFound, notFound } from '../../errors.ts';
import type { ImageStore } from '../../images/image-store.ts';
import type { ContainerSnapshot } from '../../images/container-facts.ts';
import { createLogDriver } from '../../logging/index.ts';
import { validateLogOptions } from '../../logging/options.ts';
import type { LogDriver } from '../../logging/types.ts';
import { parseSignal } from '../../oci/signals.ts';
import type { ContainerStore } from '../../store/containers.ts';
import type { SupervisorClient } from '../../supervisor/client.ts';
import { validateCreateBody } from '../../oci/validate-create.ts';
import type { ContainerCreateBody, WaitCondition } from '../../types/container-api.ts';
import type { Logger } from '../../util/log.ts';
import { KeyedMutex } from '../../util/mutex.ts';
import type { RuntimeRegistry } from '../runtimes.ts';
import { argv, mergeConfig, withHostDefaults } from './create-config.ts';
import { compileFilters, compilePruneFilters } from './filters.ts';
import { generateName, normalizeName } from './names.ts';
import { OutputHub } from './output-hub.ts';
import { StdinRelay } from './stdin-relay.ts';
import { initialState, ZERO_TIME, type ContainerRecord } from './record.ts';
import { nextBackoff, restartAtStartup, shouldRestart } from './restart-policy.ts';
import type { RootfsManager } from './rootfs.ts';
import type { ContainerRunEvents } from './run-events.ts';
import { TaskLauncher, type RunningTask } from './task-launcher.ts';
import { inspectView, summaryView } from './views.ts';
import type { NetworkView } from '../../network/views.ts';
import type { ContainerNetworks } from '../../network/container-contract.ts';
import type { EventPublisher } from '../../events/bus.ts';
import type { ContainerVolumes } from '../volumes/service.ts';
import { containerAttributes } from '../../events/actors.ts';

export interface ContainerServiceDeps {
  client: SupervisorClient;
  images: ImageStore;
  store: ContainerStore<ContainerRecord>;
  rootfs: RootfsManager;
  runtimes: RuntimeRegistry;
  launcher: TaskLauncher;
  config: () => DaemonConfig;
  log: Logger;
  containersDir: string;
  shmSize: number;
  /** The events stream (create, start, die, …); optional so tests can leave it out. */
  events?: EventPublisher;
  /** Container networking; without it containers get loopback only (and a stand-in NetworkSettings). */
  networks?: ContainerNetworks;
  /** Named and anonymous volumes; without it, volume mounts are refused at start. */
  volumes?: Pick<ContainerVolumes, 'prepare' | 'release'>;
  /** Where runs are announced (health checks and exec clean-up follow them). */
  runs?: ContainerRunEvents;
  /** Inspect's ExecIDs: the exec registry (daemon/exec/registry.ts); none without it. */
  execs?: ContainerExecs;
}

/** What inspect needs from the exec instances. */
export interface ContainerExecs {
  idsOf(containerId: string): string[];
}

interface ExitWaiter {
  condition: WaitCondition;
  resolve: (r: { StatusCode: number; Error: { Message: string } | null }) => void;
}

const DEFAULT_STOP_TIMEOUT_S = 10;

function nowIso(): string {
  return new Date().toISOString().replace(/\.(\d{3})Z$/, (_m, ms: string) => `.${ms}${String(process.hrtime.bigint() % 1_000_000n).padStart(6, '0')}Z`);
}


export class ContainerService {
  private readonly recs = new Map<string, ContainerRecord>();
  private readonly tasks = new Map<string, RunningTask>();
  private readonly hubs = new Map<string, OutputHub>();
  private readonly stdinRelays = new Map<string, StdinRelay>();
  private readonly drivers = new Map<string, LogDriver>();
  private readonly waiters = new Map<string, ExitWaiter[]>();
  private readonly backoff = new Map<string, { ms: number; timer?: NodeJS.Timeout }>();
  private readonly lock = new KeyedMutex();
  private readonly reservedNames = new Map<string, string>();
  private shuttingDown = false;
  /** Containers being stopped at start-up (left running by a crashed daemon, no live-restore). */
  private readonly startupStops = new Set<string>();
  private pruning = false;

  constructor(private readonly d: ContainerServiceDeps) {
    for (const r of d.store.list()) this.recs.set(r.Id, structuredClone(r) as ContainerRecord);
  }

  // ---- lookups ---------------------------------------------------------------------------------

  /** Full ID, unique ID prefix, or name with or without the leading slash. */
  find(ref: string): ContainerRecord {
    const exact = this.recs.get(ref);
    if (exact) return exact;
    const name = ref.startsWith('/') ? ref : `/${ref}`;
    for (const r of this.recs.values()) if (r.Name === name) return r;
    if (/^[a-f0-9]+$/.test(ref)) {
      const hits = [...this.recs.values()].filter((r) => r.Id.startsWith(ref));
      if (hits.length === 1) return hits[0]!;
      if (hits.length > 1) throw invalidParameter(`multiple IDs found with provided prefix: ${ref}`);
    }
    throw notFound(`No such container: ${ref}`);
  }

  counts(): { total: number; running: number; paused: number; stopped: number } {
    let running = 0;
    let paused = 0;
    for (const r of this.recs.values()) {
      if (r.State.Paused) paused++;
      else if (r.State.Running) running++;
    }
    return { total: this.recs.size, running, paused, stopped: this.recs.size - running - paused };
  }

  private persist(rec: ContainerRecord): void {
    this.d.store.put(rec);
  }

  private event(rec: ContainerRecord, action: string, extra: Record<string, string> = {}): void {
    this.d.events?.publish({ Type: 'container', Action: action, Actor: { ID: rec.Id, Attributes: containerAttributes(rec, extra) } });
  }

  /** An event about a container from another module (exec, health, commit); ignored once it is gone. */
  publishEvent(ref: string, action: string, extra: Record<string, string> = {}): void {
    const rec = this.recs.get(ref) ?? [...this.recs.values()].find((r) => r.Name === `/${ref}`);
    if (rec) this.event(rec, action, extra);
  }

  /** Persists a record whose state another module updated in place (health status). */
  saveState(id: string): void {
    const rec = this.recs.get(id);
    if (rec && !rec.Internal.removing) this.persist(rec);
  }

  private networkView(rec: ContainerRecord): NetworkView {
    if (this.d.networks) return this.d.networks.containerView(rec);
    // Stand-in without the network layer: own namespace with loopback only.
    const mode = rec.HostConfig.NetworkMode ?? 'bridge';
    const endpoint = { IPAMConfig: null, Links: null, Aliases: null, MacAddress: '', DriverOpts: null, GwPriority: 0, NetworkID: '', EndpointID: '', Gateway: '', IPAddress: '', IPPrefixLen: 0, IPv6Gateway: '', GlobalIPv6Address: '', GlobalIPv6PrefixLen: 0, DNSNames: null };
    const networks = mode.startsWith('container:') ? {} : { [mode]: endpoint };
    return {
      settings: {
        Bridge: '', SandboxID: '', SandboxKey: rec.Internal.netnsPath ?? '', HairpinMode: false, LinkLocalIPv6Address: '', LinkLocalIPv6PrefixLen: 0,
        Ports: {}, SecondaryIPAddresses: null, SecondaryIPv6Addresses: null, EndpointID: '', Gateway: '', GlobalIPv6Address: '', GlobalIPv6PrefixLen: 0,
        IPAddress: '', IPPrefixLen: 0, IPv6Gateway: '', MacAddress: '', Networks: networks,
      },
      summaryNetworks: networks,
      ports: [],
    };
  }

  // ---- create ----------------------------------------------------------------------------------

  async create(body: ContainerCreateBody, name: string | undefined, _version: string): Promise<{ Id: string; Warnings: string[] }> {
    const req = validateCreateBody(body);
    if (!req.Image) throw invalidParameter('config cannot be empty in order to create a container');
    const image = await this.d.images.resolve(req.Image);
    const warnings: string[] = [];
    const cfg = this.d.config();
    const id = randomBytes(32).toString('hex');
    const config = mergeConfig(req, image.config, id);
    config.Image = req.Image;
    const hostConfig = withHostDefaults(req.HostConfig, {
      logDriver: cfg['log-driver'], logOpts: cfg['log-opts'], runtime: cfg['default-runtime'], shmSize: this.d.shmSize,
      cgroupnsMode: cfg['default-cgroupns-mode'], ipcMode: cfg['default-ipc-mode'],
    });
    if (hostConfig.AutoRemove && hostConfig.RestartPolicy?.Name && hostConfig.RestartPolicy.Name !== 'no') {
      throw invalidParameter('can\'t create \'AutoRemove\' container with restart policy');
    }
    this.d.runtimes.resolve(hostConfig.Runtime!);
    this.d.launcher.validateHostConfig(hostConfig);
    validateLogOptions(hostConfig.LogConfig!.Type ?? cfg["log-driver"], hostConfig.LogConfig!.Config ?? {});
    const mode = hostConfig.NetworkMode!;
    if (this.d.networks) {
      warnings.push(...this.d.networks.validateCreate(hostConfig, config, req.NetworkingConfig));
    } else if (mode === 'bridge' || (mode !== 'none' && mode !== 'host' && !mode.startsWith('container:'))) {
      warnings.push(`network mode "${mode}" is not built yet: the container gets its own network namespace with loopback only`);
    }
    if (mode.startsWith('container:')) this.find(mode.slice('container:'.length));
    const fullName = name ? normalizeName(name) : generateName((n) => this.reservedNames.has(n) || [...this.recs.values()].some((r) => r.Name === n));
    const holderId = this.reservedNames.get(fullName) ?? [...this.recs.values()].find((r) => r.Name === fullName)?.Id;
    if (holderId) throw conflict(`Conflict. The container name "${fullName}" is already in use by container "${holderId}". You have to remove (or rename) that container to be able to reuse that name.`);
    // Reserved until the record is stored: concurrent creates must not pick the same name.
    this.reservedNames.set(fullName, id);
    try {
      return await this.createNamed(id, fullName, req, image, config, hostConfig, warnings);
    } finally {
      this.reservedNames.delete(fullName);
    }
  }

  private async createNamed(id: string, fullName: string, req: ContainerCreateBody, image: Awaited<ReturnType<ImageStore['resolve']>>, config: ContainerRecord['Config'], hostConfig: ContainerRecord['HostConfig'], warnings: string[]): Promise<{ Id: string; Warnings: string[] }> {
    const cfg = this.d.config();

    // Volumes first: a bad spec fails the create before anything else exists.
    const volumeMounts = this.d.volumes ? await this.d.volumes.prepare(id, hostConfig, config) : [];
    const args = argv(config);
    const dir = join(this.d.containersDir, id);
    const rec: ContainerRecord = {
      Id: id,
      Name: fullName,
      Created: nowIso(),
      Path: args[0] ?? '',
      Args: args.slice(1),
      State: initialState(),
      Image: image.id,
      ImageRef: req.Image!,
      ResolvConfPath: join(dir, 'resolv.conf'),
      HostnamePath: join(dir, 'hostname'),
      HostsPath: join(dir, 'hosts'),
      LogPath: hostConfig.LogConfig!.Type === 'json-file' ? join(dir, `${id}-json.log`) : '',
      RestartCount: 0,
      Driver: cfg['storage-driver'],
      Platform: 'linux',
      MountLabel: '',
      ProcessLabel: '',
      AppArmorProfile: '',
      Config: config,
      HostConfig: hostConfig,
      Mounts: [...this.d.launcher.mountPoints(hostConfig), ...volumeMounts],
      Internal: { snapshotKey: id, snapshotter: this.d.rootfs.snapshotter, runtime: hostConfig.Runtime!, stoppedByUser: false, chainId: image.chainId } as ContainerRecord['Internal'],
    };
    await mkdir(dir, { recursive: true, mode: 0o710 });
    try {
      await this.d.rootfs.prepare(id, image.chainId);
      this.d.store.put(rec); // throws the 409 if a concurrent create took the name
    } catch (err) {
      await this.d.rootfs.remove(id).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
      await this.d.volumes?.release(rec, true).catch(() => undefined);
      throw err;
    }
    this.recs.set(id, rec);
    this.d.networks?.containerCreated(id, hostConfig, config, req.NetworkingConfig);
    this.event(rec, 'create');
    this.d.log.debug('container created', { id, name: fullName });
    return { Id: id, Warnings: warnings };
  }

  // ---- list / inspect --------------------------------------------------------------------------

  async list(opts: { all: boolean; limit?: number; size: boolean; filters: Map<string, string[]> }): Promise<unknown[]> {
    const ancestorCache = new Map<string, Set<string>>();
    for (const v of opts.filters.get('ancestor') ?? []) {
      const ids = new Set<string>();
      try {
        ids.add((await this.d.images.resolve(v)).id);
      } catch {
        // an unknown ancestor matches nothing
      }
      ancestorCache.set(v, ids);
    }
    const match = compileFilters(opts.filters, {
      resolve: (ref) => this.find(ref),
      ancestorImageIds: (ref) => ancestorCache.get(ref) ?? new Set(),
      networksOf: (r) => (this.d.networks ? this.d.networks.networksOf(r) : [r.HostConfig.NetworkMode ?? 'bridge']),
    });
    const showAll = opts.all || opts.filters.has('status') || opts.filters.has('exited') || opts.limit !== undefined;
    let list = [...this.recs.values()]
      .filter((r) => showAll || r.State.Running || r.State.Paused || r.State.Restarting)
      .filter(match)
      .sort((a, b) => (a.Created < b.Created ? 1 : a.Created > b.Created ? -1 : 0));
    if (opts.limit !== undefined) list = list.slice(0, opts.limit);
    if (!opts.size) return list.map((r) => summaryView(r, this.networkView(r)));
    return Promise.all(list.map(async (r) => summaryView(r, this.networkView(r), await this.sizes(r))));
  }

  async inspect(ref: string, size: boolean, _version: string): Promise<unknown> {
    const rec = this.find(ref);
    return inspectView(rec, this.networkView(rec), this.d.execs?.idsOf(rec.Id) ?? [], size ? await this.sizes(rec) : undefined);
  }

  // ---- start -----------------------------------------------------------------------------------

  async start(ref: string): Promise<'started' | 'already'> {
    const rec = this.find(ref);
    return this.lock.run(rec.Id, async () => {
      if (rec.State.Paused) throw conflict('cannot start a paused container, try unpause instead');
      if (rec.State.Running) return 'already';
      if (rec.Internal.removing) throw conflict('container is marked for removal and cannot be started');
      rec.Internal.stoppedByUser = false;
      await this.startLocked(rec);
      return 'started';
    });
  }

  private hub(id: string): OutputHub {
    let h = this.hubs.get(id);
    if (!h) {
      h = new OutputHub();
      this.hubs.set(id, h);
    }
    return h;
  }

  private async startLocked(rec: ContainerRecord): Promise<void> {
    const hub = this.hub(rec.Id);
    hub.reset();
    const logConfig = rec.HostConfig.LogConfig!;
    const driver = createLogDriver(logConfig.Type ?? "json-file", {
      containerId: rec.Id,
      dir: join(this.d.containersDir, rec.Id),
      options: logConfig.Config ?? {},
      attrs: logAttrs(rec),
    });
    this.drivers.get(rec.Id)?.close().catch(() => undefined);
    this.drivers.set(rec.Id, driver);
    const logging = driver.attach({ stdout: hub.logStdout, stderr: rec.Config.Tty ? null : hub.logStderr });
    let task: RunningTask;
    try {
      task = await this.d.launcher.launch(rec, hub, (ref) => this.find(ref));
    } catch (err) {
      hub.logStdout.end();
      hub.logStderr.end();
      hub.endRun();
      await logging.catch(() => undefined);
      rec.State = { ...rec.State, Status: rec.State.FinishedAt === ZERO_TIME && rec.State.StartedAt === ZERO_TIME ? 'created' : 'exited', Running: false, Restarting: false, Pid: 0, ExitCode: startFailureExitCode((err as Error).message), Error: (err as Error).message };
      this.persist(rec);
      // As dockerd: an AutoRemove container that fails to start is removed (`docker run --rm`
      // waits for condition=removed and would otherwise hang).
      if (rec.HostConfig.AutoRemove) await this.removeLocked(rec, true).catch((e) => this.d.log.warn(`auto-remove after a failed start: ${(e as Error).message}`, { id: rec.Id }));
      throw err;
    }
    this.tasks.set(rec.Id, task);
    // Input an attached client sent before the start (docker run -i) flows now.
    const relay = this.stdinRelays.get(rec.Id);
    if (relay && !relay.connected && !relay.destroyed && task.stdin) relay.connect(task.stdin);
    rec.State = { ...rec.State, Status: 'running', Running: true, Paused: false, Restarting: false, OOMKilled: false, Dead: false, Pid: task.pid, ExitCode: 0, Error: '', StartedAt: nowIso() };
    this.d.runs?.emit(rec, 'started');
    this.persist(rec);
    this.event(rec, 'start');
    this.d.log.debug('container started', { id: rec.Id, pid: task.pid });
    const startedAt = Date.now();
    void task.exited.then((exit) => this.onExit(rec, task, exit, logging, startedAt));
  }

  // ---- exit, restart, auto-remove --------------------------------------------------------------

  private async onExit(rec: ContainerRecord, task: RunningTask, exit: { status: number; at: string; oom: boolean }, logging: Promise<void>, startedAt: number): Promise<void> {
    await this.lock.run(rec.Id, async () => {
      // Output drains before the state says exited: `logs` right after `wait` must see all of it.
      await Promise.race([task.ioDone, new Promise((r) => setTimeout(r, 2000))]);
      // The driver finishes writing what the streams delivered before it is closed.
      await Promise.race([logging.catch(() => undefined), new Promise((r) => setTimeout(r, 5000))]);
      await this.drivers.get(rec.Id)?.close().catch(() => undefined);
      await this.d.launcher.cleanup(rec, task).catch((err) => this.d.log.warn(`cleanup after exit: ${(err as Error).message}`, { id: rec.Id }));
      this.tasks.delete(rec.Id);
      const restart = shouldRestart(rec.HostConfig.RestartPolicy, { exitCode: exit.status, stoppedByUser: rec.Internal.stoppedByUser, restartCount: rec.RestartCount, shuttingDown: this.shuttingDown || this.startupStops.has(rec.Id) });
      rec.State = { ...rec.State, Status: restart ? 'restarting' : 'exited', Running: false, Paused: false, Restarting: restart, OOMKilled: exit.oom, Pid: 0, ExitCode: exit.status, FinishedAt: exit.at };
      this.persist(rec);
      if (exit.oom) this.event(rec, 'oom');
      this.event(rec, 'die', { exitCode: String(exit.status), execDuration: String(Math.floor((Date.now() - startedAt) / 1000)) });
      this.d.runs?.emit(rec, 'stopped');
      this.notify(rec.Id, ['not-running', 'next-exit'], { StatusCode: exit.status, Error: null });
      if (restart) {
        const b = this.backoff.get(rec.Id) ?? { ms: 0 };
        b.ms = nextBackoff(b.ms, Date.now() - startedAt);
        b.timer = setTimeout(() => void this.restartAfterBackoff(rec.Id), b.ms);
        this.backoff.set(rec.Id, b);
      } else if (rec.HostConfig.AutoRemove && !this.shuttingDown) {
        await this.removeLocked(rec, true); // as dockerd: --rm takes the anonymous volumes along
      }
    });
  }

  private async restartAfterBackoff(id: string): Promise<void> {
    const rec = this.recs.get(id);
    if (!rec) return;
    await this.lock.run(id, async () => {
      if (!rec.State.Restarting || rec.Internal.stoppedByUser || this.shuttingDown) return;
      rec.RestartCount++;
      try {
        await this.startLocked(rec);
      } catch (err) {
        this.d.log.error(`restart failed: ${(err as Error).message}`, { id });
        rec.State = { ...rec.State, Status: 'exited', Restarting: false };
        this.persist(rec);
      }
    }).catch(() => undefined);
  }

  private notify(id: string, conditions: WaitCondition[], result: { StatusCode: number; Error: { Message: string } | null }): void {
    const list = this.waiters.get(id);
    if (!list) return;
    const keep = list.filter((w) => {
      if (!conditions.includes(w.condition)) return true;
      w.resolve(result);
      return false;
    });
    if (keep.length) this.waiters.set(id, keep);
    else this.waiters.delete(id);
  }

  async wait(ref: string, condition: WaitCondition) {
    const rec = this.find(ref);
    return () => new Promise<{ StatusCode: number; Error: { Message: string } | null }>((resolve) => {
      if (condition === 'not-running' && !rec.State.Running && !rec.State.Restarting) {
        resolve({ StatusCode: rec.State.ExitCode, Error: null });
        return;
      }
      const list = this.waiters.get(rec.Id) ?? [];
      list.push({ condition, resolve });
      this.waiters.set(rec.Id, list);
    });
  }

  // ---- stop / kill / restart / pause -----------------------------------------------------------

  private stopSignal(rec: ContainerRecord, override?: string): number {
    return parseSignal(override || rec.Config.StopSignal || 'SIGTERM');
  }

  /** Resolves once the next exit of the container has been recorded (state, restart decision). */
  private exitProcessed(id: string): Promise<void> {
    return new Promise<void>((resolve) => {
      const list = this.waiters.get(id) ?? [];
      list.push({ condition: 'next-exit', resolve: () => resolve() });
      this.waiters.set(id, list);
    });
  }

  /** Signals the task, waits up to `timeoutS` for the exit to be processed, then SIGKILLs. */
  private async stopTask(rec: ContainerRecord, signal: number, timeoutS: number): Promise<void> {
    const task = this.tasks.get(rec.Id);
    if (!task) return;
    const processed = new Promise<void>((resolve) => {
      const list = this.waiters.get(rec.Id) ?? [];
      list.push({ condition: 'next-exit', resolve: () => resolve() });
      this.waiters.set(rec.Id, list);
    });
    if (rec.State.Paused) await this.d.client.tasks.resume(rec.Id).catch(() => undefined);
    if (timeoutS !== 0) {
      this.event(rec, 'kill', { signal: String(signal) });
      await this.d.client.tasks.kill(rec.Id, signal, { all: false }).catch((err) => this.d.log.debug(`stop signal: ${(err as Error).message}`));
      const graceful = await Promise.race([task.exited.then(() => true), new Promise<boolean>((r) => (timeoutS < 0 ? undefined : setTimeout(() => r(false), timeoutS * 1000)))]);
      if (graceful) {
        await processed;
        return;
      }
    }
    this.event(rec, 'kill', { signal: '9' });
    await this.d.client.tasks.kill(rec.Id, 9, { all: true }).catch((err) => this.d.log.debug(`kill: ${(err as Error).message}`));
    await processed;
  }

  async stop(ref: string, opts: { timeout?: number; signal?: string }): Promise<'stopped' | 'already'> {
    const rec = this.find(ref);
    const signal = this.stopSignal(rec, opts.signal);
    const timeout = opts.timeout ?? rec.Config.StopTimeout ?? DEFAULT_STOP_TIMEOUT_S;
    this.cancelRestart(rec);
    if (!rec.State.Running) {
      if (rec.State.Restarting) {
        rec.State = { ...rec.State, Status: 'exited', Restarting: false };
        this.persist(rec);
        return 'stopped';
      }
      return 'already';
    }
    rec.Internal.stoppedByUser = true;
    await this.stopTask(rec, signal, timeout);
    this.event(rec, 'stop');
    return 'stopped';
  }

  private cancelRestart(rec: ContainerRecord): void {
    const b = this.backoff.get(rec.Id);
    if (b?.timer) clearTimeout(b.timer);
    this.backoff.delete(rec.Id);
  }

  async restart(ref: string, opts: { timeout?: number; signal?: string }): Promise<void> {
    const rec = this.find(ref);
    await this.stop(ref, opts);
    await this.lock.run(rec.Id, async () => {
      if (rec.State.Running) return;
      rec.Internal.stoppedByUser = false;
      await this.startLocked(rec);
    });
    this.event(rec, 'restart');
  }

  async kill(ref: string, signal: string | undefined): Promise<void> {
    const rec = this.find(ref);
    const sig = parseSignal(signal || 'SIGKILL');
    if (!rec.State.Running) throw conflict(`Container ${rec.Id} is not running`);
    // dockerd waits for a SIGKILL to take effect (state recorded) before answering.
    const processed = sig === 9 ? this.exitProcessed(rec.Id) : undefined;
    this.event(rec, 'kill', { signal: String(sig) });
    await this.d.client.tasks.kill(rec.Id, sig, { all: sig === 9 });
    if (processed) await Promise.race([processed, new Promise((r) => setTimeout(r, 10_000))]);
  }

  async pause(ref: string): Promise<void> {
    const rec = this.find(ref);
    await this.lock.run(rec.Id, async () => {
      if (!rec.State.Running) throw conflict(`Container ${rec.Id} is not running`);
      if (rec.State.Paused) throw conflict(`Container ${rec.Id} is already paused`);
      await this.d.client.tasks.pause(rec.Id);
      rec.State = { ...rec.State, Status: 'paused', Paused: true };
      this.persist(rec);
      this.event(rec, 'pause');
    });
  }

  async unpause(ref: string): Promise<void> {
    const rec = this.find(ref);
    await this.lock.run(rec.Id, async () => {
      if (!rec.State.Paused) throw conflict(`Container ${rec.Id} is not paused`);
      await this.d.client.tasks.resume(rec.Id);
      rec.State = { ...rec.State, Status: 'running', Paused: false };
      this.persist(rec);
      this.event(rec, 'unpause');
    });
  }

  // ---- facts for images: commit, export, image removal ---------------------------------------

  snapshotOf(ref: string): ContainerSnapshot {
    const rec = this.find(ref);
    return { id: rec.Id, imageId: rec.Image, snapshotKey: rec.Internal.snapshotKey, snapshotter: rec.Internal.snapshotter, running: rec.State.Running, paused: rec.State.Paused, config: rec.Config };
  }

  imageUsers(): Array<{ id: string; image: string; running: boolean }> {
    return [...this.recs.values()].map((r) => ({ id: r.Id, image: r.Image, running: r.State.Running || r.State.Restarting }));
  }

  /** Runs fn with the task frozen (commit's pause) unless it is not running or paused already. */
  async frozen<T>(ref: string, fn: () => Promise<T>): Promise<T> {
    const rec = this.find(ref);
    return this.lock.run(rec.Id, async () => {
      const freeze = rec.State.Running && !rec.State.Paused && (await this.d.client.tasks.pause(rec.Id).then(() => true, () => false));
      try {
        return await fn();
      } finally {
        if (freeze) await this.d.client.tasks.resume(rec.Id).catch((err) => this.d.log.warn(`resume after commit: ${(err as Error).message}`, { id: rec.Id }));
      }
    });
  }

  /**
   * fn under the container's lock (it cannot start, stop or be removed meanwhile); with freeze, a
   * running container's processes stay frozen during it (the archive endpoints writing into it).
   */
  async exclusive<T>(ref: string, freeze: boolean, fn: (rec: ContainerRecord) => Promise<T>): Promise<T> {
    const rec = this.find(ref);
    return this.lock.run(rec.Id, async () => {
      if (!this.recs.has(rec.Id)) throw notFound(`No such container: ${ref}`);
      const frozen = freeze && rec.State.Running && !rec.State.Paused && (await this.d.client.tasks.pause(rec.Id).then(() => true, () => false));
      try {
        return await fn(rec);
      } finally {
        if (frozen) await this.d.client.tasks.resume(rec.Id).catch((err) => this.d.log.warn(`resume after archive: ${(err as Error).message}`, { id: rec.Id }));
      }
    });
  }

  /** Every container and the volumes its record references (volume in-use checks, prune, df). */
  // ---- remove / rename / prune -----------------------------------------------------------------

  async remove(ref: string, opts: { force: boolean; volumes: boolean; link: boolean }): Promise<void> {
    const rec = this.find(ref);
    if (opts.link) throw invalidParameter('links are not supported');
    if ((rec.State.Running || rec.State.Restarting) && !opts.force) {
      const name = rec.Name.slice(1);
      if (rec.State.Paused) throw conflict(`cannot remove container "${name}": container is paused and must be unpaused first`);
      throw conflict(`cannot remove container "${name}": container is ${rec.State.Restarting ? 'restarting' : 'running'}: stop the container before removing or force remove`);
    }
    this.cancelRestart(rec);
    if (rec.State.Running) {
      rec.Internal.stoppedByUser = true;
      await this.stopTask(rec, 9, 0);
    }
    await this.lock.run(rec.Id, () => this.removeLocked(rec, opts.volumes));
  }

  /** volumes: also remove the container's anonymous volumes (rm -v, AutoRemove). */
  private async removeLocked(rec: ContainerRecord, volumes: boolean): Promise<void> {
    if (!this.recs.has(rec.Id)) return;
    rec.Internal.removing = true;
    rec.State = { ...rec.State, Status: 'removing' };
    this.persist(rec);
    await this.drivers.get(rec.Id)?.close().catch(() => undefined);
    this.drivers.delete(rec.Id);
    await this.d.launcher.forget(rec.Id).catch(() => undefined);
    await this.d.rootfs.remove(rec.Internal.snapshotKey);
    await rm(join(this.d.containersDir, rec.Id), { recursive: true, force: true });
    this.d.store.delete(rec.Id);
    await this.d.networks?.containerRemoved(rec.Id).catch((err) => this.d.log.warn(`releasing networks: ${(err as Error).message}`, { id: rec.Id }));
    this.recs.delete(rec.Id);
    await this.d.volumes?.release(rec, volumes).catch((err) => this.d.log.warn(`releasing volumes: ${(err as Error).message}`, { id: rec.Id }));
    this.hubs.delete(rec.Id);
    this.stdinRelays.get(rec.Id)?.destroy();
    this.stdinRelays.delete(rec.Id);
    this.notify(rec.Id, ['not-running', 'next-exit', 'removed'], { StatusCode: rec.State.ExitCode, Error: null });
    this.event(rec, 'destroy');
  }

  async rename(ref: string, newName: string): Promise<void> {
    const rec = this.find(ref);
    const name = normalizeName(newName);
    if (name === rec.Name) throw invalidParameter(`Renaming a container with the same name as its current name`);
    await this.lock.run(rec.Id, async () => {
      const oldName = rec.Name;
      this.d.store.rename(rec.Id, name);
      rec.Name = name;
      this.event(rec, 'rename', { oldName });
    });
  }

  async prune(filters: Map<string, string[]>): Promise<{ ContainersDeleted: string[] | null; SpaceReclaimed: number }> {
    const match = compilePruneFilters(filters);
    if (this.pruning) throw conflict('a prune operation is already running');
    this.pruning = true;
    try {
      // dockerd leaves the list nil (JSON null) when nothing was removed.
      let deleted: string[] | null = null;
      let reclaimed = 0;
      for (const rec of [...this.recs.values()]) {
        if (rec.State.Running || rec.State.Paused || rec.State.Restarting || rec.Internal.removing) continue;
        if (!match(rec)) continue;
        const size = await this.rwSize(rec).catch(() => 0);
        try {
          await this.lock.run(rec.Id, () => this.removeLocked(rec, false));
        } catch (err) {
          this.d.log.warn(`failed to prune container: ${(err as Error).message}`, { id: rec.Id });
          continue;
        }
        reclaimed += size;
        (deleted ??= []).push(rec.Id);
      }
      this.d.events?.publish({ Type: 'container', Action: 'prune', Actor: { ID: '', Attributes: { reclaimed: String(reclaimed) } } });
      return { ContainersDeleted: deleted, SpaceReclaimed: reclaimed };
    } finally {
      this.pruning = false;
    }
  }

  /** Bytes in the container's writable layer (what `size=1` and prune report). */
  private async rwSize(rec: ContainerRecord): Promise<number> {
    return Number((await this.d.client.snapshots.usage(rec.Internal.snapshotKey, { snapshotter: rec.Internal.snapshotter })).size);
  }

  /** SizeRw and SizeRootFs (writable layer plus the image) for inspect and list with size=1. */
  private async sizes(rec: ContainerRecord): Promise<{ rw: number; rootFs: number }> {
    const rw = await this.rwSize(rec).catch(() => 0);
    const image = await this.d.images.resolve(rec.Image).catch(() => undefined);
    return { rw, rootFs: rw + (image?.size ?? 0) };
  }

  // ---- logs, top, update, resize ---------------------------------------------------------------

  async logs(ref: string, req: LogsRequest, signal: AbortSignal): Promise<{ tty: boolean; lines: AsyncIterable<LogChunk> }> {
    const rec = this.find(ref);
    const kind = rec.HostConfig.LogConfig?.Type ?? 'json-file';
    let driver = this.drivers.get(rec.Id);
    let owned = false;
    if (!driver) {
      driver = createLogDriver(kind, { containerId: rec.Id, dir: join(this.d.containersDir, rec.Id), options: rec.HostConfig.LogConfig?.Config ?? {}, attrs: {} });
      owned = true;
    }
    const follow = req.follow && rec.State.Running;
    const src = driver.read({ follow, stdout: req.stdout, stderr: req.stderr, tail: req.tail, ...(req.since !== undefined ? { since: req.since } : {}), ...(req.until !== undefined ? { until: req.until } : {}) }, signal);
    async function* lines(): AsyncIterable<LogChunk> {
      try {
        for await (const m of src) yield { stream: m.stream, line: m.line, timeNano: m.timeNano };
      } finally {
        if (owned) await driver!.close().catch(() => undefined);
      }
    }
    return { tty: rec.Config.Tty === true, lines: lines() };
  }

  async top(ref: string, psArgs: string): Promise<{ Titles: string[]; Processes: string[][] }> {
    const rec = this.find(ref);
    if (!rec.State.Running) throw conflict(`Container ${rec.Id} is not running`);
    const pids = (await this.d.client.tasks.listPids(rec.Id)).map((p) => p.pid);
    return this.d.launcher.top(pids, psArgs);
  }

  async update(ref: string, body: Record<string, unknown>): Promise<{ Warnings: string[] }> {
    const rec = this.find(ref);
    return this.lock.run(rec.Id, async () => {
      const warnings = await this.d.launcher.update(rec, body);
      this.persist(rec);
      return { Warnings: warnings };
    });
  }

  async resize(ref: string, height: number, width: number): Promise<void> {
    const rec = this.find(ref);
    if (!rec.State.Running) throw conflict(`Container ${rec.Id} is not running`);
    await this.d.client.tasks.resizePty(rec.Id, { width, height });
    this.event(rec, 'resize', { height: String(height), width: String(width) });
  }

  // ---- attach ----------------------------------------------------------------------------------

  async attach(ref: string, opts: AttachOptions): Promise<AttachSession> {
    const rec = this.find(ref);
    const hub = this.hub(rec.Id);
    this.event(rec, 'attach');
    let history: AsyncIterable<LogChunk> | undefined;
    if (opts.logs) {
      history = (await this.logs(rec.Id, { follow: false, stdout: opts.stdout, stderr: opts.stderr, timestamps: false, tail: -1 }, new AbortController().signal)).lines;
    }
    return {
      tty: rec.Config.Tty === true,
      history,
      running: () => rec.State.Running,
      subscribe: (fn) => hub.subscribe(fn),
      stdin: opts.stdin && rec.Config.OpenStdin ? () => this.stdinRelay(rec) : undefined,
      // StdinOnce: the first attached client's end of input is the process's end of input (after
      // every byte it sent, even when it all came before the start: `echo hi | docker run -i`).
      closeStdin: async () => {
        if (!rec.Config.StdinOnce || rec.Config.Tty) return false;
        const relay = this.stdinRelay(rec);
        if (relay && !relay.writableEnded) relay.end();
        return true;
      },
    };
  }

  /** The relay of the current (or next) run's stdin; undefined once that input was closed. */
  private stdinRelay(rec: ContainerRecord): StdinRelay | undefined {
    const task = this.tasks.get(rec.Id);
    let relay = this.stdinRelays.get(rec.Id);
    if (relay && (relay.destroyed || (relay.connected && relay.connectedTo !== task?.stdin))) {
      relay.destroy(); // it belonged to an earlier run
      relay = undefined;
    }
    if (!relay) {
      relay = new StdinRelay(async (target) => {
        target.end();
        if (this.tasks.get(rec.Id)?.stdin === target) await this.d.client.tasks.closeIO(rec.Id).catch(() => undefined);
      });
      relay.on('error', () => undefined);
      this.stdinRelays.set(rec.Id, relay);
    }
    if (!relay.connected && task?.stdin && rec.State.Running) relay.connect(task.stdin);
    return relay.writableEnded ? undefined : relay;
  }

  // ---- daemon start-up and shutdown ------------------------------------------------------------

  /**
   * Brings the records and containerd into agreement after a (re)start of the daemon: removes
   * containerd containers the store does not know, finishes interrupted removals, re-attaches to
   * tasks left running (and, without live-restore, stops them as the shutdown would have), records
   * exits that happened while the daemon was down, and starts containers whose restart policy asks.
   */
  async restore(liveRestore: boolean): Promise<void> {
    const inSupervisor = await this.removeUnknown();
    const toStop: ContainerRecord[] = [];
    for (const rec of [...this.recs.values()]) {
      if (rec.Internal.removing) {
        await this.lock.run(rec.Id, () => this.removeLocked(rec, false)).catch((err) => this.d.log.error(`finishing removal: ${(err as Error).message}`));
        continue;
      }
      if (!rec.State.Running && !rec.State.Restarting) {
        // A crash between creating the task and recording the start leaves pieces behind.
        if (inSupervisor.has(rec.Id) || rec.Internal.netnsPath) {
          await this.d.launcher.forget(rec.Id).catch(() => undefined);
          await this.d.launcher.cleanup(rec).catch(() => undefined);
          this.persist(rec);
        }
        continue;
      }
      // Re-attach even without live-restore: output written while the daemon was down reaches the
      // log, and the stop below goes through the normal exit path (state, clean-up, AutoRemove).
      const task = rec.State.Running ? await this.d.launcher.reattach(rec, this.hub(rec.Id)).catch(() => undefined) : undefined;
      if (task) {
        this.adopt(rec, task);
        if (liveRestore) this.d.log.info('re-attached to running container', { id: rec.Id });
        else toStop.push(rec);
        continue;
      }
      // The task is gone (or exited while the daemon was down): record the exit and clean up.
      const exitCode = await this.d.launcher.forget(rec.Id).catch(() => undefined);
      await this.d.launcher.cleanup(rec).catch((err) => this.d.log.warn(`cleanup at start-up: ${(err as Error).message}`, { id: rec.Id }));
      rec.State = { ...rec.State, Status: 'exited', Running: false, Paused: false, Restarting: false, Pid: 0, ExitCode: exitCode ?? (rec.State.Running ? 255 : rec.State.ExitCode), FinishedAt: rec.State.FinishedAt === ZERO_TIME || rec.State.Running ? nowIso() : rec.State.FinishedAt };
      this.persist(rec);
      if (rec.HostConfig.AutoRemove) await this.lock.run(rec.Id, () => this.removeLocked(rec, true)).catch((err) => this.d.log.error(`auto-remove at start-up: ${(err as Error).message}`, { id: rec.Id }));
    }
    // Without live-restore, containers left running by a crashed daemon get the stop the shutdown
    // would have given them; their restart policy is applied below like everyone else's.
    // (-1, "wait without a limit", would hang the start-up: the default stop timeout instead.)
    const shutdownTimeoutS = this.d.config()['shutdown-timeout'];
    const timeoutS = shutdownTimeoutS < 0 ? DEFAULT_STOP_TIMEOUT_S : shutdownTimeoutS;
    await Promise.all(toStop.map(async (rec) => {
      this.startupStops.add(rec.Id);
      try {
        const own = rec.Config.StopTimeout;
        await this.stopTask(rec, this.stopSignal(rec), own !== undefined && own >= 0 ? own : timeoutS);
      } catch (err) {
        this.d.log.warn(`stopping at start-up: ${(err as Error).message}`, { id: rec.Id });
      } finally {
        this.startupStops.delete(rec.Id);
      }
    }));
    await Promise.all([...this.recs.values()].filter((rec) => restartAtStartup(rec.HostConfig.RestartPolicy, { startedBefore: rec.State.StartedAt !== ZERO_TIME, running: rec.State.Running, exitCode: rec.State.ExitCode, stoppedByUser: rec.Internal.stoppedByUser, restartCount: rec.RestartCount })).map((rec) => this.lock.run(rec.Id, async () => {
      if (rec.State.Running || !this.recs.has(rec.Id)) return;
      // As dockerd: a start by the daemon is a fresh start (count reset, no longer "stopped by user").
      rec.RestartCount = 0;
      rec.Internal.stoppedByUser = false;
      await this.startLocked(rec);
    }).catch((err) => this.d.log.error(`restart at start-up failed: ${(err as Error).message}`, { id: rec.Id }))));
  }

  /** Watches a task that survived a daemon restart as if this daemon had started it. */
  private adopt(rec: ContainerRecord, task: RunningTask): void {
    this.tasks.set(rec.Id, task);
    const logConfig = rec.HostConfig.LogConfig!;
    const driver = createLogDriver(logConfig.Type ?? 'json-file', { containerId: rec.Id, dir: join(this.d.containersDir, rec.Id), options: logConfig.Config ?? {}, attrs: logAttrs(rec) });
    this.drivers.set(rec.Id, driver);
    const hub = this.hub(rec.Id);
    const logging = driver.attach({ stdout: hub.logStdout, stderr: rec.Config.Tty ? null : hub.logStderr });
    void task.exited.then((exit) => this.onExit(rec, task, exit, logging, Date.now()));
    this.d.runs?.emit(rec, 'started');
  }

  /** Containers in containerd's namespace that the store does not know, with their tasks and snapshots. */
  private async removeUnknown(): Promise<Set<string>> {
    const ownSnapshots = new Set([...this.recs.values()].map((r) => r.Internal.snapshotKey));
    const listed = await this.d.client.containers.list().catch(() => []);
    for (const c of listed) {
      if (this.recs.has(c.id)) continue;
      this.d.log.info('removing a containerd container the store does not know', { id: c.id });
      await this.d.launcher.forget(c.id).catch((err) => this.d.log.warn(`removing unknown container: ${(err as Error).message}`, { id: c.id }));
      if (c.snapshot_key && !ownSnapshots.has(c.snapshot_key)) {
        await this.d.client.snapshots.remove(c.snapshot_key, { snapshotter: c.snapshotter }).catch((err) => {
          if (!isNotFound(err)) this.d.log.warn(`removing unknown snapshot: ${(err as Error).message}`, { id: c.id });
        });
      }
    }
    await this.d.launcher.removeStaleRuntimeDirs(new Set(this.recs.keys()));
    return new Set(listed.map((c) => c.id));
  }

  /** Without live-restore, running containers stop within the shutdown timeout. */
  async shutdown(liveRestore: boolean, timeoutS: number): Promise<void> {
    this.shuttingDown = true;
    for (const b of this.backoff.values()) if (b.timer) clearTimeout(b.timer);
    if (liveRestore) {
      // Tasks keep running; stop watching them and flush what was read to the logs (the rest of
      // their output waits in the FIFOs for the next daemon).
      await Promise.all([...this.tasks.entries()].map(async ([id, t]) => {
        t.detach();
        this.hubs.get(id)?.release();
        await this.drivers.get(id)?.close().catch(() => undefined);
      }));
      return;
    }
    await Promise.all([...this.recs.values()].filter((r) => r.State.Running).map((r) => {
      const t = r.Config.StopTimeout ?? timeoutS;
      return this.stopTask(r, this.stopSignal(r), t).catch((err) => this.d.log.warn(`stopping ${r.Id}: ${(err as Error).message}`));
    }));
  }
}

/** The exit code dockerd records when a start fails: 127 command not found, 126 not executable, else 128. */
function startFailureExitCode(message: string): number {
  const m = message.toLowerCase();
  if (m.includes('executable file not found') || m.includes('no such file or directory') || m.includes('not a directory')) return 127;
  if (m.includes('permission denied')) return 126;
  return 128;
}

/** The container facts the log drivers' labels/env/tag options draw on. */
function logAttrs(rec: ContainerRecord): Record<string, string> {
  return { name: rec.Name.slice(1), image: rec.ImageRef, imageId: rec.Image, ...Object.fromEntries(Object.entries(rec.Config.Labels ?? {}).map(([k, v]) => [`label:${k}`, v])), ...Object.fromEntries((rec.Config.Env ?? []).map((e) => { const i = e.indexOf('='); return [`env:${i < 0 ? e : e.slice(0, i)}`, i < 0 ? '' : e.slice(i + 1)]; })) };
}

