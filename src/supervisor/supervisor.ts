// The supervisor layer as the daemon sees it: containerd (started by us, or external with
// --supervisor), one shared client, our two namespaces, and version facts for /version and /info.

import { execFile } from 'node:child_process';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../util/log.ts';
import { unavailable } from '../errors.ts';
import { SupervisorClient } from './client.ts';
import { startManagedContainerd, type ManagedContainerd, type ManagedStart } from './containerd-process.ts';
import type { AnyMessage, RuncOptions } from './protos.ts';
import { findShims, reapOrphanShims, type ShimProcess } from './shims.ts';
import { removeStaleBundles } from './bundles.ts';

const execFileP = promisify(execFile);

export interface SupervisorStartOptions {
  /** External containerd socket (--supervisor); when unset we start and watch our own. */
  address?: string;
  dataRoot: string;
  execRoot: string;
  namespace: string;
  pluginsNamespace: string;
  cri: boolean;
  log: Logger;
  /**
   * Our containerd, already starting (see startManagedContainerd): the daemon spawns it before it
   * loads its own modules, so both happen at once. Ignored with `address`.
   */
  prestarted?: ManagedStart;
  /** For tests: containerd binary and start timeout of the managed process. */
  binary?: string;
  startTimeoutMs?: number;
}

export interface SupervisorVersions {
  containerd: { version: string; revision: string };
  runc: { version: string; commit: string; spec: string };
}

/** Parses `runc --version`: "runc version 1.1.5+ds1\ncommit: …\nspec: 1.0.2-dev\n…". */
export function parseRuncVersion(out: string): SupervisorVersions['runc'] {
  const field = (re: RegExp) => re.exec(out)?.[1]?.trim() ?? '';
  return { version: field(/^runc version (.+)$/m), commit: field(/^commit: (.+)$/m), spec: field(/^spec: (.+)$/m) };
}

export class Supervisor extends EventEmitter {
  readonly client: SupervisorClient;
  readonly namespace: string;
  readonly pluginsNamespace: string;
  readonly managed: ManagedContainerd | null;
  private readonly execRoot: string;
  private readonly log: Logger;
  private runcVersion: Promise<SupervisorVersions['runc']> | null = null;

  private constructor(o: { client: SupervisorClient; managed: ManagedContainerd | null; opts: SupervisorStartOptions; log: Logger }) {
    super();
    this.client = o.client;
    this.managed = o.managed;
    this.namespace = o.opts.namespace;
    this.pluginsNamespace = o.opts.pluginsNamespace;
    this.execRoot = o.opts.execRoot;
    this.log = o.log;
  }

  static async start(opts: SupervisorStartOptions): Promise<Supervisor> {
    const log = opts.log.child({ module: 'supervisor' });
    let managed: ManagedContainerd | null = null;
    let address = opts.address;
    let ready: ReturnType<ManagedContainerd['takeReadyClient']> = null;
    if (!address) {
      const start =
        opts.prestarted ??
        startManagedContainerd({
          dataRoot: opts.dataRoot,
          execRoot: opts.execRoot,
          cri: opts.cri,
          log: opts.log,
          binary: opts.binary,
          startTimeoutMs: opts.startTimeoutMs,
        });
      managed = start.managed;
      await start.started;
      address = managed.address;
      // The channel that found containerd ready, already connected (none when it was adopted).
      ready = managed.takeReadyClient();
    }
    const client = ready ? ready.client.withNamespace(opts.namespace) : new SupervisorClient(address, { namespace: opts.namespace });
    try {
      try {
        const v = ready?.version ?? (await client.version({ waitForReady: true, deadlineMs: opts.startTimeoutMs ?? 30_000 }));
        log.info('connected to containerd', { address, version: v.version, managed: !!managed });
      } catch (err) {
        throw unavailable(`containerd at ${address} does not answer: ${(err as Error).message}`, err);
      }
      await Promise.all([client.ensureNamespace(opts.namespace), client.ensureNamespace(opts.pluginsNamespace)]);
    } catch (err) {
      client.close();
      await managed?.stop();
      throw err;
    }
    const sup = new Supervisor({ client, managed, opts, log });
    // Shims a killed daemon left without a task would otherwise live for ever (issue 12, item 7).
    // A first start on these roots has none, and skips scanning every process of the host.
    if (managed && !managed.freshState) await sup.reapOrphanShims();
    managed?.on('restarted', (info) => void sup.relayRestart(info));
    return sup;
  }

