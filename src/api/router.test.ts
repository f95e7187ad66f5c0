import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Router } from './router.ts';

test('parameters are typed from the path and filled from the URL (greedy ones across slashes)', () => {
  const r = new Router();
  const seen: string[] = [];
  r.get('/images/{name*}/json', (ctx) => {
    seen.push(ctx.params.name);
    // @ts-expect-error: the path declares no such parameter
    seen.push(ctx.params.id);
  });
  r.post('/containers/{id}/rename', (ctx) => {
    seen.push(ctx.params.id);
  });
  const m = r.match('GET', '/images/team/app%3A1/json');
  assert.ok(m.handler);
  assert.deepEqual(m.params, { name: 'team/app:1' });
  const wrongMethod = r.match('GET', '/containers/x/rename');
  assert.equal(wrongMethod.handler, null);
  assert.equal(!wrongMethod.handler && wrongMethod.pathExists, true, 'a 405, not a 404');
  assert.equal(r.match('GET', '/nothing').handler, null);
});

test('a broken %-escape in a path parameter is a 400, not a thrown URIError', () => {
  const r = new Router();
  r.get('/containers/{id}/json', () => undefined);
  assert.throws(() => r.match('GET', '/containers/%zz/json'), { code: 'INVALID_PARAMETER', message: /invalid URL escape in path: "%zz"/ });
});

test('the first registered matching route wins, across the first-segment index and parameter-first routes', () => {
  const r = new Router();
  const hits: string[] = [];
  r.get('/images/json', () => void hits.push('images-json'));
  r.get('/{kind}/json', () => void hits.push('any-json'));
  r.get('/images/{name*}', () => void hits.push('images-name'));
  r.get('/volumes', () => void hits.push('volumes'));
  const call = (path: string) => {
    const m = r.match('GET', path);
    if (!m.handler) return 'none';
    void m.handler({} as never);
    return hits.pop();
  };
  assert.equal(call('/images/json'), 'images-json');
  assert.equal(call('/networks/json'), 'any-json');
  assert.equal(call('/images/busybox'), 'images-name');
  assert.equal(call('/volumes'), 'volumes');
  assert.equal(call('/volumes/x'), 'none');
  assert.equal(call('/'), 'none');
  const m = r.match('POST', '/networks/json');
  assert.equal(!m.handler && m.pathExists, true, 'a parameter-first route still makes a 405');
});
