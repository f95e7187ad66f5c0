// Exec instances: created by POST /containers/{id}/exec, started as an extra process of the
// container's containerd task (Tasks.Exec → Wait → Start) with FIFO stdio, inspected for their exit
// code. Records live in memory only (as in dockerd): a daemon restart forgets them, execs never
// started go when their container stops, finished ones after a grace period.
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import type { ExecCreateBody, ExecStartOptions, OutputSink, RunningExec } from '../../types/exec.ts';
import { conflict, EngineError, invalidParameter, isNotFound, notFound } from '../../errors.ts';
import { readOwnCapabilities, resolveCapabilities } from '../../oci/caps.ts';
import type { OciProcess } from '../../oci/spec-types.ts';
import { resolveUser } from '../../oci/user.ts';
import { PROCESS_TYPE_URL, type SupervisorClient } from '../../supervisor/client.ts';
import type { Logger } from '../../util/log.ts';
import type { ContainerRecord } from '../containers/record.ts';
import { openFifoReader, openFifoWriter } from '../containers/io/fifo.ts';
import type { ContainerRunEvents } from '../containers/run-events.ts';
import { FifoPool } from './fifo-pool.ts';
import { ExecRegistry, type ExecRecord } from './registry.ts';
import { parseDetachKeys } from './detach-keys.ts';
import { buildExecProcess, execEnv, parseContainerProcess, serializeProcess } from './process-spec.ts';

export interface ExecEvent {
  containerId: string;
  /** dockerd's wording: "exec_create: <cmd>", "exec_start: <cmd>", "exec_die". */
  action: string;
  attributes: Record<string, string>;
}

export interface ExecContainers {
  /** The live record (404 when unknown). */
  find(ref: string): ContainerRecord;
  /** The live record once a daemon restart's reconciliation of it is over (at once otherwise). */
  ready(ref: string): Promise<ContainerRecord>;
}

export interface ExecServiceDeps {
  client: SupervisorClient;
  containers: ExecContainers;
  execRoot: string;
  log: Logger;
  /** Exec lifecycle events, for the events stream (optional until it exists). */
  onEvent?: (e: ExecEvent) => void;
  /** Where the exec records live (shared with the containers service); a private one if absent. */
  registry?: ExecRegistry;
  /** Container runs: a stopped container's unstarted execs are dropped. */
  runs?: ContainerRunEvents;
}

/** Finished execs stay inspectable this long (dockerd's exec GC runs every 5 minutes). */
const FINISHED_TTL_MS = 5 * 60_000;
const GC_EVERY_MS = 60_000;
/** After the exit, output still buffered in the FIFOs gets this long to arrive. */
const OUTPUT_DRAIN_MS = 2_000;
const RESIZE_WAIT_MS = 10_000;

export class ExecService {
  private readonly execs: ExecRegistry;
  private readonly baseProcesses = new Map<string, { pid: number; process: OciProcess }>();
  private readonly allCaps: string[];
  private readonly gcTimer: NodeJS.Timeout;
  private readonly fifos: FifoPool;

