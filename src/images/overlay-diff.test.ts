// The overlay upper directory → layer tar translation, on a real overlay mount (root needed):
// whiteouts, opaque directories, hard links, symlinks, fifos, xattrs; and the checks that send a
// commit to the diff service instead.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, symlinkSync, linkSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { readTar, type TarHeader } from './tar-reader.ts';
import { TarWriter } from '../util/tar-writer.ts';
import { parseGetfattr, readUpperXattrs, upperDirOf, writeUpperTar, xattrsFastPathable } from './overlay-diff.ts';

describe('overlay upper directory as a layer', () => {
  let dir = '';
  let upper = '';
  const entries = new Map<string, { h: TarHeader; data: string }>();
  let order: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(os.tmpdir(), 'ovl-diff-'));
    const [lower, work, merged] = [join(dir, 'lower'), join(dir, 'work'), join(dir, 'merged')] as const;
    upper = join(dir, 'upper');
    for (const d of [lower, upper, work, merged]) mkdirSync(d);
    mkdirSync(join(lower, 'd'));
    writeFileSync(join(lower, 'd', 'x'), 'x');
    writeFileSync(join(lower, 'd', 'y'), 'y');
    mkdirSync(join(lower, 'keep'));
    writeFileSync(join(lower, 'keep', 'old'), 'old');
    writeFileSync(join(lower, 'gone.txt'), 'gone');
    writeFileSync(join(lower, 'a.txt'), 'lower a');
    execFileSync('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${lower},upperdir=${upper},workdir=${work}`, merged]);
    try {
      unlinkSync(join(merged, 'gone.txt')); // → whiteout device
      rmSync(join(merged, 'd'), { recursive: true }); // then recreated → opaque directory
      mkdirSync(join(merged, 'd'));
      writeFileSync(join(merged, 'd', 'new'), 'new');
      writeFileSync(join(merged, 'keep', 'added'), 'added'); // copied-up directory, not opaque
      writeFileSync(join(merged, 'a.txt'), 'upper a');
      writeFileSync(join(merged, 'h1'), 'linked');
      writeFileSync(join(merged, 'big'), Buffer.alloc(3 << 20, 7)); // read in several pieces
      linkSync(join(merged, 'h1'), join(merged, 'h2'));
      symlinkSync('a.txt', join(merged, 's'));
      execFileSync('mkfifo', [join(merged, 'fifo')]);
      execFileSync('python3', ['-c', `import os; os.setxattr(${JSON.stringify(join(merged, 'a.txt'))}, 'user.note', b'hello')`]);
    } finally {
      execFileSync('umount', [merged]);
    }
    // Linked from outside the layer (the builder's COPY links context files into the upper
    // directory): nlink 2, still one regular file in the layer.
    writeFileSync(join(dir, 'outside'), 'shared');
    linkSync(join(dir, 'outside'), join(upper, 'from-context'));
    const xattrs = await readUpperXattrs(upper);
    assert.ok(xattrs, 'getfattr read the tree');
    assert.ok(xattrsFastPathable(xattrs));
    // The walk reuses its read buffer once the sink returns: chunks are copied.
    const chunks: Buffer[] = [];
    await writeUpperTar(upper, xattrs, new TarWriter((c) => void chunks.push(Buffer.from(c))));
    for await (const e of readTar([Buffer.concat(chunks)])) {
      const parts: Buffer[] = [];
      for await (const c of e.body) parts.push(c);
      entries.set(e.header.name, { h: e.header, data: Buffer.concat(parts).toString() });
    }
    order = [...entries.keys()];
  });

  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test('a deleted file becomes a .wh. entry, a recreated directory an opaque one', () => {
    const wh = entries.get('.wh.gone.txt');
    assert.ok(wh, `entries: ${order.join(' ')}`);
    assert.equal(wh.h.kind, 'file');
    assert.equal(wh.h.size, 0);
    assert.equal(entries.get('d/')?.h.kind, 'directory');
    assert.ok(entries.has('d/.wh..wh..opq'), 'opaque marker');
    assert.equal(entries.get('d/new')?.data, 'new');
    assert.ok(!entries.has('d/x') && !entries.has('gone.txt'));
    // The opaque marker comes right after its directory, before the directory's entries.
    assert.equal(order.indexOf('d/.wh..wh..opq'), order.indexOf('d/') + 1);
  });

  test('a copied-up directory carries only what changed, without an opaque marker', () => {
    assert.equal(entries.get('keep/')?.h.kind, 'directory');
    assert.equal(entries.get('keep/added')?.data, 'added');
    assert.ok(!entries.has('keep/old') && !entries.has('keep/.wh..wh..opq'));
  });

  test('files, hard links, symlinks, fifos and user xattrs; overlay xattrs left out', () => {
    assert.equal(entries.get('a.txt')?.data, 'upper a');
    assert.equal(entries.get('a.txt')?.h.pax['SCHILY.xattr.user.note'], 'hello');
    assert.equal(entries.get('h1')?.data, 'linked');
    assert.equal(entries.get('h2')?.h.kind, 'link');
    assert.equal(entries.get('h2')?.h.linkname, 'h1');
    assert.equal(entries.get('s')?.h.kind, 'symlink');
    assert.equal(entries.get('s')?.h.linkname, 'a.txt');
    assert.equal(entries.get('fifo')?.h.kind, 'fifo');
    assert.equal(entries.get('from-context')?.h.kind, 'file');
    assert.equal(entries.get('from-context')?.data, 'shared');
    assert.equal(entries.get('big')?.data, Buffer.alloc(3 << 20, 7).toString());
    for (const [name, e] of entries)
      assert.ok(!Object.keys(e.h.pax).some((k) => k.includes('trusted.overlay')), `${name} carries an overlay xattr`);
    // Walk order: lexical by the name on disk (a whiteout sorts where the deleted entry did).
    const onDisk = order.map((n) => n.replace(/(^|\/)\.wh\.(?!\.wh\.)/, '$1'));
    assert.deepEqual(onDisk, [...onDisk].sort(), 'lexical order');
  });
});

