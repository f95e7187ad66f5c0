// Sealing of secret data: round trip, nothing of the plain text in the sealed form, a fresh nonce
// per seal, and refusal of a wrong key, another object's ID or altered bytes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newDataKey, open, seal } from './secret-crypto.ts';

test('seal and open: round trip, no plain text, fresh nonce', () => {
  const key = newDataKey();
  assert.equal(Buffer.from(key, 'base64').length, 32);
  const data = Buffer.from('the password is hunter2');
  const a = seal(key, 'id1', data);
  const b = seal(key, 'id1', data);
  assert.notEqual(a, b);
  assert.ok(!a.includes('hunter2') && !a.includes(data.toString('base64')));
  assert.deepEqual(open(key, 'id1', a), data);
  assert.deepEqual(open(key, 'id1', b), data);
});

test('open refuses a wrong key, another ID and altered bytes', () => {
  const key = newDataKey();
  const sealed = seal(key, 'id1', Buffer.from('secret'));
  assert.throws(() => open(newDataKey(), 'id1', sealed));
  assert.throws(() => open(key, 'id2', sealed));
  const parts = sealed.split('.');
  const body = Buffer.from(parts[2]!, 'base64');
  body[0] = body[0]! ^ 1;
  parts[2] = body.toString('base64');
  assert.throws(() => open(key, 'id1', parts.join('.')));
  assert.throws(() => open(key, 'id1', 'garbage'), /not a sealed value/);
  assert.throws(() => seal('c2hvcnQ=', 'id1', Buffer.from('x')), /32 bytes/);
});
