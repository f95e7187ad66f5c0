// The state the parts of the containers service share (records, running tasks, output hubs, log
// drivers, waiters, the per-container lock) and the small helpers every part uses: lookup by
// reference, write-through persistence, events, log driver set-up. One instance per daemon, built by
// ContainerService (service.ts) and handed to each part.
import { join } from 'node:path';
import type { DaemonConfig } from '../../config/daemon-config.ts';
import { EngineError, invalidParameter, notFound } from '../../errors.ts';
import { containerActor } from '../../events/actors.ts';
import type { EventPublisher } from '../../events/bus.ts';
import type { ImageStore } from '../../images/image-store.ts';
import { attachInput, createLogDriver, isBuiltinLogDriver, type LogPluginInfo, type LogPluginTransport } from '../../logging/index.ts';
import type { LogDriver, LogDriverOptions } from '../../logging/types.ts';
import type { ContainerNetworks } from '../../network/container-contract.ts';
import type { CdiRegistry } from '../../oci/cdi.ts';
import { parseSignal } from '../../oci/signals.ts';
import type { ContainerStore } from '../../store/containers.ts';
import type { SupervisorClient } from '../../supervisor/client.ts';
import type { Logger } from '../../util/log.ts';
import { KeyedMutex } from '../../util/mutex.ts';
import type { RuntimeRegistry } from '../runtimes.ts';
import type { ContainerVolumes } from '../volumes/contract.ts';
import { OutputHub } from './io/output-hub.ts';
import type { ContainerRecord } from './record.ts';
import type { RootfsManager } from './fs/rootfs.ts';
import type { ContainerRunEvents } from './run-events.ts';
import type { StdinRelay } from './io/stdin-relay.ts';
import type { RunningTask } from './run/running-task.ts';
import type { TaskLauncher } from './run/task-launcher.ts';
import { ExitWaiters } from './run/waiters.ts';
import { recordText } from './record-text.ts';

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
  volumes?: Pick<ContainerVolumes, 'check' | 'prepare' | 'release'>;
  /** CDI devices (DeviceRequests with Driver "cdi"); without it such requests are refused. */
  cdi?: Pick<CdiRegistry, 'resolve'>;
  /** Where runs are announced (health checks and exec clean-up follow them). */
  runs?: ContainerRunEvents;
  /** Inspect's ExecIDs: the exec registry (daemon/exec/registry.ts); none without it. */
  execs?: ContainerExecs;
  /** Log-driver plugins by name (discovered or managed, implementing LogDriver); none without it. */
  logPlugins?: (name: string) => Promise<LogPluginTransport>;
  /** Where the FIFOs to log plugins are made (dockerd: /run/docker/logging). */
  logFifoDir?: string;
}

/** What inspect needs from the exec instances. */
export interface ContainerExecs {
  idsOf(containerId: string): string[];
}

export type { ContainerNetworks };

export const DEFAULT_STOP_TIMEOUT_S = 10;

export class ContainerContext {
  readonly recs = new Map<string, ContainerRecord>();
  readonly tasks = new Map<string, RunningTask>();
  readonly hubs = new Map<string, OutputHub>();
  readonly stdinRelays = new Map<string, StdinRelay>();
  readonly drivers = new Map<string, LogDriver>();
  readonly waiters = new ExitWaiters();
  /** Pending restarts of containers whose policy asked for one (restart-policy backoff). */
  readonly backoff = new Map<string, { ms: number; timer?: NodeJS.Timeout }>();
  readonly lock = new KeyedMutex();
  /** Names taken by creates that have not stored their record yet. */
  readonly reservedNames = new Map<string, string>();
  /** Containers still being reconciled after a daemon restart (restore.ts); requests on them wait. */
  readonly reconciling = new Map<string, Promise<void>>();
  /**
   * Containers whose state after a daemon restart is not known yet (restore.ts: until containerd
   * has been asked); inspect and list wait for these only. A subset of `reconciling`: a container
   * being stopped at start-up is known (running, with its pid) but still reconciling.
   */
  readonly unknownState = new Map<string, Promise<void>>();
  /** Containers being stopped at start-up (left running by a crashed daemon, no live-restore). */
  readonly startupStops = new Set<string>();
  shuttingDown = false;

  constructor(readonly d: ContainerServiceDeps) {
    for (const r of d.store.list()) this.recs.set(r.Id, structuredClone(r) as ContainerRecord);
  }

  /**
   * Full ID, unique ID prefix, or name with or without the leading slash. Names and prefixes go
   * through the store's indexes (the name column, a range of the primary key), not a scan of every
   * record: `docker rm` of 2 000 containers by short ID or name was quadratic. A miss is checked by
   * a scan (a container being removed has left the store but not yet the map).
   */
  find(ref: string): ContainerRecord {
    const exact = this.recs.get(ref);
    if (exact) return exact;
    const name = ref.startsWith('/') ? ref : `/${ref}`;
    const namedId = this.d.store.idByName(name);
    const byName = namedId === undefined ? undefined : this.recs.get(namedId);
    if (byName?.Name === name) return byName;
    const hex = /^[a-f0-9]+$/.test(ref);
    if (hex) {
      const hits = this.d.store.idsByPrefix(ref).flatMap((id) => this.recs.get(id) ?? []);
      if (hits.length === 1) return hits[0]!;
      if (hits.length > 1) throw invalidParameter(`multiple IDs found with provided prefix: ${ref}`);
    }
    for (const r of this.recs.values()) if (r.Name === name) return r;
    if (hex) {
      const hits = [...this.recs.values()].filter((r) => r.Id.startsWith(ref));
      if (hits.length === 1) return hits[0]!;
      if (hits.length > 1) throw invalidParameter(`multiple IDs found with provided prefix: ${ref}`);
    }
    throw notFound(`No such container: ${ref}`);
  }

