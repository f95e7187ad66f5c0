// Container routes on a recording fake backend: statuses (201/204/304), query parsing, the wait
// and logs streams (frames without a TTY, timestamps), and 400s before the backend is asked.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import { conflict } from '../../errors.ts';
import type { LogChunk, LogChunks } from '../../types/logs.ts';
import { registerContainerRoutes, type ContainersBackend } from './containers.ts';

const entries: LogChunk[] = [
  { stream: 'stdout', line: Buffer.from('out\n'), timeNano: 1_700_000_000_000_000_001n },
  { stream: 'stderr', line: Buffer.from('err\n'), timeNano: 1_700_000_000_500_000_000n },
];

/** The entries as a driver hands them: one at a time, or in batches (an empty one among them). */
function chunks(): LogChunks {
  return {
    async *[Symbol.asyncIterator]() {
      yield* entries;
    },
    async *batches() {
      yield entries.slice(0, 1);
      yield [];
      yield entries.slice(1);
    },
  };
}

/** A driver that hands out the wire format itself: the route writes its chunks as they come. */
function wireChunks(): LogChunks {
  const lines = chunks();
  lines.frames = async function* (format) {
    yield [Buffer.from(`wire tty=${format.tty} timestamps=${format.timestamps}|`), Buffer.from('a')];
    yield [];
    yield [Buffer.from('b')];
  };
  return lines;
}

/** 16 MiB in batches of two 128 KiB chunks: the socket pushes back, the route must wait and go on. */
function bigChunks(): LogChunks {
  const lines = chunks();
  lines.frames = async function* () {
    for (let i = 0; i < 64; i++) yield [Buffer.alloc(128 * 1024, 97 + (i % 26)), Buffer.alloc(128 * 1024, 65 + (i % 26))];
  };
  return lines;
}

