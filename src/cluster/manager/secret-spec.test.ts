// Secret and config objects without a cluster: create/update checks with swarmkit's messages and
// limits, views (a secret's data never shown), filters, lookup, service references and the files
// and mounts a task gets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  checkCreate,
  checkRefsExist,
  checkUpdate,
  fileObjectView,
  fileRefs,
  filterFileObjects,
  findFileObject,
  inUse,
  type FileObjectRecord,
} from './secret-spec.ts';
import { checkServiceSpec } from './service-spec.ts';
import { fileMounts, taskFiles } from '../agent/task-files.ts';
import type { TaskRecord } from './tasks.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const rec = (ID: string, Name: string, Labels: Record<string, string> = {}): FileObjectRecord => ({
  ID,
  CreatedAt: 'c',
  UpdatedAt: 'u',
  Spec: { Name, Labels },
  Sealed: 'x',
});
const code = (c: string, re: RegExp) => (e: Error & { code?: string }) => e.code === c && re.test(e.message);

test('create checks: name, data, size limits, drivers and templating', () => {
  const { spec, data } = checkCreate('secrets', { Name: 's1', Labels: { a: 'b' }, Data: b64('pw') });
  assert.deepEqual(spec, { Name: 's1', Labels: { a: 'b' } });
  assert.equal(data.toString(), 'pw');
  assert.throws(() => checkCreate('secrets', { Data: b64('x') }), code('INVALID_PARAMETER', /name must be provided/));
  assert.throws(() => checkCreate('secrets', { Name: '-bad', Data: b64('x') }), /only 64 \[a-zA-Z0-9-_.\] characters allowed/);
  assert.throws(() => checkCreate('secrets', { Name: 's', Data: '' }), /secret data must be larger than 0 and less than 512000 bytes/);
  assert.throws(() => checkCreate('secrets', { Name: 's', Data: '!!!' }), /must be base64/);
  const big = Buffer.alloc(500 * 1024).toString('base64');
  assert.throws(() => checkCreate('secrets', { Name: 's', Data: big }), /less than 512000 bytes/);
  assert.equal(checkCreate('configs', { Name: 'c', Data: big }).data.length, 500 * 1024);
  assert.throws(() => checkCreate('secrets', { Name: 's', Data: b64('x'), Driver: { Name: 'vault' } }), code('NOT_IMPLEMENTED', /drivers/));
  // Templating is kept (any driver name: swarmkit fails the task of an unknown one).
  assert.deepEqual(checkCreate('configs', { Name: 'c', Data: b64('x'), Templating: { Name: 'golang' } }).spec, {
    Name: 'c',
    Labels: {},
    Templating: { Name: 'golang' },
  });
  assert.deepEqual(
    checkCreate('secrets', { Name: 's', Data: b64('x'), Templating: { Name: 'other', Options: { a: 'b' } } }).spec.Templating,
    {
      Name: 'other',
      Options: { a: 'b' },
    },
  );
  assert.throws(() => checkCreate('secrets', { Name: 's', Data: b64('x'), Templating: 'golang' }), /invalid Templating/);
  // Keys in any case, as Go decodes them (docker-py sends {"name": "golang"}).
  assert.deepEqual(checkCreate('configs', { Name: 'c', Data: b64('x'), Templating: { name: 'golang' } }).spec.Templating, {
    Name: 'golang',
  });
  const view = fileObjectView(
    'configs',
    { ...rec('id9', 'c', {}), Spec: { Name: 'c', Labels: {}, Templating: { Name: 'golang' } } },
    3,
    Buffer.from('x'),
  );
  assert.deepEqual(Object.keys(view.Spec as object), ['Name', 'Labels', 'Data', 'Templating']);
  // An update of the labels keeps the templating.
  const templated = { ...rec('id9', 'c', {}), Spec: { Name: 'c', Labels: {}, Templating: { Name: 'golang' } } };
  assert.deepEqual(checkUpdate('configs', templated, Buffer.from('x'), { Name: 'c', Labels: { l: '1' } }), {
    Name: 'c',
    Labels: { l: '1' },
    Templating: { Name: 'golang' },
  });
});

test('update: labels only', () => {
  const cur = rec('id1', 's1', { a: 'b' });
  assert.deepEqual(checkUpdate('secrets', cur, Buffer.from('pw'), { Name: 's1', Labels: { c: 'd' } }), { Name: 's1', Labels: { c: 'd' } });
  assert.throws(
    () => checkUpdate('secrets', cur, Buffer.from('pw'), { Name: 's2' }),
    code('INVALID_PARAMETER', /only updates to Labels are allowed/),
  );
  // As swarmkit: the same data is no change (docker stack deploy sends it back), other data is refused.
  assert.deepEqual(checkUpdate('secrets', cur, Buffer.from('pw'), { Name: 's1', Data: b64('pw'), Labels: { e: 'f' } }).Labels, { e: 'f' });
  assert.throws(() => checkUpdate('secrets', cur, Buffer.from('pw'), { Name: 's1', Data: b64('pw2') }), /only updates to Labels/);
  // The CLI sends a config's spec back with its data: the same data is no change.
  assert.deepEqual(checkUpdate('configs', cur, Buffer.from('pw'), { Name: 's1', Data: b64('pw'), Labels: {} }).Labels, {});
  assert.throws(() => checkUpdate('configs', cur, Buffer.from('pw'), { Name: 's1', Data: b64('other') }), /only updates to Labels/);
});

