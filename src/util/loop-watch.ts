// A debug-only watch on the event loop: with ENGINE_DEBUG_LOOP_STALL_MS=<ms> set, every turn of the
// loop that took longer than that is logged with the requests in flight during it. The figure is a
// timer's lateness, so it is the longest synchronous stretch (what /_ping waits for), and far less
// load-dependent than a wall-clock /_ping: a busy machine delays the timer but not the work between.

/** The requests being handled: "METHOD url", added and removed by the API server. */
const active = new Map<object, string>();
/** Every request seen in flight since the last tick (one that ended during a stall still counts). */
const seen = new Set<string>();
let enabled = false;

export function requestStarted(key: object, method: string | undefined, url: string | undefined): void {
  if (!enabled) return;
  const what = `${method} ${url}`;
  active.set(key, what);
  seen.add(what);
}

export function requestEnded(key: object): void {
  if (enabled) active.delete(key);
}

export interface Stall {
  ms: number;
  /**
   * CPU time the event loop's thread used during the stall: the synchronous work itself, without
   * the time the machine gave to other processes (on a loaded shared machine, most of ms).
   */
  cpuMs: number;
  requests: string[];
}

/** CPU time of this thread (ms): user + system. */
function threadCpuMs(): number {
  const u = process.threadCpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Starts the watch when the env var asks for it; `report` gets each stall over the threshold.
 * The timer is unref'd: it never keeps the daemon alive.
 */
export function startLoopWatch(env: NodeJS.ProcessEnv, report: (s: Stall) => void): boolean {
  const threshold = Number(env.ENGINE_DEBUG_LOOP_STALL_MS);
  if (!Number.isFinite(threshold) || threshold <= 0) return false;
  enabled = true;
  const PERIOD = 2;
  let last = performance.now();
  let lastCpu = threadCpuMs();
  const timer = setInterval(() => {
    const now = performance.now();
    const cpu = threadCpuMs();
    const late = now - last - PERIOD;
    const cpuMs = cpu - lastCpu;
    last = now;
    lastCpu = cpu;
    if (late >= threshold) {
      report({ ms: Math.round(late * 10) / 10, cpuMs: Math.round(cpuMs * 10) / 10, requests: [...seen].map((r) => r.slice(0, 120)) });
    }
    seen.clear();
    for (const what of active.values()) seen.add(what);
  }, PERIOD);
  timer.unref();
  return true;
}
