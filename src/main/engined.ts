// engined: the entry point. Reads the configuration, prepares directories and the pidfile, starts
// (or reaches) the supervisor, has compose.ts build the services, the API routers and the
// listeners, and handles SIGHUP (reload) and SIGTERM/SIGINT (graceful shutdown).
import { loadConfig } from '../config/load.ts';
import { reloadConfig } from '../config/reload.ts';
import type { LoadedConfig } from '../config/daemon-config.ts';
import { Logger } from '../util/log.ts';
import { extendProcessPath } from '../util/host-path.ts';
import { ENGINE_COMMIT, ENGINE_VERSION } from '../version.ts';
import { prepareRoots, remappedDataRoot, remappedExecRoot } from './dirs.ts';
import { resolveRemap } from '../oci/userns-setup.ts';
import type { IdentityMap } from '../oci/userns.ts';
import { acquirePidfile } from './pidfile.ts';
import { serviceNotifier } from './sd-notify.ts';
import { startLoopWatch } from '../util/loop-watch.ts';
import { startupMark, startupPhases } from '../util/startup-trace.ts';
import { startManagedContainerd, type ManagedStart } from '../supervisor/containerd-process.ts';
import type { RunningSnapshotter } from '../supervisor/snapshotter/start.ts';
import { storageHostRefusal } from '../daemon/storage-host.ts';
// The daemon's services are imported once containerd is starting (see main()).
import type { RunningDaemon } from './compose.ts';

