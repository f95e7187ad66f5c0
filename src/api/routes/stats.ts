// GET /containers/{id}/stats: newline-delimited JSON frames (one for stream=false), as dockerd's
// json.Encoder writes them. Frames a slow client cannot take are dropped, never buffered.
import type { Router } from '../router.ts';
import type { StatsOptions, StatsSink } from '../../types/stats.ts';
import { versionLessThan } from '../../util/api-version.ts';

export interface StatsBackend {
  /**
   * Resolves the container and checks the options (throwing the 404 / 400 before anything is
   * written: the container is looked up first, as dockerd does), then starts delivering
   * frames to `sink`, never synchronously. Returns the cancel for a client that goes away.
   */
  open(ref: string, opts: StatsOptions, sink: StatsSink): () => void;
}

export function registerStatsRoutes(router: Router, backend: StatsBackend): void {
  router.get('/containers/{id}/stats', async (ctx) => {
    const stream = ctx.query.bool('stream', true);
    // one-shot arrived with API 1.41; older clients' value is ignored, as dockerd does.
    const oneShot = ctx.query.bool('one-shot', false) && !versionLessThan(ctx.version, '1.41');
    const { res } = ctx;
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const sink: StatsSink = {
      send(text) {
        if (!res.writable || res.writableNeedDrain) return;
        res.write(`${text}\n`);
      },
      end() {
        res.end();
        finish();
      },
    };
    // Throws the 404 while nothing is written yet.
    const cancel = backend.open(ctx.params.id, { stream, oneShot }, sink);
    // As dockerd: a content type for the single answer only; a stream's status goes out at once,
    // before the first frame.
    if (stream) {
      res.writeHead(200);
      res.flushHeaders();
    } else {
      res.writeHead(200, { 'Content-Type': 'application/json' });
    }
    // Fires when the response ends or the client goes away mid-stream.
    res.on('close', () => {
      cancel();
      finish();
    });
    await done;
  });
}
