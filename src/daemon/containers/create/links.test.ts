// Legacy link names: parsing --link values and removing "/parent/alias" from the parent's record.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { notFound } from '../../../errors.ts';
import { parseLink, removeLegacyLink } from './links.ts';
import type { ContainerRecord } from '../record.ts';

const rec = (name: string, links: string[], networkMode = 'bridge') =>
  ({ Id: name.repeat(8), Name: `/${name}`, HostConfig: { Links: links, NetworkMode: networkMode } }) as unknown as ContainerRecord;

function finder(...recs: ContainerRecord[]) {
  return (ref: string) => {
    const name = ref.startsWith('/') ? ref : `/${ref}`;
    const r = recs.find((x) => x.Name === name);
    if (!r) throw notFound(`No such container: ${ref}`);
    return r;
  };
}

describe('legacy links', () => {
  test('parseLink: the alias defaults to the name; the inspect form is understood', () => {
    assert.deepEqual(parseLink('db'), { name: 'db', alias: 'db' });
    assert.deepEqual(parseLink('db:data'), { name: 'db', alias: 'data' });
    assert.deepEqual(parseLink('/db:/web/data'), { name: 'db', alias: 'data' });
  });

  test('removes only the named link of the parent', () => {
    const web = rec('web', ['db:data', 'cache']);
    assert.equal(removeLegacyLink('web/data', finder(web)), web);
    assert.deepEqual(web.HostConfig.Links, ['cache']);
    removeLegacyLink('/web/cache', finder(web));
    assert.deepEqual(web.HostConfig.Links, []);
  });

  test('unknown links and parents are 404s; a plain name is the default link name (409)', () => {
    const web = rec('web', ['db:data']);
    assert.throws(() => removeLegacyLink('web/other', finder(web)), { code: 'NOT_FOUND', message: 'No such container: web/other' });
    assert.throws(() => removeLegacyLink('nobody/data', finder(web)), { code: 'NOT_FOUND', message: 'No such container: nobody/data' });
    assert.throws(() => removeLegacyLink('web', finder(web)), { code: 'CONFLICT' });
    assert.throws(() => removeLegacyLink('ghost', finder(web)), { code: 'NOT_FOUND' });
    assert.deepEqual(web.HostConfig.Links, ['db:data'], 'nothing removed');
  });

  test('links of a container on a user-defined network are not names (404)', () => {
    const app = rec('app', ['db:data'], 'appnet');
    assert.throws(() => removeLegacyLink('app/data', finder(app)), { code: 'NOT_FOUND' });
    assert.deepEqual(app.HostConfig.Links, ['db:data']);
  });
});