async function main(): Promise<void> {
  const startedAt = Date.now();
  startupMark('main');
  // Before anything is looked up or spawned: host tools are found in /usr/sbin and /sbin even when
  // started from a plain user's login shell (rootless mode), whose PATH has neither.
  extendProcessPath();
  const outcome = loadConfig(process.argv.slice(2), process.env, { version: ENGINE_VERSION, commit: ENGINE_COMMIT });
  if (outcome.kind === 'exit') {
    if (outcome.stdout) process.stdout.write(outcome.stdout.endsWith('\n') ? outcome.stdout : outcome.stdout + '\n');
    if (outcome.stderr) process.stderr.write(outcome.stderr.endsWith('\n') ? outcome.stderr : outcome.stderr + '\n');
    process.exit(outcome.code);
  }
  let loaded: LoadedConfig = outcome.loaded;
  const cfg = loaded.config;
  startupMark('config');
  // Signals are ours from here on, before the first log line (a supervisor may signal as soon as it
  // sees one): the API answers before start-up has finished, and a SIGTERM taking Node's default
  // action then would leave containerd and the pidfile behind. One that arrives during start-up is
  // acted on as soon as start-up ends.
  let stopOn: ((signal: string) => void) | undefined;
  let pendingSignal: string | undefined;
  const onSignal = (signal: string) => (stopOn ? stopOn(signal) : (pendingSignal ??= signal));
  process.on('SIGTERM', () => onSignal('terminated'));
  process.on('SIGINT', () => onSignal('interrupt'));
  let reload: (() => void) | undefined;
  let reloadPending = false;
  process.on('SIGHUP', () => (reload ? reload() : (reloadPending = true)));
  const log = new Logger({ level: cfg['log-level'], format: cfg['log-format'], raw: cfg['raw-logs'] });
  log.info('Starting up', { version: ENGINE_VERSION, commit: ENGINE_COMMIT, node: process.versions.node });
  for (const w of loaded.warnings) log.warn(w);
  // Taken (and removed from the environment) before containerd and helpers are spawned.
  const notifier = serviceNotifier(process.env, log);

  // Rootless mode runs inside rootlesskit (bin/engined-rootless); as root outside it, never.
  const inRootlesskit = !!process.env.ROOTLESSKIT_STATE_DIR;
  const refusal =
    cfg.rootless && !inRootlesskit
      ? 'rootless mode needs rootlesskit: start the daemon with bin/engined-rootless as an unprivileged user'
      : process.getuid!() !== 0 && !inRootlesskit
        ? 'engined needs to be started with root privileges; to run it as an unprivileged user, use bin/engined-rootless (rootless mode)'
        : cfg.rootless && cfg['userns-remap']
          ? 'userns-remap is not supported in rootless mode'
          : undefined;
  if (refusal) {
    log.fatal(`failed to start daemon: ${refusal}`);
    process.exit(1);
  }
  let releasePid: (() => Promise<void>) | undefined;
  let daemon: RunningDaemon | undefined;
  let containerd: ManagedStart | undefined;
  let snapshotServer: RunningSnapshotter | undefined;
  try {
    // The pidfile first: a second daemon must be refused before it touches the first one's tmp dir.
    releasePid = (await acquirePidfile(cfg.pidfile, { log })).release;
    // --userns-remap: the user and its ranges first (created for `default`), then its own data tree.
    let userns: IdentityMap | undefined;
    if (cfg['userns-remap']) {
      userns = await resolveRemap(cfg['userns-remap']);
      if (!userns) log.warn('User namespaces: root cannot be remapped with itself; user namespaces are OFF');
      else log.info(`User namespaces: ID ranges will be mapped to subuid/subgid ranges of: ${userns.user}`, { root: userns.key });
    }
    const dataRoot = userns ? await remappedDataRoot(cfg['data-root'], userns.rootUid, userns.rootGid) : cfg['data-root'];
    const roots = await prepareRoots(dataRoot, cfg['exec-root'], { cleanTmp: true, log });
    if (userns) await remappedExecRoot(roots.execRoot, userns.rootUid, userns.rootGid);
    startupMark('roots');
    // Rootless without a configured driver: overlay2 where the kernel mounts one in this user
    // namespace, else fuse-overlayfs.
    if (cfg.rootless && !loaded.flagKeys.has('storage-driver') && !loaded.fileKeys.has('storage-driver') && !process.env.ENGINE_DRIVER) {
      const { kernelOverlayMounts, rootlessDriver } = await import('../supervisor/snapshotter/rootless.ts');
      const { fuseOverlayfsMissing } = await import('../supervisor/snapshotter/host-check.ts');
      const choice = rootlessDriver(await kernelOverlayMounts(roots.tmpDir), fuseOverlayfsMissing());
      if (choice.note) log.warn(choice.note);
      cfg['storage-driver'] = choice.driver;
    }
    // A storage driver this host cannot serve stops the start here, before containerd is spawned.
    const storageRefusal = storageHostRefusal(cfg['storage-driver'], roots.dataRoot, !cfg.supervisor, cfg['storage-opts']);
    if (storageRefusal) throw new Error(storageRefusal);
    // The fuse-overlayfs driver's snapshotter is ours to serve (containerd 1.6 has none): it listens
    // before containerd starts, which reaches it as a proxy plugin.
    if (cfg['storage-driver'] === 'fuse-overlayfs' && !cfg.supervisor) {
      const { fuseOverlayfsMissing, startFuseSnapshotter } = await import('../supervisor/snapshotter/start.ts');
      const missing = fuseOverlayfsMissing();
      if (missing) throw new Error(missing);
      snapshotServer = await startFuseSnapshotter({ dataRoot: roots.dataRoot, execRoot: roots.execRoot, log });
    }
    // containerd boots in its own process (~250 ms) while this one loads the daemon's modules.
    if (!cfg.supervisor)
      containerd = startManagedContainerd({
        dataRoot: roots.dataRoot,
        execRoot: roots.execRoot,
        cri: cfg['cri-supervisor'],
        log,
        ...(snapshotServer ? { proxySnapshotter: { name: snapshotServer.name, address: snapshotServer.address } } : {}),
      });
    startupMark('containerd-spawned');
    const { startDaemon } = await import('./compose.ts');
    startupMark('compose-loaded');
    daemon = await startDaemon({
      loaded: () => loaded,
      log,
      roots,
      startedAt: new Date(startedAt),
      ...(containerd ? { containerd } : {}),
      ...(snapshotServer ? { snapshotServer } : {}),
      ...(userns ? { userns } : {}),
    });
  } catch (err) {
    log.fatal(`failed to start daemon: ${(err as Error).message}`);
    if (log.enabled('debug')) log.debug('start-up failure', { stack: (err as Error).stack });
    // startDaemon stops (or, with live-restore, releases) the containerd it took over; this covers a
    // failure before that. Exiting anyway: each clean-up below is best effort, its failure a debug line.
    if (!daemon) await containerd?.managed.stop().catch((e: Error) => log.debug(`stopping containerd after a failed start: ${e.message}`));
    await daemon?.shutdown().catch((e: Error) => log.debug(`shutting down after a failed start: ${e.message}`));
    if (!daemon) await snapshotServer?.close().catch((e: Error) => log.debug(`closing the snapshotter after a failed start: ${e.message}`));
    // A pid file left behind is taken over by the next start (it checks the pid).
    await releasePid?.().catch((e: Error) => log.debug(`removing the pid file: ${e.message}`));
    process.exit(1);
  }
  const running = daemon;
  log.info('Daemon has completed initialization', { startupMs: Date.now() - startedAt });
  notifier?.send(`READY=1\nMAINPID=${process.pid}`);
  if (log.enabled('debug')) log.debug('start-up phases (ms since process start/CPU ms)', startupPhases());
  // Debug only (ENGINE_DEBUG_LOOP_STALL_MS): long synchronous stretches, with the requests behind them.
  if (startLoopWatch(process.env, (s) => log.warn('event loop stalled', { ms: s.ms, cpuMs: s.cpuMs, requests: s.requests.join(' | ') })))
    log.warn('ENGINE_DEBUG_LOOP_STALL_MS is set: event loop stalls are logged (a debugging aid)');

  reload = () => {
    notifier?.send('RELOADING=1');
    try {
      const r = reloadConfig(loaded, process.env);
      if (!r.ok) {
        log.error(`Error reloading configuration: ${r.error}`);
        return;
      }
      loaded = r.loaded;
      running.reloaded(r.changed);
      log.info('Reloaded configuration', { changed: r.changed.join(',') || 'nothing' });
    } finally {
      notifier?.send('READY=1');
    }
  };
  if (reloadPending) reload();

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('Processing signal', { signal });
    notifier?.send('STOPPING=1');
    try {
      await running.shutdown();
    } catch (err) {
      log.error(`shutdown: ${(err as Error).message}`);
    }
    // Exiting anyway: a pid file left behind is taken over by the next start (it checks the pid).
    await releasePid?.().catch((e: Error) => log.debug(`removing the pid file: ${e.message}`));
    log.info('Daemon shutdown complete');
    process.exit(0);
  };
  stopOn = (signal) => void stop(signal);
  if (pendingSignal) stopOn(pendingSignal);
}

process.on('unhandledRejection', (err) => {
  // A bug, but never a reason to take the daemon down with every container's state in it.
  process.stderr.write(
    `time="${new Date().toISOString()}" level=error msg="unhandled rejection: ${(err as Error)?.stack ?? String(err)}"\n`,
  );
});

void main();
