// An exec's process in containerd: its spec derived from the container's own process (cached per
// task), the user resolved in the running container, FIFO stdio from the pool, Tasks.Exec → Wait →
// Start, and the exit recorded once its output drained; cleaned up behind the answer.
import { rm } from 'node:fs/promises';
import type { Socket } from 'node:net';
import type { OutputSink, RunningExec } from '../../types/exec.ts';
import { EngineError, invalidParameter, isNotFound } from '../../errors.ts';
import { readOwnCapabilities, resolveCapabilities } from '../../oci/caps.ts';
import type { OciProcess } from '../../oci/spec-types.ts';
import { resolveUser } from '../../oci/user.ts';
import { PROCESS_TYPE_URL, type SupervisorClient } from '../../supervisor/client.ts';
import type { Logger } from '../../util/log.ts';
import type { ContainerRecord } from '../containers/record.ts';
import { openFifoReader, openFifoWriter } from '../containers/io/fifo.ts';
import type { FifoPool } from './fifo-pool.ts';
import type { ExecRecord } from './registry.ts';
import { commandLine } from './exec-record.ts';
import { buildExecProcess, parseContainerProcess, serializeProcess } from './process-spec.ts';

/** After the exit, output still buffered in the FIFOs gets this long to arrive. */
const OUTPUT_DRAIN_MS = 2_000;

export interface ExecProcessDeps {
  client: SupervisorClient;
  log: Logger;
  fifos: FifoPool;
  /** An exec lifecycle event (exec_start, exec_die) for the events stream. */
  emit: (rec: ExecRecord, action: string, extra?: Record<string, string>) => void;
}

export class ExecProcesses {
  private readonly baseProcesses = new Map<string, { pid: number; process: OciProcess }>();
  private readonly allCaps = resolveCapabilities({ privileged: true, available: readOwnCapabilities() });

  constructor(private readonly d: ExecProcessDeps) {}

  /** A container's task exited: its cached process spec goes. */
  forgetContainer(containerId: string): void {
    this.baseProcesses.delete(containerId);
  }

  /** Runs the exec's process in container `c`; resolves once it runs, its exit code in `done`. */
  async launch(rec: ExecRecord, c: ContainerRecord, sink: OutputSink | null): Promise<RunningExec> {
    const { client } = this.d;
    const base = await this.baseProcess(c);
    const user = rec.user
      ? await this.resolveExecUser(c, rec.user)
      : { uid: base.user.uid, gid: base.user.gid, additionalGids: base.user.additionalGids ?? [] };
    const proc = buildExecProcess(base, {
      args: [rec.entrypoint, ...rec.args],
      env: rec.env,
      cwd: rec.workingDir,
      tty: rec.tty,
      consoleSize: rec.consoleSize,
      user,
      privileged: rec.privileged,
      allCapabilities: this.allCaps,
    });
    const paths = await this.d.fifos.take(1 + (rec.tty ? 0 : 1) + (rec.openStdin ? 1 : 0));
    const fifos = { stdout: paths[0]!, stderr: rec.tty ? undefined : paths[1], stdin: rec.openStdin ? paths.at(-1) : undefined };
    const out = openFifoReader(fifos.stdout);
    const err = fifos.stderr ? openFifoReader(fifos.stderr) : undefined;
    const stdin = fifos.stdin ? openFifoWriter(fifos.stdin) : undefined;
    const ioDone = Promise.all([
      pump(out, 'stdout', rec.openStdout ? sink : null),
      err ? pump(err, 'stderr', rec.openStderr ? sink : null) : undefined,
    ]).then(() => undefined);
    const release = async () => {
      out.destroy();
      err?.destroy();
      stdin?.destroy();
      await Promise.all([fifos.stdin, fifos.stdout, fifos.stderr].filter((p): p is string => !!p).map((p) => rm(p, { force: true })));
    };
    try {
      await client.tasks.exec({
        container_id: c.Id,
        exec_id: rec.id,
        stdin: fifos.stdin ?? '',
        stdout: fifos.stdout,
        stderr: fifos.stderr ?? '',
        terminal: rec.tty,
        spec: { type_url: PROCESS_TYPE_URL, value: Buffer.from(serializeProcess(proc)) },
      });
    } catch (e) {
      await release();
      throw e;
    }
    const waited = client.tasks.wait(c.Id, rec.id);
    try {
      rec.pid = await client.tasks.start(c.Id, rec.id);
    } catch (e) {
      waited.catch(() => undefined); // The start failed and is reported below; the wait on a process that never ran can only fail.
      await client.tasks.deleteProcess(c.Id, rec.id).catch(() => undefined); // Removing the half-created process is best effort: the start's own error is what the client gets.
      await release();
      throw e;
    }
    rec.state = 'running';
    rec.markStarted();
    this.d.emit(rec, `exec_start: ${commandLine(rec)}`);
    const done = this.exit(rec, c, waited, ioDone, release);
    return {
      tty: rec.tty,
      detachKeys: rec.detachKeys,
      ...(stdin ? { stdin } : {}),
      closeStdin: async () => {
        if (!stdin || stdin.destroyed) return;
        stdin.end();
        if (rec.state === 'running') await client.tasks.closeIO(c.Id, rec.id).catch(() => undefined); // The process may have exited between the check and the call: nothing left to close.
      },
      done,
    };
  }

