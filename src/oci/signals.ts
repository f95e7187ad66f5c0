// Signal names and numbers on Linux (StopSignal, kill): "SIGTERM", "TERM", "15", "RTMIN+3".

import { constants } from 'node:os';
import { invalidParameter } from '../errors.ts';

const SIGRTMIN = 34;
const SIGRTMAX = 64;

function table(): Map<string, number> {
  const m = new Map<string, number>();
  for (const [name, num] of Object.entries(constants.signals)) m.set(name.replace(/^SIG/, ''), num as number);
  m.set('IOT', 6);
  m.set('CLD', 17);
  m.set('POLL', 29);
  m.set('RTMIN', SIGRTMIN);
  m.set('RTMAX', SIGRTMAX);
  for (let i = 1; i <= 15; i++) {
    m.set(`RTMIN+${i}`, SIGRTMIN + i);
    m.set(`RTMAX-${i}`, SIGRTMAX - i);
  }
  return m;
}

const SIGNALS = table();

/** Signal number for a name or number; throws `Invalid signal: <raw>` (dockerd's message). */
export function parseSignal(raw: string): number {
  if (/^\d+$/.test(raw)) {
    const n = Number(raw);
    if (n >= 1 && n <= SIGRTMAX) return n;
    throw invalidParameter(`Invalid signal: ${raw}`);
  }
  const n = SIGNALS.get(raw.toUpperCase().replace(/^SIG/, ''));
  if (n === undefined) throw invalidParameter(`Invalid signal: ${raw}`);
  return n;
}