  /** The ID of the container holding (or about to hold: a create in progress) a full name such as '/web'. */
  nameHolder(name: string): string | undefined {
    const reserved = this.reservedNames.get(name);
    if (reserved) return reserved;
    const stored = this.d.store.idByName(name);
    return stored !== undefined && this.recs.get(stored)?.Name === name ? stored : undefined;
  }

  /**
   * find(), once the container's reconciliation after a daemon restart is over (at once otherwise):
   * what a request on one container uses, so it sees the container's real state.
   */
  async ready(ref: string): Promise<ContainerRecord> {
    return this.after(this.reconciling, ref);
  }

  /**
   * find(), once the container's state after a daemon restart is known (true to the host): what
   * inspect uses. The stop at start-up or a restart by its policy may still follow; the state
   * read then is the real one of that moment.
   */
  async known(ref: string): Promise<ContainerRecord> {
    return this.after(this.unknownState, ref);
  }

  private async after(gates: Map<string, Promise<void>>, ref: string): Promise<ContainerRecord> {
    const rec = this.find(ref);
    const pending = gates.get(rec.Id);
    if (!pending) return rec;
    await pending;
    return this.find(rec.Id); // it may have been removed meanwhile (AutoRemove): 404
  }

  persist(rec: ContainerRecord): void {
    this.d.store.put(rec, recordText(rec));
  }

  event(rec: ContainerRecord, action: string, extra: Record<string, string> = {}): void {
    this.d.events?.publish({ Type: 'container', Action: action, Actor: containerActor(rec, extra) });
  }

  hub(id: string): OutputHub {
    let h = this.hubs.get(id);
    if (!h) {
      h = new OutputHub();
      this.hubs.set(id, h);
    }
    return h;
  }

  /**
   * A new log driver for the container's run (the previous run's is closed), started (a log plugin
   * has accepted the FIFO: a failure fails the start) and attached to its hub; `done` settles when
   * the run's output is all written.
   */
  async openLogDriver(rec: ContainerRecord): Promise<{ done: Promise<void> }> {
    const driver = await this.logDriverFor(rec, logAttrs(rec));
    const previous = this.drivers.get(rec.Id);
    if (previous && previous !== driver) {
      previous.close().catch((err) => this.d.log.debug(`closing the previous run's log driver: ${(err as Error).message}`, { id: rec.Id }));
    }
    await driver.start?.();
    this.drivers.set(rec.Id, driver);
    const hub = this.hub(rec.Id);
    const { input, done } = attachInput(driver, { stdout: true, stderr: !rec.Config.Tty });
    hub.connect(input);
    return { done };
  }

  /** The container's configured driver, not yet started (a log plugin is looked up here). */
  async logDriverFor(rec: ContainerRecord, attrs: Record<string, string>): Promise<LogDriver> {
    const kind = rec.HostConfig.LogConfig?.Type ?? 'json-file';
    const opts: LogDriverOptions = {
      containerId: rec.Id,
      dir: join(this.d.containersDir, rec.Id),
      options: rec.HostConfig.LogConfig?.Config ?? {},
      attrs,
    };
    if (!isBuiltinLogDriver(kind)) {
      const transport = await this.logPlugin(kind);
      opts.plugin = { transport, info: pluginLogInfo(rec), fifoDir: this.d.logFifoDir ?? join(this.d.containersDir, '..', 'logging') };
    }
    return createLogDriver(kind, { ...opts, onDebug: (msg) => this.d.log.debug(msg, { id: rec.Id }) });
  }

  /** A log-driver plugin by name, with dockerd's wording when there is none. */
  async logPlugin(name: string): Promise<LogPluginTransport> {
    if (!this.d.logPlugins) throw invalidParameter(`logger: no log driver named '${name}' is registered`);
    try {
      return await this.d.logPlugins(name);
    } catch (err) {
      // The lookup's verdict stands (an invalid name is a 400, an unknown plugin a 404).
      throw new EngineError(
        err instanceof EngineError ? err.code : 'INTERNAL',
        `error looking up logging plugin ${name}: ${(err as Error).message}`,
      );
    }
  }

  /** Closes and forgets the container's log driver (after an exit, at removal, at shutdown). */
  async closeLogDriver(id: string, why: string): Promise<void> {
    await this.drivers
      .get(id)
      ?.close()
      .catch((err) => this.d.log.debug(`closing the log driver (${why}): ${(err as Error).message}`, { id }));
  }

