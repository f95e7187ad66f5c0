// Issue 23, section 4: error answers — status and words as dockerd gives them, for the inputs
// clients and hostile callers send: bodies that are not JSON, user patterns in filters, archive
// paths the file system refuses, device nodes in an archive, platforms, padded build contexts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { tarToBuffer } from '../../src/util/tar-writer.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';

describe('error answers', () => {
  let d: TestDaemon;
  let id = '';

  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
    const r = await d.docker(['run', '-d', '--name', 'answers', 'busybox', 'sleep', '600']);
    assert.equal(r.code, 0, r.stderr);
    id = r.stdout.trim();
  });

  after(async () => {
    await d?.cleanup();
  });

  const answer = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const r = await d.request(method, path, { ...(body !== undefined ? { body } : {}), ...(headers ? { headers } : {}) });
    return { status: r.status, message: r.body.length ? (r.json() as { message?: string }).message : undefined };
  };
  const json = { 'Content-Type': 'application/json' };

  test("bodies that are not JSON get Go's decoder words and a 400 on every route", async () => {
    const cases: [string, string, string, string][] = [
      ['POST', '/containers/create', '{i}', "invalid JSON: invalid character 'i' looking for beginning of object key string"],
      [
        'POST',
        '/containers/create',
        '{"Image":"busybox",}',
        "invalid JSON: invalid character '}' looking for beginning of object key string",
      ],
      ['POST', '/networks/create', '{"Name":"x" "Driver":"bridge"}', `invalid JSON: invalid character '"' after object key:value pair`],
      ['POST', '/volumes/create', '{"Name":', 'invalid JSON: unexpected EOF'],
      ['POST', `/containers/${id}/update`, '{"Memory":tru}', "invalid JSON: invalid character '}' in literal true (expecting 'e')"],
      ['POST', `/containers/${id}/exec`, '{"Cmd":["true"]}{"x":1}', 'unexpected content after JSON'],
      ['POST', '/containers/create', '[1,2]', 'invalid JSON: json: cannot unmarshal array into Go value of type container.CreateRequest'],
      [
        'POST',
        '/containers/create',
        '{"Image":"busybox","Env":"A=1"}',
        'invalid JSON: json: cannot unmarshal string into Go struct field ContainerConfig.Env of type []string',
      ],
    ];
    for (const [method, path, body, want] of cases) {
      const r = await answer(method, path, body, json);
      assert.deepEqual(r, { status: 400, message: want }, `${method} ${path} ${body}`);
    }
    // Go reads the first value and stops at a closing bracket: accepted as by dockerd.
    const ok = await answer('POST', '/volumes/create', '{"Name":"answers-vol"}}', json);
    assert.equal(ok.status, 201, ok.message);
    const filter = await answer('GET', `/containers/json?filters=${encodeURIComponent('{"name":"x"')}`);
    assert.deepEqual(filter, { status: 400, message: 'invalid filter' });
  });

  test('removing a running container: 409 quoting the reference as given', async () => {
    for (const ref of ['answers', id.slice(0, 12)]) {
      const r = await answer('DELETE', `/containers/${ref}`);
      assert.deepEqual(r, {
        status: 409,
        message: `cannot remove container "${ref}": container is running: stop the container before removing or force remove`,
      });
    }
  });

  test('name filters are Go regular expressions: hostile or invalid patterns are no 500 and no stall', async () => {
    const names = async (pattern: string) => {
      const started = Date.now();
      const r = await d.request('GET', `/containers/json?all=1&filters=${encodeURIComponent(JSON.stringify({ name: [pattern] }))}`);
      assert.equal(r.status, 200, r.text());
      return { names: (r.json() as Array<{ Names: string[] }>).map((c) => c.Names[0]), ms: Date.now() - started };
    };
    assert.deepEqual((await names('^/answ[e]rs$')).names, ['/answers']);
    assert.deepEqual((await names('(?i)ANSWERS')).names, ['/answers']);
    // Invalid in Go: dockerd skips the pattern (no match), it does not refuse the request.
    assert.deepEqual((await names('((')).names, []);
    assert.deepEqual((await names('x'.repeat(100_000))).names, []);
    const slow = await names('(a+)+$');
    assert.deepEqual(slow.names, []);
    assert.deepEqual((await names('^answers$')).names, ['/answers'], 'the name without its slash too, as dockerd');
    // Network names too are Go regular expressions in dockerd (not substrings).
    const nets = await d.request('GET', `/networks?filters=${encodeURIComponent(JSON.stringify({ name: ['^br.dge$'] }))}`);
    assert.deepEqual(
      (nets.json() as Array<{ Name: string }>).map((n) => n.Name),
      ['bridge'],
    );
    const vols = await d.request('GET', `/volumes?filters=${encodeURIComponent(JSON.stringify({ name: ['[z-a]'] }))}`);
    assert.equal(vols.status, 200, vols.text());
    const refs = await d.request(
      'GET',
      `/images/json?filters=${encodeURIComponent(JSON.stringify({ reference: ['*a'.repeat(3000) + 'x'] }))}`,
    );
    assert.equal(refs.status, 200, refs.text());
    assert.deepEqual(refs.json(), []);
  });

  test('archive paths the file system refuses: 400 with the container path, never the host path', async () => {
    const long = 'b'.repeat(300);
    for (const method of ['GET', 'HEAD']) {
      const r = await d.request(method, `/containers/answers/archive?path=/etc/${long}`);
      assert.equal(r.status, 400, `${method}: ${r.text()}`);
      if (method === 'GET') assert.equal(r.json().message, `lstat /etc/${long}: file name too long`);
    }
    const nul = await d.request('GET', '/containers/answers/archive?path=/etc%00x');
    assert.equal(nul.status, 400);
    assert.equal(nul.json().message, 'lstat /etc\u0000x: invalid argument');
    const deep = await d.request('HEAD', `/containers/answers/archive?path=${'/a'.repeat(3000)}`);
    assert.equal(deep.status, 404);
    const longEntry = await tarToBuffer(async (tw) => tw.file('n'.repeat(300), 'x'));
    const put = await answer('PUT', '/containers/answers/archive?path=/tmp', longEntry, { 'Content-Type': 'application/x-tar' });
    assert.deepEqual(put, { status: 400, message: `lstat /tmp/${'n'.repeat(300)}: file name too long` });
  });

  test('device nodes in a PUT archive are made where the kernel allows, never a 500', async () => {
    const tar = await tarToBuffer(async (tw) => {
      await tw.entry({ name: 'cdev', type: 'char', devmajor: 1, devminor: 3, mode: 0o666 });
      await tw.entry({ name: 'pipe', type: 'fifo', mode: 0o644 });
      await tw.file('after.txt', 'after');
    });
    const r = await d.request('PUT', '/containers/answers/archive?path=/tmp', {
      body: tar,
      headers: { 'Content-Type': 'application/x-tar' },
    });
    assert.equal(r.status, 200, r.text());
    // The entries after the nodes are there whatever happened to the nodes.
    const ls = await d.docker(['exec', 'answers', 'cat', '/tmp/after.txt']);
    assert.equal(ls.stdout, 'after');
  });

  test('platforms: invalid ones are 400 in containerd words, another platform than the image is 404', async () => {
    const bad = await answer('POST', '/containers/create?platform=bogus', { Image: 'busybox' });
    assert.deepEqual(bad, { status: 400, message: '"bogus": unknown operating system or architecture: invalid argument' });
    const wild = await answer('POST', '/containers/create?platform=linux/*', { Image: 'busybox' });
    assert.deepEqual(wild, { status: 400, message: '"linux/*": wildcards not yet supported: invalid argument' });
    const other = await answer('POST', '/containers/create?platform=linux/s390x', { Image: 'busybox' });
    assert.equal(other.status, 404);
    assert.match(
      other.message ?? '',
      /^image with reference busybox(:latest)? was found but its platform \(linux\/amd64\) does not match the specified platform \(linux\/s390x\)$/,
    );
    const same = await answer('POST', '/containers/create?platform=linux/amd64', { Image: 'busybox' });
    assert.equal(same.status, 201, same.message);
    // An image of another architecture: created with dockerd's warning when no platform is asked
    // for; asked for by its platform it is found; asked for by the host's it is not.
    const layer = await tarToBuffer(async (tw) => tw.file('hello', 'arm'));
    const imported = await d.request('POST', '/images/create?fromSrc=-&repo=answers-arm&tag=1&platform=linux/arm64', {
      body: layer,
      headers: { 'Content-Type': 'application/x-tar' },
    });
    assert.equal(imported.status, 200, imported.text());
    const foreign = await d.request('POST', '/containers/create', { body: { Image: 'answers-arm:1', Cmd: ['x'] } });
    assert.equal(foreign.status, 201, foreign.text());
    const warnings = (foreign.json() as { Warnings: string[] }).Warnings;
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.match(
      warnings[0]!,
      /^The requested image's platform \(linux\/arm64\) does not match the detected host platform \(linux\/amd64\/v[1-4]\) and no specific platform was requested$/,
    );
    const asked = await answer('POST', '/containers/create?platform=linux/arm64', { Image: 'answers-arm:1', Cmd: ['x'] });
    assert.equal(asked.status, 201, asked.message);
    const host = await answer('POST', '/containers/create?platform=linux/amd64', { Image: 'answers-arm:1', Cmd: ['x'] });
    assert.deepEqual(host, {
      status: 404,
      message:
        'image with reference answers-arm:1 was found but its platform (linux/arm64) does not match the specified platform (linux/amd64)',
    });
    const plain = await d.request('POST', '/containers/create', { body: { Image: 'busybox', Cmd: ['true'] } });
    assert.deepEqual((plain.json() as { Warnings: string[] }).Warnings, []);
    const pull = await d.request('POST', '/images/create?fromImage=busybox&tag=latest&platform=a/b/c/d');
    assert.equal(pull.status, 400);
    assert.equal(pull.json().message, '"a/b/c/d": cannot parse platform specifier: invalid argument');
  });

  test('a build context that is an empty tar padded with zeros is refused at once, nothing written', async () => {
    const headers = { 'Content-Type': 'application/x-tar' };
    for (const body of [
      Buffer.alloc(16 << 20),
      Buffer.concat([await tarToBuffer(async (tw) => tw.file('README', 'no dockerfile')), Buffer.alloc(32 << 20)]),
    ]) {
      const started = Date.now();
      const r = await answer('POST', '/build', body, headers);
      // dockerd's words; its status is a 500 (a plain error), this daemon's the 400 of a client error.
      assert.deepEqual(r, { status: 400, message: 'Cannot locate specified Dockerfile: Dockerfile' });
      assert.ok(Date.now() - started < 30_000);
    }
  });
});
