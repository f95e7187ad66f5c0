// cachefrom matching: history and layer prefixes, the next entry's instruction, empty layers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchCacheFrom } from './cache-from.ts';
import type { StepImage } from './image-writer.ts';

const img = (history: Array<[string, boolean]>, diffIds: string[]): StepImage => ({
  id: `sha256:${history.length}`,
  config: { rootfs: { type: 'layers', diff_ids: diffIds }, history: history.map(([created_by, empty]) => ({ created_by, ...(empty ? { empty_layer: true } : {}) })) },
  layers: diffIds.map((d) => ({ media_type: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: `${d}-blob`, size: '10' })),
});

test('a candidate whose history continues with the same instruction is a hit, with its layer', () => {
  const parent = img([['ADD base', false], ['CMD sh', true]], ['sha256:a']);
  const cand = img([['ADD base', false], ['CMD sh', true], ['RUN make', false], ['ENV x=1', true]], ['sha256:a', 'sha256:b']);
  const hit = matchCacheFrom(parent, 'RUN make', [cand]);
  assert.deepEqual(hit?.layer?.diffId, 'sha256:b');
  assert.equal(hit?.layer?.desc.digest, 'sha256:b-blob');
  const step2 = img([['ADD base', false], ['CMD sh', true], ['RUN make', false]], ['sha256:a', 'sha256:b']);
  assert.deepEqual(matchCacheFrom(step2, 'ENV x=1', [cand]), {});
});

test('another instruction, a diverging history or different layers are misses', () => {
  const parent = img([['ADD base', false]], ['sha256:a']);
  const cand = img([['ADD base', false], ['RUN make', false]], ['sha256:a', 'sha256:b']);
  assert.equal(matchCacheFrom(parent, 'RUN other', [cand]), undefined);
  assert.equal(matchCacheFrom(img([['ADD other', false]], ['sha256:a']), 'RUN make', [cand]), undefined);
  assert.equal(matchCacheFrom(img([['ADD base', false]], ['sha256:z']), 'RUN make', [cand]), undefined);
  assert.equal(matchCacheFrom(parent, 'RUN make', []), undefined);
});
