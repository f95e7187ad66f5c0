// docker ps filters on records: each name a predicate, values of one name OR-ed, names AND-ed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EngineError, notFound } from '../../errors.ts';
import { compileFilters, type FilterContext } from './filters.ts';
import { initialState, type ContainerRecord } from './record.ts';

function rec(
  id: string,
  name: string,
  over: {
    created: string;
    status?: 'running' | 'exited' | 'created';
    exitCode?: number;
    labels?: Record<string, string>;
    image?: string;
    ports?: string[];
  },
): ContainerRecord {
  return {
    Id: id,
    Name: name,
    Created: over.created,
    Image: over.image ?? 'sha256:busybox',
    ImageRef: 'busybox',
    State: { ...initialState(), Status: over.status ?? 'created', Running: over.status === 'running', ExitCode: over.exitCode ?? 0 },
    Config: { Labels: over.labels ?? {}, ExposedPorts: Object.fromEntries((over.ports ?? []).map((p) => [p, {}])) },
    HostConfig: { NetworkMode: 'bridge' },
    Mounts: [{ Type: 'volume', Name: 'data', Source: '/v/data', Destination: '/data', Mode: '', RW: true, Propagation: '' }],
  } as unknown as ContainerRecord;
}

const web = rec('aaa111', '/web', {
  created: '2030-01-01T00:00:01Z',
  status: 'running',
  labels: { tier: 'front', env: 'prod' },
  ports: ['80/tcp'],
});
const db = rec('bbb222', '/db', {
  created: '2030-01-01T00:00:02Z',
  status: 'exited',
  exitCode: 3,
  labels: { tier: 'back' },
  image: 'sha256:postgres',
});
const job = rec('ccc333', '/job-1', { created: '2030-01-01T00:00:03Z', status: 'exited', exitCode: 0 });
const all = [web, db, job];

const ctx: FilterContext = {
  resolve: (ref) =>
    all.find((r) => r.Name === `/${ref}` || r.Id === ref) ??
    (() => {
      throw notFound(`No such container: ${ref}`);
    })(),
  ancestorImageIds: (ref) => new Set(ref === 'postgres' ? ['sha256:postgres'] : []),
  networksOf: (r) => (r === web ? ['bridge', 'front-net'] : ['bridge']),
};

function names(filters: Record<string, string[]>): string[] {
  const match = compileFilters(new Map(Object.entries(filters)), ctx);
  return all.filter(match).map((r) => r.Name);
}

test('values of one filter are OR-ed, different filters AND-ed', () => {
  assert.deepEqual(names({ status: ['running', 'exited'] }), ['/web', '/db', '/job-1']);
  assert.deepEqual(names({ status: ['exited'], label: ['tier'] }), ['/db']);
  assert.deepEqual(names({ label: ['tier=front', 'env=prod'] }), ['/web'], 'label values must all match');
});

test('id prefix, name regex, exited code, ancestor, before/since, volume, network, expose', () => {
  assert.deepEqual(names({ id: ['bbb'] }), ['/db']);
  assert.deepEqual(names({ name: ['^/job-\\d$'] }), ['/job-1']);
  assert.deepEqual(names({ name: ['d'] }), ['/db'], 'a regex anywhere in the name');
  assert.deepEqual(names({ name: ['^job-1$'] }), ['/job-1'], 'and against the name without its slash, as dockerd');
  assert.deepEqual(names({ exited: ['3'] }), ['/db']);
  assert.deepEqual(names({ ancestor: ['postgres'] }), ['/db']);
  assert.deepEqual(names({ before: ['job-1'] }), ['/web', '/db']);
  assert.deepEqual(names({ since: ['web'] }), ['/db', '/job-1']);
  assert.deepEqual(names({ volume: ['data'] }), ['/web', '/db', '/job-1']);
  assert.deepEqual(names({ volume: ['other'] }), []);
  assert.deepEqual(names({ network: ['front-net'] }), ['/web']);
  assert.deepEqual(names({ expose: ['80'] }), ['/web']);
  assert.deepEqual(names({ health: ['none'] }), ['/web', '/db', '/job-1']);
});

test('unknown filters and bad values are 400s; before/since an unknown container 404', () => {
  const status = (f: Record<string, string[]>) => {
    try {
      names(f);
      return 0;
    } catch (e) {
      assert.ok(e instanceof EngineError);
      return e.status;
    }
  };
  assert.equal(status({ colour: ['red'] }), 400);
  assert.equal(status({ status: ['sleeping'] }), 400);
  assert.equal(status({ exited: ['x'] }), 400);
  assert.equal(status({ health: ['great'] }), 400);
  assert.equal(status({ before: ['nope'] }), 404);
});
