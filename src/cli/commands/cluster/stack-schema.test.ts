// The compose schema check: unknown keys, wrong types, oneOf alternatives, the most specific failure,
// the schema of the declared version; the loader's other refusals and warnings.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ForbiddenProperties, ignoredWarnings, loadCompose, propertyWarnings } from './stack-compose.ts';
import { composeSchemaError, composeVersion } from './stack-schema.ts';

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

test("each file is checked against its declared version's schema; versions without one are refused", () => {
  const rollback = (version?: unknown) => ({
    ...(version === undefined ? {} : { version }),
    services: { web: { image: 'busybox', deploy: { rollback_config: { parallelism: 1 } } } },
  });
  // "3", "" and no version mean the newest 3.x; a number is read as Go's %v prints it.
  for (const v of ['3', '', undefined]) assert.equal(composeVersion(rollback(v)), '3.13');
  assert.equal(composeVersion(rollback(2)), '2');
  assert.equal(composeVersion(rollback(null)), '<nil>');
  for (const v of ['3.13', '3.8', '3.7']) assert.equal(composeSchemaError(rollback(v), v), undefined, v);
  for (const v of ['3.6', '3.0'])
    assert.equal(composeSchemaError(rollback(v), v), 'services.web.deploy Additional property rollback_config is not allowed', v);
  for (const v of ['2', '2.4', '3.14', '4', '<nil>'])
    assert.equal(composeSchemaError(rollback(v), v), `unsupported Compose file version: ${v}`);
  // The older schemas' other differences: no x- keys at the root before 3.4, no secrets in 3.0,
  // ports and volumes only strings before 3.2, a number version refused by every schema.
  assert.equal(composeSchemaError({ version: '3.3', 'x-a': 1, services: {} }, '3.3'), '(root) Additional property x-a is not allowed');
  assert.equal(composeSchemaError({ version: '3.4', 'x-a': 1, services: {} }, '3.4'), undefined);
  assert.equal(
    composeSchemaError({ version: '3.0', services: {}, secrets: {} }, '3.0'),
    '(root) Additional property secrets is not allowed',
  );
  assert.equal(composeSchemaError(web({ ports: [{ target: 80 }] }), '3.1'), 'services.web.ports.0 must be a string or number');
  assert.equal(composeSchemaError({ version: 3.8, services: {} }, '3.8'), 'version must be a string');
  // The newest schema is left as it was by the older ones made from it.
  assert.equal(composeSchemaError(web({ init: true }), '3.13'), undefined);
  assert.equal(composeSchemaError(web({ init: true }), '3.5'), 'services.web Additional property init is not allowed');
  assert.equal(composeSchemaError(web({ init: true }), '3.13'), undefined);
});

test('the loader: versions of several files, forbidden service keys before the schema, ignored ones, `.` a string', async () => {
  const file = (head: string, extra = '') => ({ path: 'f.yml', text: `${head}services:\n  web:\n    image: busybox\n${extra}` });
  await assert.rejects(
    loadCompose([file('version: "3.8"\n'), file('')], {}),
    /^Error: version mismatched between two composefiles : 3\.8 and 3\.13$/,
  );
  await assert.rejects(loadCompose([file('version: "2"\n')], {}), /^Error: unsupported Compose file version: 2$/);
  // Forbidden keys are refused before the version or the schema is looked at.
  await assert.rejects(loadCompose([file('version: "2"\n', '    extends: x\n    cpuset: "1"\n')], {}), (e: unknown) => {
    assert.ok(e instanceof ForbiddenProperties);
    assert.equal(
      propertyWarnings(e.properties),
      'cpuset: Set resource limits using deploy.resources\n\nextends: Support for `extends` is not implemented yet.',
    );
    return true;
  });
  const compose = await loadCompose(
    [file('', '    build: .\n    privileged: true\n    expose: ["80"]\n    labels: {a: .5, b: 0440}\n')],
    {},
  );
  assert.equal(compose.services.web.build, '.');
  assert.deepEqual(compose.services.web.labels, { a: 0.5, b: 288 });
  assert.equal(
    ignoredWarnings(compose),
    'Ignoring unsupported options: build, privileged\n\nIgnoring deprecated options:\n\n' +
      "expose: Exposing ports is unnecessary - services on the same network can access each other's containers on any port.\n\n",
  );
  assert.equal(ignoredWarnings(await loadCompose([file('')], {})), '');
});