  constructor(private readonly d: ExecServiceDeps) {
    this.execs = d.registry ?? new ExecRegistry();
    d.runs?.subscribe((rec, change) => {
      if (change === 'stopped') this.containerStopped(rec.Id);
    });
    this.fifos = new FifoPool(join(d.execRoot, 'exec-fifos'));
    this.allCaps = resolveCapabilities({ privileged: true, available: readOwnCapabilities() });
    this.gcTimer = setInterval(() => this.gc(), GC_EVERY_MS);
    this.gcTimer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.gcTimer);
    await this.fifos.close().catch(() => undefined); // Shutting down: the FIFO directory is under the exec-root, which the next start cleans.
  }

  // ---- create / inspect ------------------------------------------------------------------------

  /** POST /containers/{id}/exec: the container's state is known once its reconciliation is over. */
  async create(ref: string, body: ExecCreateBody): Promise<{ Id: string }> {
    return this.createFor(await this.d.containers.ready(ref), body);
  }

  private createFor(container: ContainerRecord, body: ExecCreateBody): { Id: string } {
    const c = this.activeContainer(container);
    const cmd = typeof body.Cmd === 'string' ? [body.Cmd] : (body.Cmd ?? []);
    if (!Array.isArray(cmd) || cmd.some((a) => typeof a !== 'string')) throw invalidParameter('Cmd must be a list of strings');
    if (cmd.length === 0) throw invalidParameter('No exec command specified');
    if (body.Env != null && !Array.isArray(body.Env)) throw invalidParameter('Env must be a list of strings');
    for (const e of body.Env ?? [])
      if (typeof e !== 'string' || e.startsWith('=') || e === '')
        throw invalidParameter(`invalid environment variable: ${JSON.stringify(e)}`);
    const tty = body.Tty === true;
    const size = body.ConsoleSize;
    let started!: () => void;
    const rec: ExecRecord = {
      id: randomBytes(32).toString('hex'),
      containerId: c.Id,
      entrypoint: cmd[0]!,
      args: cmd.slice(1),
      env: execEnv(c.Config, tty, body.Env ?? []),
      tty,
      privileged: body.Privileged === true,
      user: body.User || c.Config.User || '',
      workingDir: body.WorkingDir || c.Config.WorkingDir || '',
      openStdin: body.AttachStdin === true,
      openStdout: body.AttachStdout === true,
      openStderr: body.AttachStderr === true,
      detachKeys: body.DetachKeys ? parseDetachKeys(body.DetachKeys) : Buffer.alloc(0),
      ...(size && size.length === 2 && size[0]! > 0 && size[1]! > 0 ? { consoleSize: { height: size[0]!, width: size[1]! } } : {}),
      state: 'created',
      exitCode: null,
      pid: 0,
      finishedAt: 0,
      started: new Promise<void>((r) => (started = r)),
      markStarted: () => started(),
    };
    this.execs.set(rec.id, rec);
    this.emit(rec, `exec_create: ${commandLine(rec)}`);
    return { Id: rec.id };
  }

  inspect(id: string): Record<string, unknown> {
    const rec = this.get(id);
    return {
      ID: rec.id,
      Running: rec.state === 'running' || rec.state === 'starting',
      ExitCode: rec.exitCode,
      ProcessConfig: {
        tty: rec.tty,
        entrypoint: rec.entrypoint,
        arguments: rec.args,
        privileged: rec.privileged,
        ...(rec.user ? { user: rec.user } : {}),
      },
      OpenStdin: rec.openStdin,
      OpenStderr: rec.openStderr,
      OpenStdout: rec.openStdout,
      CanRemove: false,
      ContainerID: rec.containerId,
      DetachKeys: rec.detachKeys.toString('base64'),
      Pid: rec.pid,
    };
  }

  /** A container's task exited (see the constructor): execs never started go; the process spec cache too. */
  private containerStopped(containerId: string): void {
    this.baseProcesses.delete(containerId);
    for (const e of this.execs.values()) {
      if (e.containerId !== containerId) continue;
      if (e.state === 'created') this.execs.delete(e.id);
    }
  }

  // ---- start -----------------------------------------------------------------------------------

  /** The checks dockerd makes before hijacking the connection (so they still get a status code). */
  checkStartable(id: string): { tty: boolean; openStdin: boolean; openStdout: boolean; openStderr: boolean } {
    const rec = this.get(id);
    this.startableContainer(rec);
    if (rec.state === 'exited') throw conflict(`Error: Exec command ${rec.id} has already run`);
    if (rec.state !== 'created') throw conflict(`Error: Exec command ${rec.id} is already running`);
    return { tty: rec.tty, openStdin: rec.openStdin, openStdout: rec.openStdout, openStderr: rec.openStderr };
  }

  /**
   * Runs the exec. `sink` receives its output (null: output is drained and dropped, as for a
   * detached exec). Resolves once the process runs; a failure to start is recorded as exit code
   * 126/127 (as dockerd) and thrown.
   */
  async start(id: string, opts: ExecStartOptions, sink: OutputSink | null): Promise<RunningExec> {
    const rec = this.get(id);
    this.checkStartable(id);
    rec.state = 'starting';
    const size = opts.consoleSize;
    if (size && size.length === 2 && size[0]! > 0 && size[1]! > 0) rec.consoleSize = { height: size[0]!, width: size[1]! };
    try {
      const c = this.startableContainer(rec);
      return await this.launch(rec, c, sink);
    } catch (err) {
      rec.state = 'exited';
      rec.exitCode = startFailureExitCode(err);
      rec.finishedAt = Date.now();
      rec.markStarted();
      throw startError(err);
    }
  }

  async resize(id: string, height: number, width: number): Promise<void> {
    const rec = this.get(id);
    if (height < 0 || width < 0) throw invalidParameter('invalid size: height and width must be positive');
    if (rec.state === 'created' || rec.state === 'starting') {
      // The CLI resizes right after the start request; wait for the process like dockerd does.
      const ready = await Promise.race([
        rec.started.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), RESIZE_WAIT_MS).unref()),
      ]);
      if (!ready) throw conflict('timeout waiting for exec session ready');
    }
    if (rec.state !== 'running') throw conflict(`Exec process ${rec.id} is not running`);
    if (!rec.tty) return; // dockerd ignores resizes of exec instances without a TTY
    await this.d.client.tasks.resizePty(rec.containerId, { width, height }, rec.id);
  }

  private async launch(rec: ExecRecord, c: ContainerRecord, sink: OutputSink | null): Promise<RunningExec> {
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
    const paths = await this.fifos.take(1 + (rec.tty ? 0 : 1) + (rec.openStdin ? 1 : 0));
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
    this.emit(rec, `exec_start: ${commandLine(rec)}`);

    const done = (async () => {
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
      this.emit(rec, 'exec_die', { exitCode: String(status) });
      // Clean-up runs behind the answer: the client may read the exit code right away.
      void client.tasks
        .deleteProcess(c.Id, rec.id)
        .catch((e: Error) => this.d.log.debug(`exec clean-up: ${e.message}`, { id: rec.id }))
        .then(release)
        .catch((e: Error) => this.d.log.debug(`exec release: ${e.message}`, { id: rec.id }));
      return status;
    })();

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

  // ---- health probes ---------------------------------------------------------------------------

  /**
   * Runs `cmd` in the container as a health probe: the container's user, working directory and
   * environment; stdout and stderr together, the first `maxOutput` bytes kept ("..." marks a cut).
   * After `timeoutMs` of running the process is killed and the result is exit -1.
   */
  async probe(
    containerId: string,
    cmd: string[],
    timeoutMs: number,
    maxOutput = 4096,
  ): Promise<{ exitCode: number; output: string; timedOut: boolean }> {
    // A probe runs only for a container the health monitor saw start: no need to wait.
    const { Id } = this.createFor(this.d.containers.find(containerId), { Cmd: cmd, AttachStdout: true, AttachStderr: true });
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
      const run = await this.start(Id, {}, sink);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        run.done.then(() => false),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeoutMs))),
      ]);
      clearTimeout(timer);
      if (timedOut) {
        await this.d.client.tasks.kill(containerId, 9, { execId: Id }).catch(() => undefined); // The process may have exited on its own just now: then there is nothing to kill.
        await run.done;
      }
      const output = Buffer.concat(chunks).toString('utf8') + (truncated ? '...' : '');
      return timedOut ? { exitCode: -1, output, timedOut } : { exitCode: await run.done, output, timedOut };
    } finally {
      this.execs.delete(Id);
    }
  }

  // ---- helpers ---------------------------------------------------------------------------------

  private get(id: string): ExecRecord {
    const rec = this.execs.get(id);
    if (!rec) throw notFound(`No such exec instance: ${id}`);
    return rec;
  }

  /** Exec create: the container must be running, not paused or restarting. */
  private activeContainer(c: ContainerRecord): ContainerRecord {
    if (c.State.Paused) throw conflict(`Container ${c.Id} is paused, unpause the container before exec`);
    if (c.State.Restarting) throw conflict(`Container ${c.Id} is restarting, wait until the container is running`);
    if (!c.State.Running) throw conflict(`container ${c.Id} is not running`);
    return c;
  }

  private startableContainer(rec: ExecRecord): ContainerRecord {
    let c: ContainerRecord;
    try {
      c = this.d.containers.find(rec.containerId);
    } catch (err) {
      if (isNotFound(err)) throw notFound(`No such container: ${rec.containerId}`);
      throw err;
    }
    if (c.State.Paused) throw conflict(`Container ${c.Id} is paused, unpause the container before exec`);
    if (c.State.Restarting) throw conflict(`Container ${c.Id} is restarting, wait until the container is running`);
    if (!c.State.Running) throw conflict(`container ${c.Id} is not running`);
    return c;
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

  private emit(rec: ExecRecord, action: string, extra: Record<string, string> = {}): void {
    if (!this.d.onEvent) return;
    try {
      this.d.onEvent({ containerId: rec.containerId, action, attributes: { execID: rec.id, ...extra } });
    } catch (err) {
      this.d.log.warn(`exec event hook failed: ${(err as Error).message}`);
    }
  }

  private gc(): void {
    const now = Date.now();
    for (const e of this.execs.values()) {
      let gone = false;
      try {
        this.d.containers.find(e.containerId);
      } catch {
        gone = true;
      }
      if (gone || (e.state === 'exited' && now - e.finishedAt > FINISHED_TTL_MS)) this.execs.delete(e.id);
    }
  }
}

