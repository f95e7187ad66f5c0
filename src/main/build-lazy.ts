// The classic builder, loaded on first use: a plain start-up does not parse or run the builder's
// modules (~130 KB of the bundle). The first /build, /build/prune or /system/df asking for the
// build cache imports build-wiring.ts (a chunk of its own in the bundle) and builds the service;
// every later call goes to that one service. Nothing runs in the builder until it is asked for:
// it has no timers, and its cache is rows in engine.db that wait until then.
import type { BuildBackend } from '../api/routes/build.ts';
import type { BuildCacheUsage } from '../daemon/disk-usage.ts';
import type { BuildService } from '../build/service.ts';
import type { BuildWiring } from './build-wiring.ts';

export function lazyBuildService(deps: BuildWiring): BuildBackend & BuildCacheUsage {
  let loaded: BuildService | undefined;
  let loading: Promise<BuildService> | undefined;
  const service = () => (loading ??= import('./build-wiring.ts').then((m) => (loaded = m.buildService(deps))));
  return {
    build: async (opts, body, sink, signal) => (await service()).build(opts, body, sink, signal),
    // A build runs only in a loaded service: before that, no build has that ID.
    cancel: (id) => loaded?.cancel(id) ?? false,
    diskUsage: async () => (await service()).diskUsage(),
    prune: async (opts) => (await service()).prune(opts),
  };
}
