// Request/response helpers: large lists are serialised without holding the event loop, and give
// exactly what JSON.stringify gives.
import assert from 'node:assert/strict';
import { http } from '../util/node-http.ts';
import { test } from 'node:test';
import { checkNesting, MAX_JSON_DEPTH, parseBodyJson, sendJsonList } from './http.ts';
import type { EngineError } from '../errors.ts';

/** What happened, in order: an item serialised ('i') or the timer ran ('t'). */
let trace: string[] = [];

/** An item whose serialisation takes `ms` of CPU (as a container with many labels does). */
const slowItem = (i: number, ms: number) => ({
  toJSON() {
    const until = performance.now() + ms;
    while (performance.now() < until) {
      /* busy: the cost of a big object */
    }
    trace.push('i');
    return { i, labels: { a: String(i) } };
  },
});

test('sendJsonList lets other work run while it serialises a long list, and sends plain JSON', async () => {
  const items = Array.from({ length: 40 }, (_v, i) => slowItem(i, 5)); // ~200 ms of serialising
  trace = [];
  const server = http.createServer((_req, res) => {
    void sendJsonList(res, 200, items);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as { port: number };
    let ticking = true;
    const tick = () => {
      trace.push('t');
      if (ticking) setTimeout(tick, 1);
    };
    setTimeout(tick, 1);
    const body = await new Promise<string>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/' }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve(text));
        })
        .on('error', reject);
    });
    ticking = false;
    const text = trace.join(''); // before the comparison below serialises the items again
    assert.equal(body, JSON.stringify(items));
    // Counted, not timed: without the slices all 40 items serialise in one turn (one run of 'i',
    // the timer before or after it); with ~10 ms slices the timer runs between runs of 2-3 items.
    // A loaded machine only makes the slices hold fewer items.
    const firstItem = text.indexOf('i');
    const lastItem = text.lastIndexOf('i');
    const runs = text.slice(firstItem, lastItem + 1).split(/t+/).length;
    assert.ok(runs >= 4, `the timer ran between the items only ${runs - 1} times: ${text.slice(firstItem, lastItem + 1)}`);
  } finally {
    server.close();
  }
});

test('checkNesting: a body nested deeper than MAX_JSON_DEPTH is a 400 naming its top-level field; strings do not count', () => {
  const deep = `{"Labels":{"a":"[[[["},"TaskTemplate":${'['.repeat(MAX_JSON_DEPTH + 5)}${']'.repeat(MAX_JSON_DEPTH + 5)}}`;
  assert.throws(
    () => checkNesting(deep),
    (err: EngineError) => err.status === 400 && /^invalid JSON: TaskTemplate: nested more than 512 levels deep$/.test(err.message),
  );
  const ok = `{"a":${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)},"s":"${'['.repeat(5000)}\\"["}`;
  assert.doesNotThrow(() => checkNesting(ok));
  assert.throws(() => checkNesting('['.repeat(MAX_JSON_DEPTH + 1)), /^EngineError: invalid JSON: nested more than 512/);
});

test("parseBodyJson refuses bodies that are not JSON with dockerd's words and status", async () => {
  const refusal = async (text: string) => {
    try {
      await parseBodyJson(Buffer.from(text));
    } catch (err) {
      assert.equal((err as EngineError).status, 400);
      return (err as Error).message;
    }
    assert.fail(`accepted ${JSON.stringify(text)}`);
  };
  assert.equal(await refusal('{i}'), "invalid JSON: invalid character 'i' looking for beginning of object key string");
  assert.equal(await refusal('{"Image":'), 'invalid JSON: unexpected EOF');
  assert.equal(await refusal('  '), 'invalid JSON: got EOF while reading request body');
  assert.equal(await refusal('{"a":1}{"b":2}'), 'unexpected content after JSON');
  // Go reads the first value and stops at a closing bracket: accepted, as by dockerd.
  assert.deepEqual(await parseBodyJson(Buffer.from('{"a":1}}')), { a: 1 });
  // A large body (parsed in slices) gets the same words.
  const large = `{"Env":[${Array.from({ length: 40_000 }, (_v, i) => `"K${i}=v"`).join(',')}],}`;
  assert.equal(await refusal(large), "invalid JSON: invalid character '}' looking for beginning of object key string");
});
