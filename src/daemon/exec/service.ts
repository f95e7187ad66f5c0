// Exec instances: created by POST /containers/{id}/exec, started as an extra process of the
// container's containerd task (Tasks.Exec → Wait → Start) with FIFO stdio, inspected for their exit
// code. Records live in memory only (as in dockerd): a daemon restart forgets them, execs never
// started go when their container stops, finished ones after a grace period. Its parts: the record
// and inspect view (exec-record.ts), the process in containerd (exec-process.ts), health probes
// (probe.ts), a failed start's answer (start-failure.ts).
import { join } from 'node:path';
import type { ExecCreateBody, ExecStartOptions, OutputSink, RunningExec } from '../../types/exec.ts';
import { conflict, invalidParameter, isNotFound, notFound } from '../../errors.ts';
import type { SupervisorClient } from '../../supervisor/client.ts';
import type { Logger } from '../../util/log.ts';
import type { ContainerRecord } from '../containers/record.ts';
import type { ContainerRunEvents } from '../containers/run-events.ts';
import { FifoPool } from './fifo-pool.ts';
import { ExecRegistry, type ExecRecord } from './registry.ts';
import { commandLine, inspectView, newExecRecord, type ExecInspectView } from './exec-record.ts';
import { ExecProcesses } from './exec-process.ts';
import { runProbe, type ProbeResult } from './probe.ts';
import { startError, startFailureExitCode } from './start-failure.ts';

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
const RESIZE_WAIT_MS = 10_000;

export class ExecService {
  private readonly execs: ExecRegistry;
  private readonly gcTimer: NodeJS.Timeout;
  private readonly fifos: FifoPool;
  private readonly processes: ExecProcesses;

  constructor(private readonly d: ExecServiceDeps) {
    this.execs = d.registry ?? new ExecRegistry();
    d.runs?.subscribe((rec, change) => {
      if (change === 'stopped') this.containerStopped(rec.Id);
    });
    this.fifos = new FifoPool(join(d.execRoot, 'exec-fifos'));
    this.processes = new ExecProcesses({
      client: d.client,
      log: d.log,
      fifos: this.fifos,
      emit: (rec, action, extra) => this.emit(rec, action, extra),
    });
    this.gcTimer = setInterval(() => this.gc(), GC_EVERY_MS);
    this.gcTimer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.gcTimer);
    // Shutting down: a FIFO directory left behind is under the exec-root, which the next start cleans.
    await this.fifos.close().catch((err) => this.d.log.debug(`removing the exec FIFO pool: ${(err as Error).message}`));
  }

  // ---- create / inspect ------------------------------------------------------------------------

  /** POST /containers/{id}/exec: the container's state is known once its reconciliation is over. */
  async create(ref: string, body: ExecCreateBody): Promise<{ Id: string }> {
    return this.createFor(await this.d.containers.ready(ref), body);
  }

  private createFor(container: ContainerRecord, body: ExecCreateBody): { Id: string } {
    const rec = newExecRecord(this.activeContainer(container), body);
    this.execs.set(rec.id, rec);
    this.emit(rec, `exec_create: ${commandLine(rec)}`);
    return { Id: rec.id };
  }

  inspect(id: string): ExecInspectView {
    return inspectView(this.get(id));
  }

  /** A container's task exited (see the constructor): execs never started go; the process spec cache too. */
  private containerStopped(containerId: string): void {
    this.processes.forgetContainer(containerId);
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
      return await this.processes.launch(rec, c, sink);
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

  // ---- health probes ---------------------------------------------------------------------------

  /**
   * Runs `cmd` in the container as a health probe: the container's user, working directory and
   * environment; stdout and stderr together, the first `maxOutput` bytes kept ("..." marks a cut).
   * After `timeoutMs` of running the process is killed and the result is exit -1.
   */
  probe(containerId: string, cmd: string[], timeoutMs: number, maxOutput = 4096): Promise<ProbeResult> {
    return runProbe(
      {
        // A probe runs only for a container the health monitor saw start: no need to wait.
        create: (body) => this.createFor(this.d.containers.find(containerId), body).Id,
        start: (id, sink) => this.start(id, {}, sink),
        kill: (id) => this.d.client.tasks.kill(containerId, 9, { execId: id }),
        discard: (id) => this.execs.delete(id),
      },
      cmd,
      timeoutMs,
      maxOutput,
    );
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
