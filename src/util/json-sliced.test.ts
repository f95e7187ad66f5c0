// The sliced JSON parse and stringify give exactly what the native calls give, errors included.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { knownJsonText, parseJsonSliced, rememberJsonText, spliceJson, stringifyJsonSliced } from './json-sliced.ts';

const many = (n: number, f: (i: number) => [string, unknown]) => Object.fromEntries(Array.from({ length: n }, (_v, i) => f(i)));

const samples: Array<[string, string]> = [
  ['labels', JSON.stringify({ Image: 'busybox', Labels: many(50_000, (i) => [`l.key.${i}`, `v${i}`]) })],
  ['env', JSON.stringify({ Image: 'busybox', Env: Array.from({ length: 131_072 }, (_v, i) => `V${i}=${i}`) })],
  ['string', JSON.stringify({ Image: 'busybox', Labels: { big: 'x\\"é\u2028'.repeat(500_000) } })],
  // whitespace everywhere, nested big containers, repeated keys across chunks, index keys, __proto__
  [
    'spaced',
    ` \n{ "a" : [ ${Array.from({ length: 30_000 }, (_v, i) => `{ "k" : ${i} , "s" : "\\u00e9\\n" }`).join(' ,\n ')} ] ,\t"b": { ${Array.from(
      { length: 20_000 },
      (_v, i) => `"k${i % 15_000}" : ${i}`,
    ).join(' , ')} , "__proto__": {"x": 1}, "7": true, "n": null } , "c": [[${'[1,2,3],'.repeat(20_000)}[]]] } \r\n`,
  ],
  ['top-level array', JSON.stringify(Array.from({ length: 40_000 }, (_v, i) => (i % 3 ? `s${i}` : { i, f: i / 7, t: true, n: null })))],
  // containers nested deeper than the sliced depth: the inner ones are parsed natively
  ['deep', `${'['.repeat(20)}${JSON.stringify(Array.from({ length: 30_000 }, (_v, i) => i))}${']'.repeat(20)}`],
];

test('parseJsonSliced gives what JSON.parse gives', async () => {
  for (const [name, text] of samples) {
    const got = await parseJsonSliced(text);
    const want = JSON.parse(text);
    assert.deepEqual(got, want, name);
    assert.equal(JSON.stringify(got), JSON.stringify(want), `${name}: order`);
    if (name === 'spaced') {
      const b = (got as { b: object }).b;
      assert.equal(Object.getPrototypeOf(b), Object.prototype, '__proto__ is an own key, not the prototype');
      assert.deepEqual(Object.getOwnPropertyDescriptor(b, '__proto__')?.value, { x: 1 });
    }
  }
});

test('parseJsonSliced throws JSON.parse errors for text that is not JSON', async () => {
  const body = JSON.stringify({ Labels: many(20_000, (i) => [`k${i}`, `v${i}`]) });
  const bad = [
    body.slice(0, -1),
    `${body}x`,
    body.replace('"k100":', '"k100"'),
    body.replace('"k100":"v100"', '"k100":"v100",'),
    body.replace('"k100":"v100"', '"k100":v100'),
    body.replace('"k19999":"v19999"}', '"k19999":"v19999"]'),
    `[${body},]`,
    `${body.slice(0, 1000)}\u0001${body.slice(1000)}`,
    `\ufeff${body}`,
  ];
  for (const text of bad) {
    let want: Error | undefined;
    try {
      JSON.parse(text);
    } catch (err) {
      want = err as Error;
    }
    assert.ok(want, 'the sample is invalid');
    await assert.rejects(parseJsonSliced(text), (err: Error) => err.constructor === want.constructor && err.message === want.message);
  }
});

test('parseJsonSliced lets other work run while it parses megabytes', async () => {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  await parseJsonSliced(samples[0]![1]);
  clearInterval(timer);
  assert.ok(ticks > 0, 'timers ran during the parse');
});

test('stringifyJsonSliced gives what JSON.stringify gives', async () => {
  class WithToJson {
    toJSON() {
      return { via: 'toJSON' };
    }
  }
  const values: unknown[] = [
    ...samples.map(([, t]) => JSON.parse(t)),
    { a: undefined, b: () => 1, c: Symbol('x'), d: [undefined, () => 1, new Date(0)], e: new WithToJson(), f: Object.create(null) },
    { big: many(3000, (i) => [String(i % 2 ? i : `k${i}`), i % 5 ? `v${i}` : undefined]) },
    undefined,
    'text',
    42,
    null,
    [],
    {},
    JSON.parse(`${'[{"a":'.repeat(500)}1${'}]'.repeat(500)}`),
    // long strings go in pieces: pairs split at a piece boundary, lone surrogates, escapes
    'x😀'.repeat(400_000),
    { s: `${'y'.repeat(256 * 1024 - 1)}😀"\\\n${'\ud800'.repeat(300_000)}` },
    ['\udc00'.repeat(300_000), 'é'.repeat(600_000)],
  ];
  for (const v of values) assert.equal(await stringifyJsonSliced(v), JSON.stringify(v));
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = { again: cyclic };
  await assert.rejects(stringifyJsonSliced(cyclic), TypeError);
});

test('spliceJson puts a known text in a member’s place, keeping the key order', () => {
  const labels = { b: '2', a: '"1"' };
  rememberJsonText(labels, JSON.stringify(labels));
  const outer = { Id: 'x', Labels: labels, Tail: ['t', { n: null }] };
  assert.equal(spliceJson(outer, 'Labels', knownJsonText(labels)!), JSON.stringify(outer));
  assert.equal(knownJsonText({}), undefined);
});
