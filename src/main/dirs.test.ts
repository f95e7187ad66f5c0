import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { prepareRoots } from './dirs.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-dirs-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const mode = async (p: string) => (await stat(p)).mode & 0o777;

describe('prepareRoots', () => {
  it('creates data-root 0711, exec-root 0700 and <data-root>/tmp 0700, whatever the umask', async () => {
    const base = join(dir, 'fresh');
    const old = process.umask(0o177); // would make mkdir produce 0600
    let roots;
    try {
      roots = await prepareRoots(join(base, 'lib', 'engine'), join(base, 'run', 'engine'), { env: {} });
    } finally {
      process.umask(old);
    }
    assert.deepEqual(roots, {
      dataRoot: join(base, 'lib', 'engine'),
      execRoot: join(base, 'run', 'engine'),
      tmpDir: join(base, 'lib', 'engine', 'tmp'),
    });
    assert.equal(await mode(roots.dataRoot), 0o711);
    assert.equal(await mode(roots.execRoot), 0o700);
    assert.equal(await mode(roots.tmpDir), 0o700);
  });

  it('keeps the mode of directories that already exist, and empties the default tmp only when asked', async () => {
    const data = join(dir, 'existing-data');
    const exec = join(dir, 'existing-exec');
    await mkdir(join(data, 'tmp', 'leftover'), { recursive: true });
    await writeFile(join(data, 'tmp', 'leftover', 'f'), 'x');
    await writeFile(join(data, 'keep'), 'state');
    await mkdir(exec);
    await chmod(data, 0o755);
    await chmod(exec, 0o750);
    let roots = await prepareRoots(data, exec, { env: {} });
    assert.equal(await mode(data), 0o755);
    assert.equal(await mode(exec), 0o750);
    assert.deepEqual(await readdir(roots.tmpDir), ['leftover'], 'tmp is kept unless cleanTmp is asked for');
    roots = await prepareRoots(data, exec, { env: {}, cleanTmp: true });
    assert.deepEqual(await readdir(roots.tmpDir), [], 'leftovers of the last run are gone');
    assert.equal(await readFile(join(data, 'keep'), 'utf8'), 'state', 'nothing outside tmp is touched');
  });

  it('accepts symbolic links for data-root, exec-root and <data-root>/tmp and returns the real paths', async () => {
    const realData = join(dir, 'real-data');
    const realExec = join(dir, 'real-exec');
    const realTmp = join(dir, 'real-tmp');
    await mkdir(realData);
    await mkdir(realExec);
    await mkdir(realTmp);
    await writeFile(join(realTmp, 'old'), 'x');
    await symlink(realTmp, join(realData, 'tmp'));
    await symlink(realData, join(dir, 'data-link'));
    await symlink(realExec, join(dir, 'exec-link'));

    const roots = await prepareRoots(join(dir, 'data-link'), join(dir, 'exec-link'), { env: {}, cleanTmp: true });
    assert.deepEqual(roots, { dataRoot: realData, execRoot: realExec, tmpDir: realTmp });
    assert.ok((await lstat(join(realData, 'tmp'))).isSymbolicLink(), 'the tmp link survives');
    assert.ok((await lstat(join(dir, 'data-link'))).isSymbolicLink());
    assert.deepEqual(await readdir(realTmp), []);
  });

  it('uses ENGINE_TMPDIR when set, creating it 0700 and leaving its contents alone', async () => {
    const custom = join(dir, 'custom-tmp');
    const roots = await prepareRoots(join(dir, 'd2'), join(dir, 'e2'), { env: { ENGINE_TMPDIR: custom } });
    assert.equal(roots.tmpDir, custom);
    assert.equal(await mode(custom), 0o700);
    assert.equal(existsSync(join(dir, 'd2', 'tmp')), false);

    await writeFile(join(custom, 'theirs'), 'x');
    await prepareRoots(join(dir, 'd2'), join(dir, 'e2'), { env: { ENGINE_TMPDIR: custom }, cleanTmp: true });
    assert.deepEqual(await readdir(custom), ['theirs']);
  });

  it('refuses a dangling symbolic link and a path that is not a directory, naming them', async () => {
    await symlink(join(dir, 'nowhere'), join(dir, 'dangling'));
    await assert.rejects(
      prepareRoots(join(dir, 'dangling'), join(dir, 'e3'), { env: {} }),
      /data-root .*dangling: it is a symbolic link to .*nowhere, which does not exist/,
    );
    await writeFile(join(dir, 'a-file'), '');
    await assert.rejects(prepareRoots(join(dir, 'd3'), join(dir, 'a-file'), { env: {} }), /exec-root .*a-file: not a directory/);
  });
});

describe('leftovers in <data-root>/tmp after a crash', () => {
  it('a mount left there is detached, never emptied through: the mounted files survive and start-up goes on', async () => {
    const base = join(dir, 'crashed');
    const tmp = join(base, 'data', 'tmp');
    const precious = join(base, 'container-rootfs');
    await mkdir(join(tmp, 'mnt-left'), { recursive: true });
    await mkdir(precious, { recursive: true });
    await writeFile(join(precious, 'data.txt'), 'keep me');
    await writeFile(join(tmp, 'half-written'), 'x');
    const { execFileSync } = await import('node:child_process');
    execFileSync('mount', ['--bind', precious, join(tmp, 'mnt-left')]);
    try {
      const roots = await prepareRoots(join(base, 'data'), join(base, 'exec'), { env: {}, cleanTmp: true });
      assert.deepEqual(await readdir(roots.tmpDir), []);
      assert.equal(await readFile(join(precious, 'data.txt'), 'utf8'), 'keep me');
    } finally {
      try {
        execFileSync('umount', ['-l', join(tmp, 'mnt-left')], { stdio: 'ignore' });
      } catch {
        // already detached by prepareRoots: the expected case
      }
    }
  });
});