function commandLine(rec: ExecRecord): string {
  return [rec.entrypoint, ...rec.args].join(' ');
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

/**
 * dockerd's translation of a start failure (setExitCodeFromError), in its order: permission denied
 * or a directory → 126, a file mounted on a directory (or the reverse) or a missing command → 127;
 * anything else keeps dockerd's default for a failed start, 126.
 */
export function startFailureExitCode(err: unknown): number {
  const msg = ((err as Error)?.message ?? '').toLowerCase();
  if (msg.includes('permission denied') || msg.includes('is a directory')) return 126;
  if (msg.includes('not a directory')) return 127;
  if (INVALID_COMMAND.some((m) => msg.includes(m))) return 127;
  return 126;
}

const INVALID_COMMAND = ['executable file not found', 'no such file or directory', 'failed to run runc create/exec call'];

/** A command that cannot run is the caller's mistake (400, as dockerd); other failures are 500. */
export function startError(err: unknown): Error {
  if (err instanceof EngineError && (err.code === 'NOT_FOUND' || err.code === 'CONFLICT' || err.code === 'INVALID_PARAMETER')) return err;
  const msg = (err as Error)?.message ?? String(err);
  const lower = msg.toLowerCase();
  // As dockerd: a directory is told as permission denied (the CLI looks for those words to exit 126).
  if (lower.includes('is a directory')) return invalidParameter(`${msg}: permission denied`, err);
  if (lower.includes('not a directory'))
    return invalidParameter(
      `${msg}: Are you trying to mount a directory onto a file (or vice-versa)? Check if the specified host path exists and is the expected type`,
      err,
    );
  if (lower.includes('permission denied') || INVALID_COMMAND.some((m) => lower.includes(m))) return invalidParameter(msg, err);
  return new EngineError('INTERNAL', msg, { cause: err });
}
