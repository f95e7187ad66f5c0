// The containers backend the routes call: records in the store, filesystems in the snapshotter,
// tasks in containerd. This class holds no logic of its own; it resolves the container a request
// names (waiting while a daemon restart is still reconciling that one container) and hands the work
// to the part that does it: verify.ts (checks), create.ts, lifecycle.ts (start, exit, stop, kill,
// pause), removal.ts (rm, rename, prune), io.ts (logs, attach, top, resize), queries.ts (list,
// inspect), restore.ts (after a daemon restart), exclusive.ts (the lock lent to commit and archive).
// It builds the collaborators those parts share and hands each part the ones it uses, by name in
// its constructor: the records (records.ts), the runs' state and lock (run/run-state.ts), the log
// drivers (io/log-drivers.ts). Listing and inspecting read the in-memory records and never wait on
// a busy container; state changes on one container run one at a time (its lock).
import { removeLegacyLink } from './create/links.ts';
import type { ContainerSnapshot } from '../../images/container-facts.ts';
import { readOwnCapabilities } from '../../oci/caps.ts';
import { readDaemonHardLimits } from '../../oci/rlimits.ts';
import type { AttachOptions, AttachSession } from '../../types/attach.ts';
import type { ContainerCreateBody, ContainerUpdateBody, WaitCondition } from '../../types/container-api.ts';
import type { ContainerInspectView, ContainerSummaryView } from '../../types/container-views.ts';
import type { JsonText } from '../../util/json-text.ts';
import type { LogChunks, LogsRequest } from '../../types/logs.ts';
import type { ContainerServiceDeps } from './deps.ts';
import { ContainerCreator } from './create/create.ts';
import { ExclusiveAccess } from './exclusive.ts';
import { ensureWritableLayer } from './fs/writable-layer.ts';
import { ContainerIo } from './io/io.ts';
import { LogDrivers } from './io/log-drivers.ts';
import { Lifecycle } from './run/lifecycle.ts';
import { ContainerQueries, type ContainerListOptions } from './queries.ts';
import type { ContainerRecord } from './record.ts';
import { ContainerRecords } from './records.ts';
import { Removal } from './run/removal.ts';
import { Restorer } from './run/restore.ts';
import { RunState } from './run/run-state.ts';
import { ContainerVerifier } from './create/verify.ts';
import type { WaitResult } from './run/waiters.ts';
import type { PlatformSpec } from '../../util/platform-spec.ts';

export type { ContainerExecs, ContainerNetworks, ContainerServiceDeps } from './deps.ts';

export class ContainerService {
  private readonly records: ContainerRecords;
  private readonly runs: RunState;
  private readonly verifier: ContainerVerifier;
  private readonly creator: ContainerCreator;
  private readonly lifecycle: Lifecycle;
  private readonly removal: Removal;
  private readonly io: ContainerIo;
  private readonly queries: ContainerQueries;
  private readonly restorer: Restorer;
  private readonly lent: ExclusiveAccess;

  constructor(private readonly d: ContainerServiceDeps) {
    const records = new ContainerRecords(d);
    const runs = new RunState();
    const logs = new LogDrivers(d);
    this.records = records;
    this.runs = runs;
    this.verifier = verifierFor(d, records, logs);
    this.creator = new ContainerCreator(records, d, this.verifier);
    this.lifecycle = new Lifecycle(records, runs, logs, d, this.verifier);
    this.removal = new Removal(records, runs, logs, d);
    this.io = new ContainerIo(records, runs, logs, d);
    this.queries = new ContainerQueries(records, d);
    this.restorer = new Restorer(records, runs, logs, d, this.lifecycle);
    this.lent = new ExclusiveAccess(records, runs, d);
  }

  // ---- lookups and facts for other services ----------------------------------------------------

  /** Full ID, unique ID prefix, or name with or without the leading slash (never waits). */
  find(ref: string): ContainerRecord {
    return this.records.find(ref);
  }

