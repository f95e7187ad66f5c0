// Start-up phases: for each mark, the wall time since the process started and the CPU time used by
// then. engined logs them at debug level once initialised ("start-up phases"); the bench reads them.
const marks: Array<{ name: string; ms: number; cpuMs: number }> = [];
let done = false;

/** Records the phase `name` as reached now (a no-op once start-up is over). */
export function startupMark(name: string): void {
  if (done) return;
  const c = process.cpuUsage();
  marks.push({ name, ms: Math.round(performance.now()), cpuMs: Math.round((c.user + c.system) / 1000) });
}

/** The marks so far, as `name=ms/cpuMs` fields; later marks are ignored from here on. */
export function startupPhases(): Record<string, string> {
  done = true;
  return Object.fromEntries(marks.map((m) => [m.name, `${m.ms}/${m.cpuMs}`]));
}
