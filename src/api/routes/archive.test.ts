// Archive routes (docker cp, docker diff) on a recording fake backend: the path-stat header on
// HEAD and GET, the tar streamed with its content type, PUT's options, 404s before any byte.
import assert from 'node:assert/strict';
import type { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import { notFound } from '../../errors.ts';
import type { ContainerPathStat } from '../../types/archive.ts';
import { registerArchiveRoutes, type ArchiveBackend } from './archive.ts';

const stat: ContainerPathStat = { name: 'etc', size: 4096, mode: 0o20000000755, mtime: '2024-01-01T00:00:00Z', linkTarget: '' };

describe('archive routes', () => {
  let received = '';
  const { backend, calls } = fakeBackend<ArchiveBackend>({
    stat: (_ref: string, path: string) => {
      if (path === '/nope') throw notFound('Could not find the file /nope in container c1');
      return stat;
    },
    archive: async (_ref: string, _path: string, begin: (h: string) => Writable) => {
      begin('eyJuYW1lIjoiZXRjIn0=').write('TAR');
    },
    extract: async (_ref: string, _path: string, body: AsyncIterable<Buffer>) => {
      for await (const c of body) received += c.toString();
    },
    changes: [{ Path: '/tmp', Kind: 0 }],
  });
  const h = new RouteHarness((r) => registerArchiveRoutes(r, backend));
  after(() => h.close());

  test('HEAD answers the stat as a base64 JSON header; a missing path is a 404', async () => {
    const r = await h.request('HEAD', '/containers/c1/archive?path=/etc');
    assert.equal(r.status, 200);
    const header = JSON.parse(Buffer.from(String(r.headers['x-docker-container-path-stat']), 'base64').toString());
    assert.equal(header.name, 'etc');
    assert.equal((await h.request('HEAD', '/containers/c1/archive?path=/nope')).status, 404);
  });

  test('GET streams the tar after the stat header; PUT passes the body and options; changes', async () => {
    const g = await h.request('GET', '/containers/c1/archive?path=/etc');
    assert.equal(g.headers['content-type'], 'application/x-tar');
    assert.equal(g.headers['x-docker-container-path-stat'], 'eyJuYW1lIjoiZXRjIn0=');
    assert.equal(g.text, 'TAR');
    const p = await h.request('PUT', '/containers/c1/archive?path=/tmp&noOverwriteDirNonDir=1', {
      raw: 'tarbytes',
      headers: { 'Content-Type': 'application/x-tar' },
    });
    assert.equal(p.status, 200);
    assert.equal(received, 'tarbytes');
    assert.deepEqual(calls.at(-1)?.args[3], { noOverwriteDirNonDir: true, copyUIDGID: false });
    assert.deepEqual((await h.request('GET', '/containers/c1/changes')).json, [{ Path: '/tmp', Kind: 0 }]);
  });
});
