// `docker top`: the host's ps (with the client's options, -ef by default), keeping the rows of the
// container's processes, as dockerd does. The last column (the command) keeps its spaces.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { invalidParameter } from '../../errors.ts';

const execFileP = promisify(execFile);

export interface TopResult {
  Titles: string[];
  Processes: string[][];
}

export async function runTop(pids: number[], psArgs: string): Promise<TopResult> {
  const args = psArgs.trim() ? psArgs.trim().split(/\s+/) : ['-ef'];
  let out: string;
  try {
    out = (await execFileP('ps', args, { maxBuffer: 16 << 20 })).stdout;
  } catch (err) {
    throw invalidParameter(`Error running ps: ${(err as Error).message}`);
  }
  return parsePs(out, pids);
}

/** ps output → the title row and the rows whose PID column is one of `pids`. */
export function parsePs(output: string, pids: number[]): TopResult {
  const lines = output.split('\n').filter((l) => l.trim() !== '');
  const titles = (lines[0] ?? '').trim().split(/\s+/);
  const pidCol = titles.indexOf('PID');
  if (pidCol < 0) throw invalidParameter(`Couldn't find PID field in ps output`);
  const wanted = new Set(pids);
  const processes: string[][] = [];
  for (const line of lines.slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (!wanted.has(Number(fields[pidCol]))) continue;
    const row = fields.slice(0, titles.length - 1);
    row.push(fields.slice(titles.length - 1).join(' '));
    processes.push(row);
  }
  return { Titles: titles, Processes: processes };
}