describe('container routes', () => {
  let started: 'started' | 'already' = 'started';
  const { backend, calls } = fakeBackend<ContainersBackend>({
    create: { Id: 'abc', Warnings: [] },
    list: [],
    inspect: { Id: 'abc' },
    start: () => started,
    stop: 'already',
    restart: undefined,
    kill: (ref: string) => {
      if (ref === 'stopped') throw conflict(`Container ${ref} is not running`);
    },
    wait: async () => async () => ({ StatusCode: 3, Error: null }),
    remove: undefined,
    rename: undefined,
    update: { Warnings: [] },
    resize: undefined,
    top: { Titles: ['PID'], Processes: [['1']] },
    logs: async (ref: string, req: { stderr: boolean }) => ({
      tty: !req.stderr,
      lines: ref === 'wire' ? wireChunks() : ref === 'big' ? bigChunks() : chunks(),
    }),
    prune: { ContainersDeleted: null, SpaceReclaimed: 0 },
  });
  const h = new RouteHarness((r) => registerContainerRoutes(r, backend));
  after(() => h.close());

  test('create is 201 with the name and API version passed on; list passes all/limit/size/filters', async () => {
    const r = await h.request('POST', '/v1.44/containers/create?name=web', { body: { Image: 'busybox' } });
    assert.equal(r.status, 201);
    assert.deepEqual(r.json, { Id: 'abc', Warnings: [] });
    assert.equal(calls.at(-1)?.args[1], 'web');
    assert.equal(calls.at(-1)?.args[2], '1.44');
    await h.request('GET', '/containers/json?all=1&limit=2&size=true');
    assert.deepEqual({ ...(calls.at(-1)?.args[0] as object), filters: undefined }, { all: true, limit: 2, size: true, filters: undefined });
  });

  test('start 204, or 304 when already started; a start body with a HostConfig is refused (API ≥ 1.24)', async () => {
    assert.equal((await h.request('POST', '/containers/abc/start')).status, 204);
    started = 'already';
    assert.equal((await h.request('POST', '/containers/abc/start')).status, 304);
    const old = await h.request('POST', '/containers/abc/start', { body: { Binds: ['/a:/b'] } });
    assert.equal(old.status, 400);
    assert.equal((await h.request('POST', '/containers/abc/stop?t=1')).status, 304);
    assert.deepEqual(calls.at(-1)?.args, ['abc', { timeout: 1 }]);
  });

  test('kill errors carry the reference; rename needs a name; resize refuses negatives', async () => {
    const k = await h.request('POST', '/containers/stopped/kill?signal=HUP');
    assert.equal(k.status, 409);
    assert.equal(k.json.message, 'cannot kill container: stopped: Container stopped is not running');
    assert.equal((await h.request('POST', '/containers/abc/rename')).status, 400);
    const neg = await h.request('POST', '/containers/abc/resize?h=-1&w=80');
    assert.equal(neg.status, 400);
    assert.equal(neg.json.message, 'invalid resize height "-1": value out of range');
    const word = await h.request('POST', '/containers/abc/resize?h=24&w=x');
    assert.equal(word.json.message, 'invalid resize width "x": invalid syntax');
    const bad = await h.request('POST', '/containers/abc/stop?t=1e3');
    assert.equal(bad.status, 400);
    assert.equal(bad.json.message, 'strconv.Atoi: parsing "1e3": invalid syntax');
    assert.equal((await h.request('POST', '/containers/abc/resize?h=24&w=80')).status, 200);
    assert.deepEqual(calls.at(-1)?.args, ['abc', 24, 80]);
  });

  test('wait answers the exit (StatusCode alone before API 1.30); a bad condition is a 400', async () => {
    assert.deepEqual((await h.request('POST', '/containers/abc/wait')).json, { StatusCode: 3, Error: null });
    assert.deepEqual((await h.request('POST', '/v1.29/containers/abc/wait')).json, { StatusCode: 3 });
    assert.equal((await h.request('POST', '/containers/abc/wait?condition=soon')).status, 400);
  });

  test('logs: frames without a TTY, raw bytes with one, timestamps with nine digits; no stream chosen is a 400', async () => {
    const framed = await h.request('GET', '/containers/abc/logs?stdout=1&stderr=1&timestamps=1');
    assert.equal(framed.headers['content-type'], 'application/vnd.docker.multiplexed-stream');
    const body = Buffer.from(framed.text, 'utf8');
    assert.equal(body[0], 1);
    assert.equal(body.readUInt32BE(4), '2023-11-14T22:13:20.000000001Z out\n'.length);
    assert.match(framed.text, /2023-11-14T22:13:20\.500000000Z err/);
    const raw = await h.request('GET', '/containers/abc/logs?stdout=1');
    assert.equal(raw.headers['content-type'], 'application/vnd.docker.raw-stream');
    assert.equal(raw.text, 'out\nerr\n');
    const wire = await h.request('GET', '/containers/wire/logs?stdout=1&stderr=1&timestamps=1');
    assert.equal(wire.text, 'wire tty=false timestamps=true|ab');
    assert.equal((await h.request('GET', '/containers/wire/logs?stdout=1')).text, 'wire tty=true timestamps=false|ab');
    const big = await h.request('GET', '/containers/big/logs?stdout=1&stderr=1');
    assert.equal(big.text.length, 16 * 1024 * 1024);
    assert.equal(big.text.slice(-3), 'LLL'); // the last chunk: 65 + 63 % 26
    assert.equal((await h.request('GET', '/containers/abc/logs')).status, 400);
    assert.equal((await h.request('GET', '/containers/abc/logs?stdout=1&tail=x')).status, 400);
    assert.equal((await h.request('GET', '/containers/abc/logs?stdout=1&since=soon')).status, 400);
  });

  test("remove passes force, v and link; top defaults to -ef; prune answers the backend's report", async () => {
    assert.equal((await h.request('DELETE', '/containers/abc?force=1&v=1')).status, 204);
    assert.deepEqual(calls.at(-1)?.args, ['abc', { force: true, volumes: true, link: false }]);
    await h.request('GET', '/containers/abc/top');
    assert.deepEqual(calls.at(-1)?.args, ['abc', '-ef']);
    assert.deepEqual((await h.request('POST', '/containers/prune')).json, { ContainersDeleted: null, SpaceReclaimed: 0 });
  });
});