  /** Fired only once the shared channel answers again, so listeners can call containerd right away. */
  private async relayRestart(info: unknown): Promise<void> {
    try {
      await this.client.version({ waitForReady: true, deadlineMs: 10_000 });
    } catch (err) {
      this.log.warn('containerd restarted but our client cannot reach it yet', { error: err as Error });
    }
    this.emit('restarted', info);
  }

  override on(event: 'restarted', listener: (info: { pid?: number; reason: string }) => void): this;
  override on(event: string | symbol, listener: (...args: any[]) => void): this {
    return super.on(event, listener);
  }

  /** The containerd socket we talk to (ours under exec-root, or the --supervisor one). */
  get address(): string {
    return this.client.address;
  }

  /** The plugins namespace view of the same client. */
  get pluginsClient(): SupervisorClient {
    return this.client.withNamespace(this.pluginsNamespace);
  }

  /** runc's state root for our containers (runc Options.root), so two daemons never share one. */
  get runcRoot(): string {
    return path.join(this.execRoot, 'runc');
  }

  /** Container.runtime.options for io.containerd.runc.v2 with our runc root. */
  runcOptions(extra: RuncOptions = {}): AnyMessage {
    return this.client.runcOptions({ root: this.runcRoot, ...extra });
  }

  async versions(): Promise<SupervisorVersions> {
    this.runcVersion ??= execFileP('runc', ['--version']).then(
      ({ stdout }) => parseRuncVersion(stdout),
      (err) => {
        this.runcVersion = null; // retry next time
        throw unavailable(`runc --version failed: ${err.message}`, err);
      },
    );
    const [containerd, runc] = await Promise.all([this.client.version(), this.runcVersion]);
    return { containerd: { version: containerd.version, revision: containerd.revision }, runc };
  }

  /**
   * With our own containerd: ends the shims of our namespaces that serve no task it knows (see
   * shims.ts), and removes the task bundles it left behind for such tasks (bundles.ts). Safe only
   * when no task of ours is being created: at start-up before any service runs, and at shutdown.
   * A failure to list is logged and leaves the shims alone: start-up and shutdown go on.
   */
  async reapOrphanShims(): Promise<string[]> {
    // An external containerd (--supervisor) may have other clients creating tasks in our
    // namespaces right now: their shims are not ours to judge.
    if (!this.managed) return [];
    const tasks = new Map<string, Set<string>>();
    const t0 = performance.now();
    // The shims are looked for first (or at once): a shim seen is never newer than the task list.
    const found = findShims(this.address);
    let shims: ShimProcess[];
    try {
      for (const ns of new Set([this.namespace, this.pluginsNamespace])) {
        const listed = await this.client.withNamespace(ns).tasks.list('', { deadlineMs: 10_000 });
        tasks.set(ns, new Set(listed.map((t) => t.id)));
      }
      shims = await found;
    } catch (err) {
      found.catch(() => undefined); // the failure reported is the one above
      this.log.warn(`could not look for orphan shims: ${(err as Error).message}`);
      return [];
    }
    const ended = await reapOrphanShims({ address: this.address, shims, tasks, runcRoot: this.runcRoot, log: this.log });
    const bundles = (
      await removeStaleBundles({ stateDir: this.managed.stateDir, tasks, log: this.log }).catch((err: Error) => {
        this.log.warn(`could not look for stale task bundles: ${err.message}`);
        return [];
      })
    ).length;
    this.log.debug('looked for orphan shims and bundles', { shims: ended.length, bundles, ms: Math.round(performance.now() - t0) });
    return ended;
  }

  /** Ends orphan shims, closes the client; stops containerd only if we started it (containers keep running). */
  async stop(): Promise<void> {
    await this.reapOrphanShims();
    this.client.close();
    await this.managed?.stop();
  }
}
