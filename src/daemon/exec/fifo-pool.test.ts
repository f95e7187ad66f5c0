import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FifoPool } from './fifo-pool.ts';

describe('FifoPool', () => {
  const dirs: string[] = [];
  after(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

  it('hands out distinct fresh FIFOs, also to concurrent takers, and clears leftovers', async () => {
    const root = await mkdtemp(join(tmpdir(), 'fifo-pool-'));
    dirs.push(root);
    const dir = join(root, 'pool');
    await mkdir(dir);
    await writeFile(join(dir, 'stale'), 'x');
    const pool = new FifoPool(dir, 2, 4);
    const batches = await Promise.all([pool.take(3), pool.take(3), pool.take(1), pool.take(5)]);
    const all = batches.flat();
    assert.equal(all.length, 12);
    assert.equal(new Set(all).size, 12, 'no FIFO is handed out twice');
    for (const p of all) assert.ok((await stat(p)).isFIFO(), p);
    await assert.rejects(stat(join(dir, 'stale')), "a previous daemon's leftovers are removed");
    await pool.close();
    await assert.rejects(stat(dir));
  });
});
