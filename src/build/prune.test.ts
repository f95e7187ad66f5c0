// Build cache prune over a real engine.db: keep-storage (least recently used first), filters, `all`
// keeping named images' entries otherwise, children removed before parents, df entries.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openDatabase } from '../store/database.ts';
import { BuildCacheTable } from '../store/build-cache.ts';
import { StepCache } from './cache.ts';
import { cacheUsage, pruneCache, type PruneDeps } from './prune.ts';

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function setup(now: { t: number }) {
  const dir = await mkdtemp(join(tmpdir(), 'prune-test-'));
  dirs.push(dir);
  const db = openDatabase(join(dir, 'engine.db'));
  const cache = new StepCache(new BuildCacheTable(db), () => now.t);
  const images = new Map<string, { named: boolean }>();
  const removed: string[] = [];
  const deps: PruneDeps = {
    cache,
    image: async (id) => images.get(id),
    removeImage: async (id) => {
      removed.push(id);
      images.delete(id);
      return true;
    },
    building: () => false,
  };
  // a chain: base → s1 (RUN, 100 B) → s2 (COPY, 50 B) → final (config, named)
  const add = (key: string, id: string, parent: string, kind: 'regular' | 'source.local' | 'internal', size: number, named = false) => {
    images.set(id, { named });
    cache.store(key, { imageId: id, parentId: parent, createdBy: `step ${key}`, kind, size });
    now.t += 1000;
  };
  add('k1', 'sha256:s1', 'sha256:base', 'regular', 100);
  add('k2', 'sha256:s2', 'sha256:s1', 'source.local', 50);
  add('k3', 'sha256:final', 'sha256:s2', 'internal', 0, true);
  return { db, cache, images, removed, deps };
}

test('df lists every entry with its parent, type and size', async () => {
  const { deps, db } = await setup({ t: 1_000_000 });
  const entries = await cacheUsage(deps);
  assert.deepEqual(entries.map((e) => [e.Type, e.Size, e.Shared, e.Parent ?? null]), [
    ['regular', 100, false, null], ['source.local', 50, false, 'k1'], ['internal', 0, true, 'k2'],
  ]);
  db.close();
});

test('without all, named images keep their entries; children go before parents; rows of removed images are dropped', async () => {
  const { deps, removed, cache, images, db } = await setup({ t: 1_000_000 });
  const r = await pruneCache(deps, { all: false, keepStorage: 0, filters: new Map() });
  assert.deepEqual(r.CachesDeleted, ['k2', 'k1']);
  assert.equal(r.SpaceReclaimed, 150);
  assert.deepEqual(removed, ['sha256:s2', 'sha256:s1']);
  assert.deepEqual(cache.rows().map((x) => x.key), ['k3']);
  images.delete('sha256:final'); // removed by hand: its entry is dropped when met
  assert.deepEqual(await cacheUsage(deps), []);
  db.close();
});

test('keep-storage keeps the most recently used; filters select; a bad filter is a 400', async () => {
  const now = { t: 1_000_000 };
  const { deps, db } = await setup(now);
  const keep = await pruneCache(deps, { all: true, keepStorage: 60, filters: new Map() });
  assert.deepEqual(keep.CachesDeleted, ['k1'], 'the least recently used goes until 60 bytes are left');
  const typed = await pruneCache(deps, { all: true, keepStorage: 0, filters: new Map([['type', ['internal']]]) });
  assert.deepEqual(typed.CachesDeleted, ['k3']);
  const none = await pruneCache(deps, { all: true, keepStorage: 0, filters: new Map([['until', ['1970-01-01T00:00:01Z']]]) });
  assert.equal(none.CachesDeleted, null);
  await assert.rejects(pruneCache(deps, { all: true, keepStorage: 0, filters: new Map([['colour', ['red']]]) }), /invalid filter 'colour'/);
  db.close();
});
