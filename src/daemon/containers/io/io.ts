// A container's input and output for clients: logs (from the log driver, following the live run),
// attach (the run's output hub, stdin through a relay that outlives the attach), the TTY size, top.
import { conflict } from '../../../errors.ts';
import type { AttachOptions, AttachSession } from '../../../types/attach.ts';
import { LogMessages, type LogMessage } from '../../../logging/index.ts';
import type { LogChunk, LogChunks, LogsRequest } from '../../../types/logs.ts';
import type { ContainerServiceDeps } from '../deps.ts';
import type { ContainerRecords } from '../records.ts';
import type { RunState } from '../run/run-state.ts';
import type { LogDrivers } from './log-drivers.ts';
import type { ContainerRecord } from '../record.ts';
import { StdinRelay } from './stdin-relay.ts';
import { runTop } from '../top.ts';

export class ContainerIo {
  constructor(
    private readonly records: Pick<ContainerRecords, 'event'>,
    private readonly runs: Pick<RunState, 'hub' | 'stdinRelays' | 'tasks'>,
    private readonly drivers: Pick<LogDrivers, 'create' | 'get'>,
    private readonly d: Pick<ContainerServiceDeps, 'client' | 'log'>,
  ) {}

  async logs(rec: ContainerRecord, req: LogsRequest, signal: AbortSignal): Promise<{ tty: boolean; lines: LogChunks }> {
    const { d } = this;
    let driver = this.drivers.get(rec.Id);
    let owned = false;
    if (!driver) {
      driver = await this.drivers.create(rec, {});
      owned = true;
    }
    // A log plugin says here whether it can read (dockerd's 501 otherwise, before any output).
    await driver.prepareRead?.();
    const reader = driver;
    const follow = req.follow && rec.State.Running;
    const opts = {
      follow,
      stdout: req.stdout,
      stderr: req.stderr,
      tail: req.tail,
      ...(req.since !== undefined ? { since: req.since } : {}),
      ...(req.until !== undefined ? { until: req.until } : {}),
    };
    const done = async () => {
      if (owned) await reader.close().catch((err) => d.log.debug(`closing a log reader: ${(err as Error).message}`, { id: rec.Id }));
    };
    // Batches as the driver reads them (one per file block): a writer of 2.7 million 100-byte
    // entries then makes a few thousand writes, not millions of awaits and writes.
    // read() now: a driver that cannot read throws here, before the answer's headers.
    const src = reader.read(opts, signal);
    async function* batches(): AsyncGenerator<LogMessage[]> {
      try {
        if (src instanceof LogMessages) yield* src.batches();
        else for await (const m of src) yield [m];
      } finally {
        await done();
      }
    }
    const lines: LogChunks = new LogMessages(batches());
    // Drivers with a file can hand out the wire format itself: no object per entry at all.
    const readFrames = reader.readFrames?.bind(reader);
    if (readFrames)
      lines.frames = async function* (format) {
        try {
          yield* readFrames(opts, format, signal);
        } finally {
          await done();
        }
      };
    return { tty: rec.Config.Tty === true, lines };
  }

  async attach(rec: ContainerRecord, opts: AttachOptions): Promise<AttachSession> {
    const hub = this.runs.hub(rec.Id);
    this.records.event(rec, 'attach');
    let history: AsyncIterable<LogChunk> | undefined;
    if (opts.logs) {
      history = (
        await this.logs(
          rec,
          { follow: false, stdout: opts.stdout, stderr: opts.stderr, timestamps: false, tail: -1 },
          new AbortController().signal,
        )
      ).lines;
    }
    return {
      tty: rec.Config.Tty === true,
      history,
      running: () => rec.State.Running,
      subscribe: (fn) => hub.subscribe(fn),
      stdin: opts.stdin && rec.Config.OpenStdin ? () => this.stdinRelay(rec) : undefined,
      // StdinOnce: the first attached client's end of input is the process's end of input (after
      // every byte it sent, even when it all came before the start: `echo hi | docker run -i`).
      closeStdin: async () => {
        if (!rec.Config.StdinOnce || rec.Config.Tty) return false;
        const relay = this.stdinRelay(rec);
        if (relay && !relay.writableEnded) relay.end();
        return true;
      },
    };
  }

  /** The relay of the current (or next) run's stdin; undefined once that input was closed. */
  private stdinRelay(rec: ContainerRecord): StdinRelay | undefined {
    const { runs, d } = this;
    const task = runs.tasks.get(rec.Id);
    let relay = runs.stdinRelays.get(rec.Id);
    if (relay && (relay.destroyed || (relay.connected && relay.connectedTo !== task?.stdin))) {
      relay.destroy(); // it belonged to an earlier run
      relay = undefined;
    }
    if (!relay) {
      relay = new StdinRelay(async (target) => {
        target.end();
        if (runs.tasks.get(rec.Id)?.stdin !== target) return;
        // The task may be gone already (it exited): nothing left to close then.
        await d.client.tasks.closeIO(rec.Id).catch((err) => d.log.debug(`closing stdin: ${(err as Error).message}`, { id: rec.Id }));
      });
      // A write after the process closed its stdin (EPIPE) ends the relay; the attach goes on.
      relay.on('error', (err: Error) => d.log.debug(`stdin relay: ${err.message}`, { id: rec.Id }));
      runs.stdinRelays.set(rec.Id, relay);
    }
    if (!relay.connected && task?.stdin && rec.State.Running) relay.connect(task.stdin);
    return relay.writableEnded ? undefined : relay;
  }

  async resize(rec: ContainerRecord, height: number, width: number): Promise<void> {
    if (!rec.State.Running) throw conflict(`Container ${rec.Id} is not running`);
    await this.d.client.tasks.resizePty(rec.Id, { width, height });
    this.records.event(rec, 'resize', { height: String(height), width: String(width) });
  }

  async top(rec: ContainerRecord, psArgs: string): Promise<{ Titles: string[]; Processes: string[][] }> {
    if (!rec.State.Running) throw conflict(`Container ${rec.Id} is not running`);
    const pids = (await this.d.client.tasks.listPids(rec.Id)).map((p) => p.pid);
    return runTop(pids, psArgs);
  }
}
