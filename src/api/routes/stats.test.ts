// GET /containers/{id}/stats on a fake backend: one frame with a content type for stream=false,
// newline-delimited frames for a stream, one-shot only from API 1.41, errors before anything is sent.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import { notFound } from '../../errors.ts';
import type { StatsOptions, StatsSink } from '../../types/stats.ts';
import { registerStatsRoutes, type StatsBackend } from './stats.ts';

describe('stats route', () => {
  let cancelled = 0;
  const { backend, calls } = fakeBackend<StatsBackend>({
    open: (ref: string, opts: StatsOptions, sink: StatsSink) => {
      if (ref === 'nope') throw notFound('No such container: nope');
      setImmediate(() => {
        sink.send('{"n":1}');
        if (opts.stream) sink.send('{"n":2}');
        sink.end();
      });
      return () => void cancelled++;
    },
  });
  const h = new RouteHarness((r) => registerStatsRoutes(r, backend));
  after(() => h.close());

  test('stream=false: one JSON frame with a content type', async () => {
    const r = await h.request('GET', '/v1.41/containers/c1/stats?stream=false&one-shot=true');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.text, '{"n":1}\n');
    assert.deepEqual(calls.at(-1)?.args.slice(0, 2), ['c1', { stream: false, oneShot: true }]);
    assert.ok(cancelled >= 1, 'the backend is told when the response ends');
  });

  test('a stream: frames one per line; one-shot before API 1.41 is ignored; 404 before any byte', async () => {
    const r = await h.request('GET', '/v1.40/containers/c1/stats?one-shot=1');
    assert.equal(r.text, '{"n":1}\n{"n":2}\n');
    assert.deepEqual(calls.at(-1)?.args.slice(0, 2), ['c1', { stream: true, oneShot: false }]);
    const missing = await h.request('GET', '/containers/nope/stats');
    assert.equal(missing.status, 404);
    assert.equal(missing.json.message, 'No such container: nope');
  });
});
