import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resolveUser, scopedPath } from './user.ts';

const PASSWD = `root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
# a comment
www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin
app:x:1000:1000::/home/app:/bin/sh
`;
const GROUP = `root:x:0:
daemon:x:1:
wheel:x:10:root,app
www-data:x:33:
app:x:1000:
docker:x:999:app
video:x:44:
`;

describe('resolveUser', () => {
  let root: string;
  let bare: string;
  let outside: string;

  before(() => {
    const base = mkdtempSync(join(tmpdir(), 'engine-user-'));
    root = join(base, 'rootfs');
    bare = join(base, 'bare');
    outside = join(base, 'outside');
    mkdirSync(join(root, 'etc'), { recursive: true });
    mkdirSync(bare);
    mkdirSync(outside);
    writeFileSync(join(root, 'etc/passwd'), PASSWD);
    writeFileSync(join(root, 'etc/group'), GROUP);
  });
  after(() => rmSync(join(root, '..'), { recursive: true, force: true }));

  it('defaults to root with its groups', () => {
    assert.deepEqual(resolveUser(root, undefined), { uid: 0, gid: 0, additionalGids: [0, 10] });
    assert.deepEqual(resolveUser(root, ''), { uid: 0, gid: 0, additionalGids: [0, 10] });
  });

  it('resolves a name and its supplementary groups', () => {
    assert.deepEqual(resolveUser(root, 'app'), { uid: 1000, gid: 1000, additionalGids: [1000, 10, 999] });
    assert.deepEqual(resolveUser(root, 'www-data'), { uid: 33, gid: 33, additionalGids: [33] });
  });

  it('resolves a known uid like its name, and an unknown uid as is', () => {
    assert.deepEqual(resolveUser(root, '1000'), { uid: 1000, gid: 1000, additionalGids: [1000, 10, 999] });
    assert.deepEqual(resolveUser(root, '4242'), { uid: 4242, gid: 0, additionalGids: [0] });
  });

  it('name:group and uid:gid set the primary group and skip memberships', () => {
    assert.deepEqual(resolveUser(root, 'app:video'), { uid: 1000, gid: 44, additionalGids: [44] });
    assert.deepEqual(resolveUser(root, '1000:33'), { uid: 1000, gid: 33, additionalGids: [33] });
    assert.deepEqual(resolveUser(root, '5:6'), { uid: 5, gid: 6, additionalGids: [6] });
  });

  it('adds GroupAdd by name or number', () => {
    assert.deepEqual(resolveUser(root, 'www-data', ['video', '4000', 'daemon', 'www-data']), {
      uid: 33,
      gid: 33,
      additionalGids: [33, 44, 4000, 1],
    });
  });

  it('reports unknown names with dockerd messages', () => {
    assert.throws(() => resolveUser(root, 'nobody'), { message: 'unable to find user nobody: no matching entries in passwd file' });
    assert.throws(() => resolveUser(root, 'app:staff'), { message: 'unable to find group staff: no matching entries in group file' });
    assert.throws(() => resolveUser(root, 'app', ['staff']), /Unable to find group staff/);
    assert.throws(() => resolveUser(root, '99999999999'), /must be in range/);
  });

  it('works without /etc/passwd for numeric users', () => {
    assert.deepEqual(resolveUser(bare, undefined), { uid: 0, gid: 0, additionalGids: [0] });
    assert.deepEqual(resolveUser(bare, '1000:1000', ['5']), { uid: 1000, gid: 1000, additionalGids: [1000, 5] });
    assert.throws(() => resolveUser(bare, 'app'), /unable to find user app/);
  });

  it('never reads files outside the rootfs through symlinks', () => {
    const evil = join(root, '..', 'evil');
    mkdirSync(join(evil, 'etc'), { recursive: true });
    writeFileSync(join(outside, 'passwd'), 'hacker:x:0:0::/:/bin/sh\n');
    // Absolute and climbing links both stay inside the container's root.
    symlinkSync(join(outside, 'passwd'), join(evil, 'etc/passwd'));
    symlinkSync('../../../../../../outside/passwd', join(evil, 'etc/group'));
    assert.throws(() => resolveUser(evil, 'hacker'), /unable to find user hacker/);
    assert.equal(scopedPath(evil, '/etc/passwd'), join(evil, outside, 'passwd'));
    assert.equal(scopedPath(evil, '/etc/group'), join(evil, 'outside/passwd'));
  });

  it('follows symlinks that stay inside the rootfs', () => {
    const linked = join(root, '..', 'linked');
    mkdirSync(join(linked, 'real'), { recursive: true });
    writeFileSync(join(linked, 'real/passwd'), 'svc:x:700:701::/:/bin/sh\n');
    symlinkSync('/real', join(linked, 'etc'));
    assert.deepEqual(resolveUser(linked, 'svc'), { uid: 700, gid: 701, additionalGids: [701] });
  });

  it('refuses symlink loops', () => {
    const loop = join(root, '..', 'loop');
    mkdirSync(loop);
    symlinkSync('/etc', join(loop, 'etc'));
    assert.throws(() => scopedPath(loop, '/etc/passwd'), /too many symbolic links/);
  });
});
