// The enabled plugins' processes and addresses: started again at start-up (or adopted, still
// running after a live-restore), restarted after an exit with a growing pause, stopped at shutdown;
// the address of each, which the plugin registry hands to volumes, authorization and logging.
import { join } from 'node:path';
import type { PluginAddress } from '../../plugins/discovery.ts';
import type { Logger } from '../../util/log.ts';
import type { KeyedMutex } from '../../util/mutex.ts';
import type { PluginRecords } from './records.ts';
import type { PluginRunner } from './runner.ts';
import type { PluginFiles, PluginRecord } from './store.ts';

export interface EnabledPluginDeps {
  files: PluginFiles;
  runner: PluginRunner;
  records: PluginRecords;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** The manager's lock: a restart after an exit waits for the change under way. */
  lock: KeyedMutex;
}

export class EnabledPlugins {
  /** The address of each enabled plugin, by id (kept as one object while enabled: see PluginRegistry). */
  private readonly addresses = new Map<string, PluginAddress>();
  private closing = false;

  constructor(private readonly d: EnabledPluginDeps) {}

  /** At start-up: the enabled plugins started again (or adopted); one that fails is left disabled. */
  async restore(): Promise<void> {
    let changed = false;
    for (const r of this.d.records.all().filter((x) => x.Enabled)) {
      try {
        if (await this.d.runner.running(r.Id)) this.d.log.info('managed plugin still running', { plugin: r.Name });
        else await this.d.runner.start(r, 30);
        this.adopt(r);
      } catch (err) {
        // As dockerd: a plugin that does not come back is left disabled, and says why.
        this.d.log.error(`managed plugin ${r.Name} failed to start again; it is now disabled: ${(err as Error).message}`);
        r.Enabled = false;
        changed = true;
      }
    }
    if (changed) await this.d.records.save();
  }

  /** A started plugin: its address published, its exit watched. */
  adopt(r: PluginRecord): void {
    this.addresses.set(r.Id, this.address(r));
    this.watch(r);
  }

  /** A plugin being disabled or removed: its address withdrawn (its exit is not one to restart it after). */
  withdraw(id: string): void {
    this.addresses.delete(id);
  }

  addressOf(id: string): PluginAddress | undefined {
    return this.addresses.get(id);
  }

  /** Stops the enabled plugins (left running with live-restore, like containers). */
  async shutdown(liveRestore: boolean): Promise<void> {
    this.closing = true;
    if (liveRestore) return;
    for (const r of this.d.records.all().filter((x) => x.Enabled)) await this.d.runner.stop(r.Id);
  }

  /**
   * A plugin that exits while enabled is started again, as dockerd does, after a pause that grows
   * with each consecutive failure; one that cannot be started is left disabled, with the reason logged.
   */
  private watch(r: PluginRecord, failures = 0): void {
    const { records } = this.d;
    const startedAt = Date.now();
    void this.d.runner.waitExit(r.Id).then((status) => {
      if (status === undefined || this.closing || !r.Enabled || !records.has(r)) return;
      // A plugin that ran for a while before it died starts with a short pause again.
      const n = Date.now() - startedAt > 60_000 ? 0 : failures;
      const delay = Math.min(500 * 2 ** n, 30_000);
      this.d.log.warn(`managed plugin ${r.Name} exited with status ${status}; starting it again in ${delay} ms`);
      this.addresses.delete(r.Id);
      setTimeout(() => {
        void this.d.lock.run('plugins', async () => {
          if (this.closing || !r.Enabled || !records.has(r)) return;
          try {
            await this.d.runner.start(r, 30);
            this.addresses.set(r.Id, this.address(r));
            this.watch(r, n + 1);
          } catch (err) {
            this.d.log.error(`managed plugin ${r.Name} could not be started again; it is now disabled: ${(err as Error).message}`);
            r.Enabled = false;
            await records.save();
            records.event(r, 'disable');
          }
        });
      }, delay).unref();
    });
  }

  private address(r: PluginRecord): PluginAddress {
    const rootfs = this.d.files.rootfs(r.Id);
    const propagated = r.Config.PropagatedMount;
    return {
      name: r.Name,
      socketPath: this.d.runner.socketPath(r),
      scopePath: (p) =>
        propagated && (p === propagated || p.startsWith(propagated.replace(/\/$/, '') + '/'))
          ? join(this.d.files.propagatedMount(r.Id), p.slice(propagated.length))
          : join(rootfs, p),
    };
  }
}