  stopSignal(rec: ContainerRecord, override?: string): number {
    return parseSignal(override || rec.Config.StopSignal || 'SIGTERM');
  }

  cancelRestart(rec: ContainerRecord): void {
    const b = this.backoff.get(rec.Id);
    if (b?.timer) clearTimeout(b.timer);
    this.backoff.delete(rec.Id);
  }
}

/** The container facts the log drivers' labels/env/tag options draw on. */
export function logAttrs(rec: ContainerRecord): Record<string, string> {
  const attrs: Record<string, string> = {
    name: rec.Name.slice(1),
    image: rec.ImageRef,
    imageId: rec.Image,
    command: [rec.Path, ...rec.Args].join(' '),
    created: rec.Created,
  };
  for (const [k, v] of Object.entries(rec.Config.Labels ?? {})) attrs[`label:${k}`] = v;
  for (const e of rec.Config.Env ?? []) {
    const i = e.indexOf('=');
    attrs[`env:${i < 0 ? e : e.slice(0, i)}`] = i < 0 ? '' : e.slice(i + 1);
  }
  return attrs;
}

/** dockerd's logger.Info for a log plugin. */
export function pluginLogInfo(rec: ContainerRecord): LogPluginInfo {
  return {
    Config: rec.HostConfig.LogConfig?.Config ?? {},
    ContainerID: rec.Id,
    ContainerName: rec.Name,
    ContainerEntrypoint: rec.Path,
    ContainerArgs: rec.Args,
    ContainerImageID: rec.Image,
    ContainerImageName: rec.Config.Image ?? '',
    ContainerCreated: rec.Created,
    ContainerEnv: rec.Config.Env ?? [],
    ContainerLabels: rec.Config.Labels ?? {},
    LogPath: '',
    DaemonName: 'docker', // as dockerd names itself to plugins
  };
}

// ---- what each part uses -------------------------------------------------------------------------
// Each part of the service takes the narrow view of this state it works with, named here (structural
// types: the one ContainerContext satisfies them all), so what a part may touch — which maps, which
// helpers, which of the service's collaborators — reads at its constructor, and a part that starts
// using more says so in this list.

export type Deps<K extends keyof ContainerServiceDeps> = { readonly d: Pick<ContainerServiceDeps, K> };

/** queries.ts: list, inspect, sizes. */
export type QueryState = Pick<ContainerContext, 'find' | 'recs' | 'unknownState'> &
  Deps<'client' | 'execs' | 'images' | 'log' | 'networks' | 'rootfs'>;

/** create/create.ts: names reserved while a create runs, the record stored. */
export type CreateState = Pick<ContainerContext, 'event' | 'nameHolder' | 'recs' | 'reservedNames'> &
  Deps<'config' | 'containersDir' | 'launcher' | 'log' | 'networks' | 'rootfs' | 'store' | 'volumes'>;

/** io/io.ts: logs, attach, stdin, resize. */
export type IoState = Pick<ContainerContext, 'drivers' | 'event' | 'hub' | 'logDriverFor' | 'stdinRelays' | 'tasks'> &
  Deps<'client' | 'log'>;

/** exclusive.ts: the container's lock lent to commit and archive, the task frozen meanwhile. */
export type ExclusiveState = Pick<ContainerContext, 'lock' | 'recs'> & Deps<'client' | 'log'>;

/** run/stop.ts: a signal, the wait for the exit, the kill after the timeout. */
export type StopState = Pick<ContainerContext, 'event' | 'tasks' | 'waiters'> & Deps<'client' | 'launcher' | 'log'>;

/** run/removal.ts: rm, rename, prune. */
export type RemovalState = Pick<
  ContainerContext,
  | 'cancelRestart'
  | 'closeLogDriver'
  | 'drivers'
  | 'event'
  | 'hubs'
  | 'lock'
  | 'persist'
  | 'reconciling'
  | 'recs'
  | 'stdinRelays'
  | 'waiters'
> &
  StopState &
  Deps<'client' | 'containersDir' | 'events' | 'launcher' | 'log' | 'networks' | 'rootfs' | 'store' | 'volumes'>;

/** run/lifecycle.ts: start, exit, restart policy, stop, kill, pause, shutdown. */
export type LifecycleState = Pick<
  ContainerContext,
  | 'backoff'
  | 'cancelRestart'
  | 'closeLogDriver'
  | 'event'
  | 'find'
  | 'hub'
  | 'hubs'
  | 'lock'
  | 'openLogDriver'
  | 'persist'
  | 'recs'
  | 'shuttingDown'
  | 'startupStops'
  | 'stdinRelays'
  | 'stopSignal'
  | 'tasks'
  | 'waiters'
> &
  RemovalState &
  Deps<'client' | 'launcher' | 'log' | 'runs'>;

/** run/restore.ts: the reconcile after a daemon start. */
export type RestoreState = Pick<
  ContainerContext,
  'hub' | 'known' | 'lock' | 'persist' | 'ready' | 'reconciling' | 'recs' | 'shuttingDown' | 'startupStops' | 'stopSignal' | 'unknownState'
> &
  RemovalState &
  Deps<'client' | 'launcher' | 'log'>;
