// Per-request overhead: curl's own time_total over the daemon's unix socket (a new connection per
// request, as the docker CLI makes) for GET /_ping and GET /containers/json with no containers.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { DaemonUnderTest } from '../targets/daemon.ts';

const run = promisify(execFile);

export const PING_PATHS = { ping: '/_ping', list: '/v1.41/containers/json' } as const;

/** curl's time_total (ms) of one GET of `path`. */
export async function curlTime(d: DaemonUnderTest, path: string): Promise<number> {
  const { stdout } = await run('curl', [
    '-s',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code} %{time_total}',
    '--unix-socket',
    d.socket,
    `http://d${path}`,
  ]);
  const [code, secs] = stdout.trim().split(' ');
  if (code !== '200') throw new Error(`${d.kind}: GET ${path} → ${code}`);
  return Number(secs) * 1000;
}