  /** find(), once a restart's reconciliation of that container is over. */
  ready(ref: string): Promise<ContainerRecord> {
    return this.records.ready(ref);
  }

  readonly counts = (): { total: number; running: number; paused: number; stopped: number } => this.queries.counts();

  /** An event about a container from another module (exec, health, commit); ignored once it is gone. */
  publishEvent(ref: string, action: string, extra: Record<string, string> = {}): void {
    const rec = this.records.byId.get(ref) ?? [...this.records.byId.values()].find((r) => r.Name === `/${ref}`);
    if (rec) this.records.event(rec, action, extra);
  }

  /** Persists a record whose state another module updated in place (health status). */
  saveState(id: string): void {
    const rec = this.records.byId.get(id);
    if (rec && !rec.Internal.removing) this.records.persist(rec);
  }

  snapshotOf(ref: string): Promise<ContainerSnapshot> {
    return this.queries.snapshotOf(this.records.find(ref));
  }

  /** The writable layers create leaves for their first use (fs/writable-layer.ts): one, or those on an image. */
  readonly writableLayer = (rec: ContainerRecord): Promise<void> => ensureWritableLayer(this.d.rootfs, rec).then(() => undefined);
  readonly keepLayersOf = (imageId: string): Promise<void> => this.queries.keepLayersOf(imageId);
  readonly imageUsers = (): Array<{ id: string; image: string; running: boolean }> => this.queries.imageUsers();

  // ---- the API ---------------------------------------------------------------------------------

  create(
    body: ContainerCreateBody,
    name: string | undefined,
    _version: string,
    platform?: PlatformSpec,
  ): Promise<{ Id: string; Warnings: string[] }> {
    return this.creator.create(body, name, platform);
  }

  list(opts: ContainerListOptions & { objects: true }): Promise<ContainerSummaryView[]>;
  list(opts: ContainerListOptions & { size: true }): Promise<ContainerSummaryView[]>;
  list(opts: ContainerListOptions): Promise<Array<ContainerSummaryView | JsonText>>;
  list(opts: ContainerListOptions): Promise<Array<ContainerSummaryView | JsonText>> {
    return this.queries.list(opts);
  }

  async inspect(ref: string, size: boolean, _version: string): Promise<ContainerInspectView> {
    return this.queries.inspect(await this.records.known(ref), size);
  }

  async start(ref: string): Promise<'started' | 'already'> {
    return this.lifecycle.start(await this.ready(ref));
  }

  async stop(ref: string, opts: { timeout?: number; signal?: string }): Promise<'stopped' | 'already'> {
    return this.lifecycle.stop(await this.ready(ref), opts);
  }

  async restart(ref: string, opts: { timeout?: number; signal?: string }): Promise<void> {
    await this.lifecycle.restart(await this.ready(ref), opts);
  }

  async kill(ref: string, signal: string | undefined): Promise<void> {
    await this.lifecycle.kill(await this.ready(ref), signal);
  }

  async pause(ref: string): Promise<void> {
    await this.lifecycle.pause(await this.ready(ref));
  }

  async unpause(ref: string): Promise<void> {
    await this.lifecycle.unpause(await this.ready(ref));
  }

  async wait(ref: string, condition: WaitCondition): Promise<() => Promise<WaitResult>> {
    const rec = await this.ready(ref);
    return () => {
      if (condition === 'not-running' && !rec.State.Running && !rec.State.Restarting) {
        return Promise.resolve({ StatusCode: rec.State.ExitCode, Error: null });
      }
      return this.runs.waiters.next(rec.Id, condition);
    };
  }

  async logs(ref: string, req: LogsRequest, signal: AbortSignal): Promise<{ tty: boolean; lines: LogChunks }> {
    return this.io.logs(await this.ready(ref), req, signal);
  }

  async attach(ref: string, opts: AttachOptions): Promise<AttachSession> {
    return this.io.attach(await this.ready(ref), opts);
  }

