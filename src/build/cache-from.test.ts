// cachefrom matching as dockerd's image cache: full history entries and layer prefixes, the next
// entry's instruction, the source itself at its last entry, empty layers; local hits only when an
// ancestor of a source.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isAncestorOfSource, matchCacheFrom } from './cache-from.ts';
import type { StepImage } from './image-writer.ts';

const T = '2026-01-01T00:00:00Z';
const img = (history: Array<[string, boolean]>, diffIds: string[], id = `sha256:${history.length}`): StepImage => ({
  id,
  config: { rootfs: { type: 'layers', diff_ids: diffIds }, history: history.map(([created_by, empty]) => ({ created: T, created_by, ...(empty ? { empty_layer: true } : {}) })) },
  layers: diffIds.map((d) => ({ media_type: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: `${d}-blob`, size: '10' })),
});

test('a source whose history continues with the same instruction: restored with its entry and layer, or the source itself at its last entry', () => {
  const parent = img([['ADD base', false], ['CMD sh', true]], ['sha256:a']);
  const cand = img([['ADD base', false], ['CMD sh', true], ['RUN make', false], ['ENV x=1', true]], ['sha256:a', 'sha256:b'], 'sha256:cand');
  const hit = matchCacheFrom(parent, 'RUN make', [cand]);
  assert.equal(hit?.kind, 'restore');
  assert.ok(hit?.kind === 'restore');
  assert.equal(hit.layer?.diffId, 'sha256:b');
  assert.equal(hit.layer?.desc.digest, 'sha256:b-blob');
  assert.deepEqual(hit.entry, { created: T, created_by: 'RUN make' });
  const step2 = img([['ADD base', false], ['CMD sh', true], ['RUN make', false]], ['sha256:a', 'sha256:b']);
  const last = matchCacheFrom(step2, 'ENV x=1', [cand]);
  assert.equal(last?.kind, 'image');
  assert.equal(last?.source.id, 'sha256:cand');
  // From scratch: the first entry is compared.
  const scratch: StepImage = { id: '', config: { rootfs: { type: 'layers', diff_ids: [] }, history: [] }, layers: [] };
  assert.equal(matchCacheFrom(scratch, 'ADD base', [cand])?.kind, 'restore');
});

test('another instruction, a diverging history (an entry made at another time) or different layers are misses', () => {
  const parent = img([['ADD base', false]], ['sha256:a']);
  const cand = img([['ADD base', false], ['RUN make', false]], ['sha256:a', 'sha256:b']);
  assert.equal(matchCacheFrom(parent, 'RUN other', [cand]), undefined);
  assert.equal(matchCacheFrom(img([['ADD other', false]], ['sha256:a']), 'RUN make', [cand]), undefined);
  assert.equal(matchCacheFrom(img([['ADD base', false]], ['sha256:z']), 'RUN make', [cand]), undefined);
  const later = img([['ADD base', false]], ['sha256:a']);
  later.config.history![0]!.created = '2026-01-02T00:00:00Z';
  assert.equal(matchCacheFrom(later, 'RUN make', [cand]), undefined);
  assert.equal(matchCacheFrom(parent, 'RUN make', []), undefined);
});

test('a local cache hit counts only as an ancestor of a source', async () => {
  const parents: Record<string, string> = { 'sha256:src': 'sha256:mid', 'sha256:mid': 'sha256:base', 'sha256:loop': 'sha256:loop' };
  const parentOf = async (id: string) => parents[id] ?? '';
  const src = img([['x', true]], [], 'sha256:src');
  assert.equal(await isAncestorOfSource('sha256:mid', [src], parentOf), true);
  assert.equal(await isAncestorOfSource('sha256:base', [src], parentOf), true);
  assert.equal(await isAncestorOfSource('sha256:src', [src], parentOf), false);
  assert.equal(await isAncestorOfSource('sha256:other', [src], parentOf), false);
  assert.equal(await isAncestorOfSource('sha256:mid', [], parentOf), false);
  assert.equal(await isAncestorOfSource('sha256:x', [img([], [], 'sha256:loop')], parentOf), false);
});
