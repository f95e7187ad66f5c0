// Request/response helpers: large lists are serialised without holding the event loop, and give
// exactly what JSON.stringify gives.
import assert from 'node:assert/strict';
import { http } from '../util/node-http.ts';
import { test } from 'node:test';
import { checkNesting, MAX_JSON_DEPTH, parseBodyJson, sendJsonList } from './http.ts';
import type { EngineError } from '../errors.ts';

/** An item whose serialisation takes `ms` of CPU (as a container with many labels does). */
const slowItem = (i: number, ms: number) => ({
  toJSON() {
    const until = performance.now() + ms;
    while (performance.now() < until) {
      /* busy: the cost of a big object */
    }
    return { i, labels: { a: String(i) } };
  },
});

test('sendJsonList lets other work run while it serialises a long list, and sends plain JSON', async () => {
  const items = Array.from({ length: 40 }, (_v, i) => slowItem(i, 5)); // ~200 ms of serialising
  const server = http.createServer((_req, res) => {
    void sendJsonList(res, 200, items);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as { port: number };
    const gaps: number[] = [];
    let last = performance.now();
    let ticking = true;
    const tick = () => {
      const now = performance.now();
      gaps.push(now - last);
      last = now;
      if (ticking) setTimeout(tick, 1);
    };
    setTimeout(tick, 1);
    const started = performance.now();
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
    assert.equal(body, JSON.stringify(items));
    const total = performance.now() - started;
    // Without the slices the timer waits out the whole serialisation (one gap ≈ all of it); with
    // them it runs between ~10 ms slices. Relative bounds: the machine may be loaded.
    assert.ok(gaps.length >= 10, `the timer ran ${gaps.length} times in ${total.toFixed(0)} ms`);
    assert.ok(Math.max(...gaps) < total / 2, `longest stall ${Math.max(...gaps).toFixed(0)} ms of ${total.toFixed(0)} ms`);
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
