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
