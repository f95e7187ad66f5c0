// The services everything else stands on: the host's cgroup set-up, the store, the request drain
// of shutdown, the event bus and the daemon's stable ID.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { applyCpuRealtime } from '../../daemon/cpu-rt.ts';
import { EventBus } from '../../events/bus.ts';
import { defaultCgroupParent, detectCgroupLayout, resolveCgroupDriver } from '../../oci/cgroups.ts';
import { openDatabase } from '../../store/database.ts';
import { EventLog } from '../../store/events.ts';
import { RecordTable } from '../../store/kv.ts';
import { RequestDrain } from './request-drain.ts';
import type { DaemonService } from './types.ts';

/** Grace period for in-flight requests at shutdown before connections are cut. */
const REQUEST_DRAIN_MS = 5_000;

export const cgroupDriverService: DaemonService<'cgroupDriver'> = {
  id: 'cgroupDriver',
  init: ({ config }) => {
    const c = config();
    const driver = resolveCgroupDriver(c['exec-opts']);
    applyCpuRealtime({
      period: c['cpu-rt-period'],
      runtime: c['cpu-rt-runtime'],
      cgroupParent: c['cgroup-parent'] || `/${defaultCgroupParent(driver).replace(/^\//, '')}`,
      layout: detectCgroupLayout(),
    });
    return driver;
  },
};

export const dbService: DaemonService<'db'> = {
  id: 'db',
  init: ({ options, log }) =>
    openDatabase(join(options.roots.dataRoot, 'engine.db'), {
      checkpointInBackground: {
        warn: (message) => log.warn(message),
        debug: (message, fields) => log.debug(message, fields),
      },
    }),
  stop: (db) => db.close(),
};

/** Registered before the event bus: shutdown waits for the requests left only once event streams ended. */
export const drainService: DaemonService<'drain'> = {
  id: 'drain',
  init: () => new RequestDrain(),
  stop: (drain) => drain.wait(REQUEST_DRAIN_MS),
};

/** Every service publishes here (persisted before delivery; see events/bus.ts); closing it ends /events streams. */
export const eventsService: DaemonService<'events'> = {
  id: 'events',
  requires: ['db', 'drain'],
  init: ({ db, log }) => new EventBus({ log: new EventLog(db), logger: log.child({ module: 'events' }) }),
  stop: (events) => events.close(),
};

export const engineIdService: DaemonService<'engineId'> = {
  id: 'engineId',
  requires: ['db'],
  init: ({ db }) => {
    const meta = new RecordTable<{ value: string }>(db, 'meta');
    let id = meta.get('engine-id')?.value;
    if (!id) {
      id = randomUUID();
      meta.put('engine-id', { value: id });
    }
    return id;
  },
};