  async top(ref: string, psArgs: string): Promise<{ Titles: string[]; Processes: string[][] }> {
    return this.io.top(await this.ready(ref), psArgs);
  }

  async resize(ref: string, height: number, width: number): Promise<void> {
    await this.io.resize(await this.ready(ref), height, width);
  }

  async update(ref: string, body: ContainerUpdateBody): Promise<{ Warnings: string[] }> {
    const rec = await this.ready(ref);
    return this.runs.lock.run(rec.Id, async () => {
      const hostConfig = this.verifier.verifyUpdate(rec, body);
      await this.d.launcher.applyResources(rec, hostConfig);
      rec.HostConfig = hostConfig;
      this.records.persist(rec);
      return { Warnings: [] };
    });
  }

  async remove(ref: string, opts: { force: boolean; volumes: boolean; link: boolean }): Promise<void> {
    if (opts.link) {
      // Only the link goes (`parent/alias` is no container name: resolved before any lookup); the
      // parent's record loses it, nothing else is touched.
      const parent = removeLegacyLink(ref, (r) => this.records.find(r));
      this.records.persist(parent);
      return;
    }
    await this.removal.remove(await this.ready(ref), opts, ref);
  }

  async rename(ref: string, newName: string): Promise<void> {
    await this.removal.rename(await this.ready(ref), newName);
  }

  prune(filters: Map<string, string[]>): Promise<{ ContainersDeleted: string[] | null; SpaceReclaimed: number }> {
    return this.removal.prune(filters);
  }

  // ---- the container's lock for other services (commit, archive) --------------------------------

  /** Runs fn with the task frozen (commit's pause) unless it is not running or paused already. */
  async frozen<T>(ref: string, fn: () => Promise<T>): Promise<T> {
    return this.lent.frozen(await this.ready(ref), fn);
  }

  /**
   * fn under the container's lock (it cannot start, stop or be removed meanwhile); with freeze, a
   * running container's processes stay frozen during it (the archive endpoints writing into it).
   */
  async exclusive<T>(ref: string, freeze: boolean, fn: (rec: ContainerRecord) => Promise<T>): Promise<T> {
    return this.lent.exclusive(await this.ready(ref), ref, freeze, fn);
  }

  // ---- daemon start-up and shutdown ------------------------------------------------------------

  /**
   * Reconciles the records with containerd after a (re)start, in the background: returns at once
   * with a promise of the end (it never rejects). Requests on a container wait for that container.
   */
  restore(liveRestore: boolean): Promise<void> {
    return this.restorer.restore(liveRestore);
  }

  /** Without live-restore, running containers stop within the shutdown timeout. */
  async shutdown(liveRestore: boolean, timeoutS: number): Promise<void> {
    this.runs.shuttingDown = true;
    await this.restorer.whenDone(); // no start-up restart may race the shutdown's stops
    await this.lifecycle.shutdown(liveRestore, timeoutS);
  }
}

/** The one check of create, update and start requests, with what it reads of the daemon. */
function verifierFor(d: ContainerServiceDeps, records: ContainerRecords, logs: LogDrivers): ContainerVerifier {
  return new ContainerVerifier({
    images: d.images,
    runtimes: d.runtimes,
    config: d.config,
    shmSize: d.shmSize,
    limits: { hard: readDaemonHardLimits, canRaise: readOwnCapabilities().includes('CAP_SYS_RESOURCE') },
    ...(d.networks ? { networks: d.networks } : {}),
    ...(d.volumes ? { volumes: d.volumes } : {}),
    ...(d.cdi ? { cdi: d.cdi } : {}),
    userns: d.rootfs.remapping,
    noCgroups: !d.launcher.killsAll,
    find: (ref) => records.find(ref),
    ...(d.logPlugins ? { logPlugin: (name: string) => logs.plugin(name) } : {}),
  });
}