test('views, filters and lookup', () => {
  const r = rec('abc123', 's1', { env: 'prod' });
  const secret = fileObjectView('secrets', r, 7, Buffer.from('pw'));
  assert.deepEqual(secret, {
    ID: 'abc123',
    Version: { Index: 7 },
    CreatedAt: 'c',
    UpdatedAt: 'u',
    Spec: { Name: 's1', Labels: { env: 'prod' } },
  });
  assert.equal((fileObjectView('configs', r, 7, Buffer.from('pw')).Spec as { Data: string }).Data, b64('pw'));
  const all = [r, rec('abd456', 's10'), rec('xyz', 'other', { env: 'dev' })];
  const ids = (f: Record<string, string[]>) => filterFileObjects(all, new Map(Object.entries(f))).map((o) => o.ID);
  assert.deepEqual(ids({ name: ['s1'] }), ['abc123', 'abd456']);
  assert.deepEqual(ids({ names: ['s1'] }), ['abc123']);
  assert.deepEqual(ids({ id: ['ab'] }), ['abc123', 'abd456']);
  assert.deepEqual(ids({ label: ['env'] }), ['abc123', 'xyz']);
  assert.deepEqual(ids({ label: ['env=dev'] }), ['xyz']);
  assert.throws(() => ids({ bogus: ['x'] }), /invalid filter 'bogus'/);
  assert.equal(findFileObject('secrets', all, 'other').ID, 'xyz');
  assert.equal(findFileObject('secrets', all, 'abc').ID, 'abc123');
  assert.throws(() => findFileObject('secrets', all, 'ab'), /ambiguous/);
  assert.throws(() => findFileObject('configs', all, 'nope'), code('NOT_FOUND', /^config nope not found$/));
});

test('service references: shape, targets, existence, in use', () => {
  const tt = {
    ContainerSpec: {
      Image: 'busybox',
      Secrets: [{ SecretID: 'id1', SecretName: 's1', File: { Name: 's1', UID: '0', GID: '0', Mode: 0o444 } }],
      Configs: [{ ConfigID: 'id2', ConfigName: 'c1', File: { Name: '/etc/c1.conf', UID: '1000', GID: '1000', Mode: 0o440 } }],
    },
  };
  assert.deepEqual(fileRefs('secrets', tt), [
    { id: 'id1', name: 's1', file: 's1', target: '/run/secrets/s1', uid: 0, gid: 0, mode: 0o444 },
  ]);
  assert.deepEqual(fileRefs('configs', tt), [
    { id: 'id2', name: 'c1', file: '/etc/c1.conf', target: '/etc/c1.conf', uid: 1000, gid: 1000, mode: 0o440 },
  ]);
  assert.equal(fileRefs('configs', { ContainerSpec: { Configs: [{ ConfigID: 'i', ConfigName: 'c2', File: {} }] } })[0]!.target, '/c2');
  assert.ok(checkServiceSpec({ Name: 'web', TaskTemplate: tt }));
  assert.throws(() => fileRefs('secrets', { ContainerSpec: { Secrets: [{ SecretName: 's1', File: {} }] } }), /malformed secret reference/);
  assert.throws(
    () => fileRefs('secrets', { ContainerSpec: { Secrets: [{ SecretID: 'i', SecretName: 's1' }] } }),
    /malformed file secret reference/,
  );
  assert.throws(
    () => fileRefs('configs', { ContainerSpec: { Configs: [{ ConfigID: 'i', ConfigName: 'c', Runtime: {} }] } }),
    code('NOT_IMPLEMENTED', /Runtime/),
  );
  const twice = { ContainerSpec: { Secrets: ['a', 'b'].map((n) => ({ SecretID: n, SecretName: n, File: { Name: 'same' } })) } };
  assert.throws(() => fileRefs('secrets', twice), /secret references 'a' and 'b' have a conflicting target: 'same'/);
  checkRefsExist('secrets', fileRefs('secrets', tt), [rec('id1', 's1')]);
  assert.throws(() => checkRefsExist('secrets', fileRefs('secrets', tt), [rec('id1', 'renamed')]), /desc = secret not found: s1$/);
  const two = { ContainerSpec: { Secrets: ['a', 'b'].map((n) => ({ SecretID: n, SecretName: n, File: { Name: n } })) } };
  assert.throws(() => checkRefsExist('secrets', fileRefs('secrets', two), []), /secrets not found: a, b$/);
  assert.match(inUse('secrets', 's1', ['web']).message, /desc = secret 's1' is in use by the following service: web$/);
  assert.match(inUse('configs', 'c1', ['a', 'b']).message, /config 'c1' is in use by the following services: a, b$/);

  const task = { ID: 't1', Spec: tt } as unknown as TaskRecord;
  const node = { hostname: 'h', os: 'linux', architecture: 'x86_64' };
  const files = taskFiles(task, { secrets: { id1: b64('pw') }, configs: { id2: b64('conf') } }, node);
  assert.deepEqual(
    files.map((f) => [f.target, f.uid, f.mode, f.data.toString()]),
    [
      ['/run/secrets/s1', 0, 0o444, 'pw'],
      ['/etc/c1.conf', 1000, 0o440, 'conf'],
    ],
  );
  assert.deepEqual(fileMounts('/x', files)[0], { Type: 'bind', Source: '/x/secrets-0-id1', Target: '/run/secrets/s1', ReadOnly: true });
  assert.throws(() => taskFiles(task, { secrets: {}, configs: {} }, node), /secret s1 not found: its data was not delivered/);
});
