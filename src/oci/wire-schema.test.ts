// The Go-style body decoder: Object's own names in a body are ordinary (unknown or map) keys.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CONTAINER_CONFIG, HOST_CONFIG, decodeStruct, goFold } from './wire-schema.ts';

test('"constructor" and "__proto__" in a body are unknown fields or plain map keys, never Object\'s', () => {
  const body = JSON.parse('{"Healthcheck":{"constructor":{"polluted":true}},"constructor":1,"Labels":{"__proto__":"x","a":"b"}}');
  const out = decodeStruct(body, CONTAINER_CONFIG, 'Config');
  assert.deepEqual(out.Healthcheck, {});
  assert.equal(Object.hasOwn(out, 'constructor'), false);
  const labels = out.Labels as Record<string, string>;
  assert.equal(Object.getPrototypeOf(labels), Object.prototype);
  assert.deepEqual(Object.keys(labels), ['__proto__', 'a']);
  assert.equal(JSON.stringify(labels), '{"__proto__":"x","a":"b"}');
  const ports = decodeStruct(JSON.parse('{"PortBindings":{"__proto__":[{"HostPort":"80"}]}}'), HOST_CONFIG, 'HostConfig')
    .PortBindings as object;
  assert.equal(Object.getPrototypeOf(ports), Object.prototype);
  assert.throws(
    () => decodeStruct(JSON.parse('{"Labels":{"constructor":1}}'), CONTAINER_CONFIG, 'Config'),
    /Config\.Labels of type string/,
  );
});

test('field names match in any case and come out canonical; unknown fields are dropped', () => {
  const out = decodeStruct(
    { image: 'busybox', ENTRYPOINT: 'sh', healthcheck: { test: ['CMD', 'true'], startinterval: 5 }, Bogus: 1 },
    CONTAINER_CONFIG,
    'Config',
  );
  assert.deepEqual(out, { Image: 'busybox', Entrypoint: ['sh'], Healthcheck: { Test: ['CMD', 'true'], StartInterval: 5 } });
  // Map keys are data: never changed.
  assert.deepEqual(decodeStruct({ labels: { MixedCase: 'v' } }, CONTAINER_CONFIG, 'Config'), { Labels: { MixedCase: 'v' } });
  // Type errors name the canonical field whatever the key's case.
  assert.throws(() => decodeStruct({ tty: 'yes' }, CONTAINER_CONFIG, 'Config'), {
    message: 'invalid JSON: json: cannot unmarshal string into Go struct field Config.Tty of type bool',
  });
});

test('Go folds KELVIN SIGN to K and LONG S to S, and nothing else non-ASCII', () => {
  assert.equal(goFold('Kernel\u212a\u017fx'), 'KERNELKSX');
  assert.deepEqual(decodeStruct({ '\u017ftopSignal': 'SIGINT', 'wor\u212aingdir': '/w' }, CONTAINER_CONFIG, 'Config'), {
    StopSignal: 'SIGINT',
    WorkingDir: '/w',
  });
  // Other letters that lower-case to ASCII in JavaScript do not match in Go.
  assert.deepEqual(decodeStruct({ '\u0130mage': 'x' }, CONTAINER_CONFIG, 'Config'), {});
});

test('two keys naming one field: the later wins, objects merge (Go decodes into the existing value)', () => {
  assert.deepEqual(decodeStruct({ Image: 'a', image: 'b' }, CONTAINER_CONFIG, 'Config'), { Image: 'b' });
  assert.deepEqual(decodeStruct({ image: 'b', Image: 'a' }, CONTAINER_CONFIG, 'Config'), { Image: 'a' });
  assert.deepEqual(decodeStruct({ Healthcheck: { Test: ['NONE'], Retries: 2 }, healthcheck: { retries: 3 } }, CONTAINER_CONFIG, 'Config'), {
    Healthcheck: { Test: ['NONE'], Retries: 3 },
  });
  assert.deepEqual(decodeStruct({ Labels: { a: '1' }, labels: { b: '2' } }, CONTAINER_CONFIG, 'Config'), { Labels: { a: '1', b: '2' } });
  // A null is "not set": it leaves the earlier value.
  assert.deepEqual(decodeStruct({ Image: 'a', image: null }, CONTAINER_CONFIG, 'Config'), { Image: 'a' });
});
