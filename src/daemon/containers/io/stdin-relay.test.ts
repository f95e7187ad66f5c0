import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { StdinRelay } from './stdin-relay.ts';

test('bytes and the end written before connect arrive in order once connected', async () => {
  const ended: string[] = [];
  const relay = new StdinRelay(async (t) => {
    ended.push('closed');
    t.end();
  });
  relay.write('one ');
  relay.write('two');
  relay.end();
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(ended, [], 'nothing closes before the process exists');
  const target = new PassThrough();
  const got: Buffer[] = [];
  target.on('data', (c: Buffer) => got.push(c));
  relay.connect(target);
  await new Promise((r) => relay.on('finish', r));
  assert.equal(Buffer.concat(got).toString(), 'one two');
  assert.deepEqual(ended, ['closed']);
  assert.equal(relay.connectedTo, target);
});

test('a slow reader holds the writer back (write returns false, drain follows)', async () => {
  const relay = new StdinRelay(async () => undefined);
  const target = new PassThrough({ highWaterMark: 16 });
  relay.connect(target);
  let ok = true;
  for (let i = 0; i < 100 && ok; i++) ok = relay.write(Buffer.alloc(4096));
  assert.equal(ok, false, 'backpressure reaches the writer');
  const drained = new Promise((r) => relay.once('drain', r));
  target.resume();
  await drained;
});
