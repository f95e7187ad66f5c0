// The Go-style body decoder: Object's own names in a body are ordinary (unknown or map) keys.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CONTAINER_CONFIG, HOST_CONFIG, decodeStruct } from './wire-schema.ts';

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
