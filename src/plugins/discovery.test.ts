import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { locatePlugin } from './discovery.ts';

describe('plugin discovery', () => {
  let dir: string;
  const servers: Array<ReturnType<typeof createServer>> = [];
  const listen = async (path: string) => {
    const s = createServer();
    servers.push(s);
    await new Promise<void>((r) => s.listen(path, r));
  };
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-plugins-'));
    await mkdir(join(dir, 'run', 'nested'), { recursive: true });
    await mkdir(join(dir, 'etc'), { recursive: true });
    await listen(join(dir, 'run', 'flat.sock'));
    await listen(join(dir, 'run', 'nested', 'nested.sock'));
    await writeFile(join(dir, 'etc', 'byurl.spec'), 'tcp://127.0.0.1:8080\n');
    await writeFile(
      join(dir, 'etc', 'byjson.json'),
      JSON.stringify({ Name: 'byjson', Addr: 'https://plugins.example:443', TLSConfig: { InsecureSkipVerify: true, CAFile: '/ca.pem' } }),
    );
    await writeFile(join(dir, 'etc', 'bad.json'), '{');
  });
  after(async () => {
    for (const s of servers) s.close();
    await rm(dir, { recursive: true, force: true });
  });
  const dirs = () => ({ sockets: [join(dir, 'run')], specs: [join(dir, 'etc')] });

  test('sockets by name, flat or in a directory of the same name; sockets first', async () => {
    assert.deepEqual(await locatePlugin('flat', dirs()), { name: 'flat', socketPath: join(dir, 'run', 'flat.sock') });
    assert.deepEqual(await locatePlugin('nested', dirs()), { name: 'nested', socketPath: join(dir, 'run', 'nested', 'nested.sock') });
  });

  test('spec files: a URL in .spec, Name/Addr/TLSConfig in .json; an absolute path works too', async () => {
    assert.deepEqual(await locatePlugin('byurl', dirs()), { name: 'byurl', url: 'http://127.0.0.1:8080' });
    const j = await locatePlugin('byjson', dirs());
    assert.equal(j.url, 'https://plugins.example');
    assert.deepEqual(j.tls, { caFile: '/ca.pem', insecureSkipVerify: true });
    assert.deepEqual(await locatePlugin(join(dir, 'etc', 'byurl.spec')), { name: 'byurl', url: 'http://127.0.0.1:8080' });
  });

  test('unknown names are 404s, bad names and bad specs 400s', async () => {
    await assert.rejects(locatePlugin('nothere', dirs()), (e: Error & { status?: number }) => e.status === 404);
    await assert.rejects(locatePlugin('../escape', dirs()), (e: Error & { status?: number }) => e.status === 400);
    await assert.rejects(locatePlugin('bad', dirs()), /not valid JSON/);
  });
});
