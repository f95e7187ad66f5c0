// The compose schema check: unknown keys, wrong types, oneOf alternatives, the most specific failure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { composeSchemaError } from './stack-schema.ts';

const web = (extra: Record<string, unknown>) => ({ version: '3.8', services: { web: { image: 'busybox', ...extra } } });

test('a valid file passes; x- keys are free', () => {
  assert.equal(composeSchemaError(web({ ports: ['80', { target: 81, published: 8081 }], environment: ['A=1'], 'x-note': [1] })), undefined);
  assert.equal(composeSchemaError({ ...web({}), 'x-anchors': { a: 1 } }), undefined);
});

test('unknown keys and wrong types in the docker CLI words; the deepest failure wins, a type failure a tie', () => {
  assert.equal(composeSchemaError(web({ foo: 1 })), 'services.web Additional property foo is not allowed');
  assert.equal(composeSchemaError({ ...web({}), bogus: 1 }), '(root) Additional property bogus is not allowed');
  assert.equal(composeSchemaError(web({ ports: '80' })), 'services.web.ports must be a list');
  assert.equal(composeSchemaError(web({ deploy: { replicas: 'x' } })), 'services.web.deploy.replicas must be a integer');
  assert.equal(composeSchemaError(web({ deploy: 5 })), 'services.web.deploy must be a mapping or null');
  // oneOf: the first alternative speaks when none has the value's type; the matching one otherwise.
  assert.equal(composeSchemaError(web({ environment: 3 })), 'services.web.environment must be a mapping');
  assert.equal(composeSchemaError(web({ ports: [{ target: 'x' }] })), 'services.web.ports.0.target must be a integer');
  assert.equal(composeSchemaError(web({ foo: 1, deploy: { mode: 5 } })), 'services.web.deploy.mode must be a string');
  assert.equal(
    composeSchemaError(web({ logging: { options: { a: [1] } } })),
    'services.web.logging.options.a must be a string, number or null',
  );
});
