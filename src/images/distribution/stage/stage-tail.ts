// The unpacking half of a layer whose GET another stage worker does (stage-worker.ts): it reads
// the compressed bytes back from the temporary blob file as the fetching worker writes them (page
// cache: one copy of the compressed bytes) and inflates, hashes and extracts them
// (staged-unpack.ts). So a download no longer goes at the pace of its unpack: its bytes are in
// (and its download slot free for the next layer) once received, hashed and written, while the
// unpack follows on its own thread. Without this, the last layer of a pull started only when the
// first had been unpacked, and was unpacked alone at the end on one thread.
import { closeSync, openSync, readSync } from 'node:fs';
import type { MessagePort } from 'node:worker_threads';
import { LayerStage, type StagedLayer } from './staged-unpack.ts';
import type { WriteBuffers } from './pooled-writes.ts';

/** Over the channel, fetching worker → unpacking worker: bytes of the file that are written so far, all of them, or none to use. */
export type ToTail = { type: 'written'; bytes: number } | { type: 'end'; bytes: number } | { type: 'abort' };

/** What the unpacking half answers: the staged layer, or why there is none. */
export interface StageOutcome {
  staged: StagedLayer | null;
  reason?: string;
  refused?: boolean;
}

/** The blob file read in steps of this size (as the fetching half's gathered writes: stage-worker.ts GATHER). */
const READ = Number(process.env.ENGINE_PULL_BUF_KB ?? 256) * 1024;
/** Read buffers of ended unpacks, for the next ones (a fresh one per layer is garbage for a full collection). */
const reads: Buffer[] = [];

/** Unpacks `path` as its writer reports it written over `port`, into a staging tree under `stageRoot`; closes the port when done. */
export async function runTail(
  port: MessagePort,
  path: string,
  stageRoot: string,
  mediaType: string,
  writes: WriteBuffers | null = null,
): Promise<StageOutcome> {
  let stage: LayerStage;
  try {
    stage = await LayerStage.start(stageRoot, mediaType, writes);
  } catch (err) {
    port.close();
    return { staged: null, reason: (err as Error).message };
  }
  const s = stage;
  const buf = reads.pop() ?? Buffer.allocUnsafeSlow(READ);
  let pos = 0;
  let fd = -1; // opened at the first bytes written (the writer creates the file)
  /** Reads and unpacks up to `avail` (synchronously: the stage is done with `buf` after each push). */
  const pump = (avail: number) => {
    if (fd < 0) fd = openSync(path, 'r');
    while (pos < avail) {
      const n = readSync(fd, buf, 0, Math.min(READ, avail - pos), pos);
      if (n <= 0) throw new Error(`blob file: ${pos} of ${avail} bytes readable`);
      s.push(buf.subarray(0, n));
      pos += n;
    }
  };
  return new Promise<StageOutcome>((resolve) => {
    let done = false;
    const settle = (p: Promise<StageOutcome>) => {
      done = true;
      void p.then((r) => {
        if (fd >= 0) closeSync(fd);
        port.close();
        reads.push(buf);
        resolve(r);
      });
    };
    const discarded = async (reason: string): Promise<StageOutcome> => {
      await s.discard();
      return { staged: null, reason };
    };
    port.on('message', (m: ToTail) => {
      if (done) return;
      try {
        if (m.type === 'written') return pump(m.bytes);
        if (m.type === 'abort') return settle(discarded('aborted'));
        pump(m.bytes);
        settle(
          s.finish().then((r) => ({ staged: r.layer, ...(r.reason ? { reason: r.reason } : {}), ...(r.refused ? { refused: true } : {}) })),
        );
      } catch (err) {
        settle(discarded((err as Error).message));
      }
    });
    // The writer's thread gone without an end: nothing complete to keep.
    port.on('close', () => {
      if (!done) settle(discarded('the download thread ended'));
    });
  });
}
