// Tests of the COPY/ADD source checksum: stable, blind to mtimes, sensitive to names, data, modes,
// owners, link targets; large files hashed in pieces.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, describe, test } from 'node:test';
import { checksumSources, fileDigest, releaseDigestBuffer } from './checksum.ts';
import { resolveSources } from './copy-sources.ts';

const base = mkdtempSync(`${tmpdir()}/checksum-test-`);
after(() => rmSync(base, { recursive: true, force: true }));
let n = 0;

function tree(): string {
  const c = `${base}/${n++}`;
  mkdirSync(`${c}/src/sub`, { recursive: true });
  writeFileSync(`${c}/src/a.txt`, 'alpha');
  writeFileSync(`${c}/src/sub/b.txt`, 'beta');
  symlinkSync('a.txt', `${c}/src/link`);
  writeFileSync(`${c}/top.txt`, 'top');
  return c;
}

const sum = async (c: string, srcs = ['src', 'top.txt'], opts = {}) =>
  checksumSources(await resolveSources(c, srcs, { cmd: 'COPY', dest: '/d/', isContext: true }), opts);

describe('source checksum', () => {
  test('same content in another place and at another time: same checksum', async () => {
    const a = tree();
    const b = tree();
    utimesSync(`${b}/src/a.txt`, 5, 5);
    utimesSync(`${b}/src/sub`, 5, 5);
    const s = await sum(a);
    assert.match(s, /^sha256:[0-9a-f]{64}$/);
    assert.equal(await sum(b), s);
    assert.equal(await sum(a), s);
  });

  test('data, names, modes, owners, link targets and source order each change it', async () => {
    const ref = await sum(tree());
    const variants: Array<[string, (c: string) => void]> = [
      ['data', (c) => writeFileSync(`${c}/src/sub/b.txt`, 'betA')],
      ['name', (c) => { writeFileSync(`${c}/src/sub/c.txt`, 'beta'); unlinkSync(`${c}/src/sub/b.txt`); }],
      ['mode', (c) => chmodSync(`${c}/src/a.txt`, 0o600)],
      ['owner', (c) => chownSync(`${c}/src/a.txt`, 1000, 1000)],
      ['link', (c) => { unlinkSync(`${c}/src/link`); symlinkSync('sub/b.txt', `${c}/src/link`); }],
      ['new file', (c) => writeFileSync(`${c}/src/new`, '')],
      ['dir mode', (c) => chmodSync(`${c}/src/sub`, 0o700)],
    ];
    const seen = new Set([ref]);
    for (const [what, change] of variants) {
      const c = tree();
      change(c);
      const s = await sum(c);
      assert.ok(!seen.has(s), `${what} did not change the checksum`);
      seen.add(s);
    }
    const c = tree();
    assert.notEqual(await sum(c, ['top.txt', 'src']), ref);
  });

  test('--chown and --chmod replace the sources\' owners and modes in the checksum', async () => {
    const a = tree();
    const b = tree();
    chownSync(`${b}/src/a.txt`, 1000, 1000);
    chmodSync(`${b}/src/a.txt`, 0o600);
    const opts = { owner: { uid: 0, gid: 0 }, mode: 0o755 };
    assert.equal(await sum(a, undefined, opts), await sum(b, undefined, opts));
    assert.notEqual(await sum(a, undefined, opts), await sum(a));
  });

  test('a large file is hashed in pieces and gives the plain SHA-256 of its data', () => {
    const path = `${base}/big`;
    const data = Buffer.alloc((3 << 20) + 123, 1);
    data[2 << 20] = 9;
    writeFileSync(path, data);
    assert.equal(fileDigest(path, data.length), createHash('sha256').update(data).digest('hex'));
    writeFileSync(`${base}/empty`, '');
    assert.equal(fileDigest(`${base}/empty`, 0), createHash('sha256').digest('hex'));
  });

  test('after the read buffer is let go (a build ended), digests of small and large files are the same', () => {
    const big = Buffer.alloc((1 << 20) + 77, 3);
    big[5] = 1;
    writeFileSync(`${base}/big2`, big);
    writeFileSync(`${base}/small2`, 'small');
    const want = [createHash('sha256').update(big).digest('hex'), createHash('sha256').update('small').digest('hex')];
    assert.deepEqual([fileDigest(`${base}/big2`), fileDigest(`${base}/small2`)], want);
    releaseDigestBuffer();
    assert.deepEqual([fileDigest(`${base}/small2`), fileDigest(`${base}/big2`)], want.toReversed());
    releaseDigestBuffer();
    assert.deepEqual([fileDigest(`${base}/big2`), fileDigest(`${base}/small2`)], want);
  });
});
