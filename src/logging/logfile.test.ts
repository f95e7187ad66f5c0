// LogFile's write timing: a quiet stream's record goes to the file at once (nothing held in memory
// for a kill -9 to lose), while records arriving right after a write wait to be coalesced.

import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, mock } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { LogFile } from './logfile.ts';

function append(f: LogFile, text: string): void {
  const bytes = Buffer.from(text);
  const buf = f.hotReserve(bytes.length);
  bytes.copy(buf, f.pos);
  f.pos += bytes.length;
  f.commit();
}

/** Waits (on real turns of the loop, not timers) until the file holds `want` or `turns` pass. */
async function contentAfter(path: string, want: string, turns = 2000): Promise<string> {
  let text = '';
  for (let i = 0; i < turns; i++) {
    text = await readFile(path, 'utf8');
    if (text === want) break;
    await turn();
  }
  return text;
}

test('a record after a quiet spell is written without waiting for the coalescing timer; one right after a write waits for it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'logfile-'));
  // Timers frozen: only a write started at once can reach the file.
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const f = new LogFile({ path: join(dir, 'c.log'), maxSize: Infinity, maxFiles: 1, compress: false });
    await f.open();
    append(f, 'first\n');
    assert.equal(await contentAfter(f.path, 'first\n'), 'first\n', 'the quiet stream waited for a timer');
    append(f, 'second\n');
    // Just after a write: coalesced, so still in memory while the timer is frozen.
    assert.equal(await contentAfter(f.path, 'first\nsecond\n', 50), 'first\n');
    mock.timers.tick(5);
    assert.equal(await contentAfter(f.path, 'first\nsecond\n'), 'first\nsecond\n');
    await f.close();
  } finally {
    mock.timers.reset();
    await rm(dir, { recursive: true, force: true });
  }
});