describe('when the fast path does not apply', () => {
  test('upperDirOf: only a single overlay mount without redirect_dir / metacopy / volatile', () => {
    const ovl = (...o: string[]) => [
      { type: 'overlay', source: 'overlay', options: ['index=off', 'workdir=/w', 'upperdir=/u', 'lowerdir=/l', ...o] },
    ];
    assert.equal(upperDirOf(ovl()), '/u');
    assert.equal(upperDirOf(ovl('redirect_dir=off')), '/u');
    assert.equal(upperDirOf(ovl('redirect_dir=on')), null);
    assert.equal(upperDirOf(ovl('metacopy=on')), null);
    assert.equal(upperDirOf(ovl('volatile')), null);
    assert.equal(upperDirOf([{ type: 'bind', source: '/x', options: ['rbind', 'rw'] }]), null);
  });

  test('xattrsFastPathable: redirects, metacopy, xattr whiteouts and binary values are refused', () => {
    const one = (name: string, value: Buffer) => new Map([['/u/f', new Map([[name, value]])]]);
    assert.ok(xattrsFastPathable(one('trusted.overlay.opaque', Buffer.from('y'))));
    assert.ok(xattrsFastPathable(one('trusted.overlay.origin', Buffer.from([0, 0xfb, 1]))));
    assert.ok(xattrsFastPathable(one('user.x', Buffer.from('text'))));
    assert.ok(!xattrsFastPathable(one('trusted.overlay.opaque', Buffer.from('x'))));
    assert.ok(!xattrsFastPathable(one('trusted.overlay.redirect', Buffer.from('/a'))));
    assert.ok(!xattrsFastPathable(one('trusted.overlay.metacopy', Buffer.alloc(0))));
    assert.ok(!xattrsFastPathable(one('security.capability', Buffer.from([1, 0, 0, 2, 0xff, 0xfe]))));
  });

  test('parseGetfattr: escaped names and base64 values', () => {
    const m = parseGetfattr(
      [
        '# file: /u/with\\040space\\012nl',
        'user.a=0saGk=',
        'trusted.overlay.opaque="y"',
        '',
        '# file: /u/back\\\\slash',
        'user.b=0s',
        '',
      ].join('\n'),
    );
    assert.equal(m.get('/u/with space\nnl')?.get('user.a')?.toString(), 'hi');
    assert.equal(m.get('/u/with space\nnl')?.get('trusted.overlay.opaque')?.toString(), 'y');
    assert.equal(m.get('/u/back\\slash')?.get('user.b')?.length, 0);
  });
});
