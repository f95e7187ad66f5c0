// A health probe as an exec: the command run in the container with stdout and stderr together,
// the first bytes kept, killed after its timeout (the health monitor's result is then exit -1).
import type { ExecCreateBody, OutputSink, RunningExec } from '../../types/exec.ts';

/** What a probe needs of the exec service, for one container. */
export interface ProbeExecs {
  /** A new exec instance in the container; its ID. */
  create(body: ExecCreateBody): string;
  start(id: string, sink: OutputSink): Promise<RunningExec>;
  /** SIGKILL to the exec's process. */
  kill(id: string): Promise<unknown>;
  /** The exec instance forgotten (a probe is never inspected). */
  discard(id: string): void;
}

export interface ProbeResult {
  exitCode: number;
  output: string;
  timedOut: boolean;
}

/** Runs `cmd`; the first `maxOutput` bytes kept ("..." marks a cut), killed after `timeoutMs`. */
export async function runProbe(execs: ProbeExecs, cmd: string[], timeoutMs: number, maxOutput: number): Promise<ProbeResult> {
  const Id = execs.create({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
  const chunks: Buffer[] = [];
  let kept = 0;
  let truncated = false;
  const sink: OutputSink = (_s, data) => {
    const room = maxOutput - kept;
    if (data.length > room) truncated = true;
    if (room > 0) {
      chunks.push(data.subarray(0, room));
      kept += Math.min(room, data.length);
    }
  };
  try {
    const run = await execs.start(Id, sink);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      run.done.then(() => false),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      await execs.kill(Id).catch(() => undefined); // The process may have exited on its own just now: then there is nothing to kill.
      await run.done;
    }
    const output = Buffer.concat(chunks).toString('utf8') + (truncated ? '...' : '');
    return timedOut ? { exitCode: -1, output, timedOut } : { exitCode: await run.done, output, timedOut };
  } finally {
    execs.discard(Id);
  }
}
