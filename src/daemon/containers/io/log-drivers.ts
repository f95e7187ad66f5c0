// The containers' log drivers: the one of each container's current (or last) run, made from its
// LogConfig (a log plugin looked up by name), started and fed from the run's output hub; closed
// after the exit, at removal and at shutdown. Also the container facts the drivers' options draw on.
import { join } from 'node:path';
import { EngineError, invalidParameter } from '../../../errors.ts';
import { attachInput, createLogDriver, isBuiltinLogDriver, type LogPluginInfo, type LogPluginTransport } from '../../../logging/index.ts';
import type { LogDriver, LogDriverOptions } from '../../../logging/types.ts';
import type { ContainerServiceDeps } from '../deps.ts';
import type { ContainerRecord } from '../record.ts';
import type { OutputHub } from './output-hub.ts';

export class LogDrivers {
  private readonly drivers = new Map<string, LogDriver>();

  constructor(private readonly d: Pick<ContainerServiceDeps, 'containersDir' | 'log' | 'logFifoDir' | 'logPlugins'>) {}

  /** The driver of the container's current or last run, if this daemon opened one. */
  get(id: string): LogDriver | undefined {
    return this.drivers.get(id);
  }

  /**
   * A new log driver for the container's run (the previous run's is closed), started (a log plugin
   * has accepted the FIFO: a failure fails the start) and attached to its hub; `done` settles when
   * the run's output is all written.
   */
  async open(rec: ContainerRecord, hub: OutputHub): Promise<{ done: Promise<void> }> {
    const driver = await this.create(rec, logAttrs(rec));
    const previous = this.drivers.get(rec.Id);
    if (previous && previous !== driver) {
      previous.close().catch((err) => this.d.log.debug(`closing the previous run's log driver: ${(err as Error).message}`, { id: rec.Id }));
    }
    await driver.start?.();
    this.drivers.set(rec.Id, driver);
    const { input, done } = attachInput(driver, { stdout: true, stderr: !rec.Config.Tty });
    hub.connect(input);
    return { done };
  }

  /** The container's configured driver, not yet started (a log plugin is looked up here). */
  async create(rec: ContainerRecord, attrs: Record<string, string>): Promise<LogDriver> {
    const kind = rec.HostConfig.LogConfig?.Type ?? 'json-file';
    const opts: LogDriverOptions = {
      containerId: rec.Id,
      dir: join(this.d.containersDir, rec.Id),
      options: rec.HostConfig.LogConfig?.Config ?? {},
      attrs,
    };
    if (!isBuiltinLogDriver(kind)) {
      const transport = await this.plugin(kind);
      opts.plugin = { transport, info: pluginLogInfo(rec), fifoDir: this.d.logFifoDir ?? join(this.d.containersDir, '..', 'logging') };
    }
    return createLogDriver(kind, { ...opts, onDebug: (msg) => this.d.log.debug(msg, { id: rec.Id }) });
  }

  /** A log-driver plugin by name, with dockerd's wording when there is none. */
  async plugin(name: string): Promise<LogPluginTransport> {
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

  /** Closes the container's log driver (after an exit, at shutdown); logs still read from it. */
  async close(id: string, why: string): Promise<void> {
    await this.drivers
      .get(id)
      ?.close()
      .catch((err) => this.d.log.debug(`closing the log driver (${why}): ${(err as Error).message}`, { id }));
  }

  /** Closes and forgets the container's log driver (at removal). */
  async remove(id: string, why: string): Promise<void> {
    await this.close(id, why);
    this.drivers.delete(id);
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
