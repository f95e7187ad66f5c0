// Tests of the Dockerfile's resolution in the context (dockerd's classic builder: joined and
// cleaned, symlinks followed inside the root, dockerd's wording and statuses).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { readDockerfile } from './dockerfile-file.ts';

const root = mkdtempSync(join(tmpdir(), 'dockerfile-file-'));
const ctx = join(root, 'ctx');
mkdirSync(join(ctx, 'sub'), { recursive: true });
writeFileSync(join(root, 'outside'), 'FROM outside\n');
writeFileSync(join(ctx, 'sub', 'Dockerfile'), 'FROM sub\n');
writeFileSync(join(ctx, '.dockerfile.1a2b3c'), 'FROM generated\n');
writeFileSync(join(ctx, 'empty'), '');
symlinkSync('/sub/Dockerfile', join(ctx, 'abs-link'));
symlinkSync('../../../sub/Dockerfile', join(ctx, 'up-link'));
symlinkSync('../outside', join(ctx, 'out-link'));

const fails = (name: string, status: number, message: string) =>
  assert.throws(() => readDockerfile(ctx, name), (e: Error & { status?: number }) => e.status === status && e.message === message, name);

describe('readDockerfile', () => {
  after(() => rmSync(root, { recursive: true, force: true }));

  test('names are joined to the root and cleaned; symlinks resolve inside it', () => {
    assert.equal(readDockerfile(ctx, 'sub/Dockerfile').text, 'FROM sub\n');
    assert.equal(readDockerfile(ctx, '/sub/Dockerfile').text, 'FROM sub\n');
    assert.equal(readDockerfile(ctx, './sub/../sub/Dockerfile').text, 'FROM sub\n');
    assert.equal(readDockerfile(ctx, '.dockerfile.1a2b3c').text, 'FROM generated\n');
    assert.equal(readDockerfile(ctx, 'abs-link').text, 'FROM sub\n');
    assert.equal(readDockerfile(ctx, 'up-link').text, 'FROM sub\n');
    // A link leading out stays inside: `../outside` from the root is `/outside` in it.
    fails('out-link', 400, 'Cannot locate specified Dockerfile: out-link');
  });

  test("dockerd's answers: outside the context, missing, a directory, empty", () => {
    fails('../outside', 400, 'forbidden path outside the build context: ../outside ()');
    fails('nope', 400, 'Cannot locate specified Dockerfile: nope');
    fails('Dockerfile', 400, 'Cannot locate specified Dockerfile: Dockerfile');
    fails('sub', 400, `unexpected error reading Dockerfile: read ${join(ctx, 'sub')}: is a directory`);
    fails('empty', 400, 'the Dockerfile (empty) cannot be empty');
  });

  test('a missing default Dockerfile falls back to dockerfile', () => {
    writeFileSync(join(ctx, 'dockerfile'), 'FROM lower\n');
    try {
      assert.deepEqual(readDockerfile(ctx, 'Dockerfile'), { name: 'dockerfile', text: 'FROM lower\n' });
      fails('other', 400, 'Cannot locate specified Dockerfile: other');
    } finally {
      rmSync(join(ctx, 'dockerfile'));
    }
  });
});
