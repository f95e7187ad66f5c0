import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LocalImage } from './image-store.ts';
import { inspectView, parseTimeFilter, referenceMatches } from './image-views.ts';

describe('image list filters', () => {
  test('reference patterns match the familiar name or name:tag, * not crossing /', () => {
    assert.ok(referenceMatches('busybox', 'busybox:latest'));
    assert.ok(referenceMatches('busybox:lat*', 'busybox:latest'));
    assert.ok(referenceMatches('busy*', 'busybox:1'));
    assert.ok(!referenceMatches('busy*', 'team/busybox:1'));
    assert.ok(referenceMatches('*/busybox', 'team/busybox:1'));
    assert.ok(referenceMatches('localhost:5000/*', 'localhost:5000/x:1'));
    assert.ok(!referenceMatches('other', 'busybox:latest'));
    assert.ok(referenceMatches('b[tu]sy?ox', 'busybox:1'));
    assert.ok(referenceMatches('b[^a]sybox:[0-9]', 'busybox:1'));
    assert.throws(() => referenceMatches('busy[box', 'busybox:1'), /syntax error in pattern/);
  });

  test('hostile reference patterns stay bounded (no RegExp backtracking)', () => {
    const started = performance.now();
    assert.ok(!referenceMatches('*a'.repeat(3000) + 'x', `${'a'.repeat(120)}:1`));
    assert.ok(referenceMatches('*'.repeat(3000), 'busybox:1'));
    assert.ok(performance.now() - started < 10_000);
  });

  test('until/since times: unix seconds, RFC 3339, durations', () => {
    assert.equal(parseTimeFilter('1700000000'), 1700000000);
    assert.equal(parseTimeFilter('2024-01-01T00:00:00Z'), Date.UTC(2024, 0, 1) / 1000);
    assert.ok(Math.abs(parseTimeFilter('1h30m') - (Date.now() / 1000 - 5400)) < 5);
    assert.throws(() => parseTimeFilter('yesterday'), /invalid time filter/);
  });
});

// The inspect view's version gate kept in the view: before API 1.50 Config carries the empty
// container-config fields older clients expect; from 1.50 only the image's own fields.
const img = {
  id: 'sha256:' + 'a'.repeat(64),
  names: ['docker.io/library/busybox:latest'],
  record: {
    name: 'docker.io/library/busybox:latest',
    target: { media_type: 'application/vnd.oci.image.manifest.v1+json', digest: 'sha256:' + 'b'.repeat(64), size: 10 },
  },
  records: [],
  manifestDigest: 'sha256:' + 'b'.repeat(64),
  manifest: { config: {}, layers: [] },
  config: { architecture: 'amd64', os: 'linux', config: { Cmd: ['sh'] }, rootfs: { type: 'layers', diff_ids: [] } },
  chainId: '',
  size: 10,
} as unknown as LocalImage;

test('Config: container-config fields before 1.50, the image fields alone from 1.50', () => {
  const old = inspectView(img, { size: 10, driver: 'overlayfs', version: '1.49' }).Config as Record<string, unknown>;
  assert.equal(old.Hostname, '');
  assert.equal(old.AttachStdout, false);
  assert.deepEqual(old.Cmd, ['sh']);
  const cur = inspectView(img, { size: 10, driver: 'overlayfs', version: '1.50' }).Config as Record<string, unknown>;
  assert.equal('Hostname' in cur, false);
  assert.equal('AttachStdout' in cur, false);
  assert.deepEqual(cur.Cmd, ['sh']);
});