  /** The exit of a started exec: recorded once its output drained (or after OUTPUT_DRAIN_MS). */
  private async exit(
    rec: ExecRecord,
    c: ContainerRecord,
    waited: Promise<{ exit_status: number }>,
    ioDone: Promise<void>,
    release: () => Promise<void>,
  ): Promise<number> {
    let status: number;
    try {
      status = (await waited).exit_status;
    } catch (e) {
      // The task went away under us (container stopped and deleted): the exec died with it.
      if (!isNotFound(e)) this.d.log.debug(`exec wait: ${(e as Error).message}`, { id: rec.id });
      status = 137;
    }
    await Promise.race([ioDone, new Promise((r) => setTimeout(r, OUTPUT_DRAIN_MS).unref())]);
    rec.exitCode = status;
    rec.state = 'exited';
    rec.finishedAt = Date.now();
    this.d.emit(rec, 'exec_die', { exitCode: String(status) });
    // Clean-up runs behind the answer: the client may read the exit code right away.
    void this.d.client.tasks
      .deleteProcess(c.Id, rec.id)
      .catch((e: Error) => this.d.log.debug(`exec clean-up: ${e.message}`, { id: rec.id }))
      .then(release)
      .catch((e: Error) => this.d.log.debug(`exec release: ${e.message}`, { id: rec.id }));
    return status;
  }

  /** The container's process spec as containerd holds it, cached per task (pid). */
  private async baseProcess(c: ContainerRecord): Promise<OciProcess> {
    const hit = this.baseProcesses.get(c.Id);
    if (hit && hit.pid === c.State.Pid) return hit.process;
    const info = await this.d.client.containers.get(c.Id);
    if (!info.spec?.value) throw new EngineError('INTERNAL', `container ${c.Id} has no runtime spec`);
    const process = parseContainerProcess(Buffer.from(info.spec.value).toString('utf8'));
    this.baseProcesses.set(c.Id, { pid: c.State.Pid, process });
    return process;
  }

  /** User names resolve through the running container's own /etc/passwd and /etc/group. */
  private async resolveExecUser(c: ContainerRecord, spec: string): Promise<{ uid: number; gid: number; additionalGids: number[] }> {
    const root = `/proc/${c.State.Pid}/root`;
    try {
      return resolveUser(root, spec, c.HostConfig.GroupAdd ?? []);
    } catch (err) {
      if (err instanceof EngineError) throw err;
      throw invalidParameter(`unable to find user ${spec}: ${(err as Error).message}`);
    }
  }
}

/** Copies a FIFO into the sink (or drops it); resolves when the writer side closed. */
function pump(src: Socket, stream: 'stdout' | 'stderr', sink: OutputSink | null): Promise<void> {
  return new Promise<void>((resolve) => {
    src.on('data', (b: Buffer) => sink?.(stream, b));
    src.on('end', () => resolve());
    src.on('close', () => resolve());
    src.on('error', () => resolve());
  });
}
