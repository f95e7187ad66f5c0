// Tests of .dockerignore reading and matching (moby/patternmatcher semantics).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dockerfileIgnorePath, goClean, IgnoreMatcher, readIgnoreFile } from './dockerignore.ts';

const ig = (patterns: string, path: string) => IgnoreMatcher.fromFile(patterns).ignores(path);

describe('dockerignore', () => {
  test('reading: comments at column 0, trimming, cleaning, leading slash, exceptions', () => {
    assert.deepEqual(readIgnoreFile('\uFEFF# c\n  #notcomment \n\n/abs/x/\n ! ./keep/../kept \nsub/./y\n/\n'), [
      '#notcomment',
      'abs/x',
      '!kept',
      'sub/y',
      '/',
    ]);
    assert.equal(goClean(''), '.');
    assert.equal(goClean('a//b/../c/'), 'a/c');
  });

  test('exact names, directories and their contents', () => {
    assert.equal(ig('node_modules', 'node_modules'), true);
    assert.equal(ig('node_modules', 'node_modules/x/y.js'), true);
    assert.equal(ig('node_modules', 'src/node_modules'), false);
    assert.equal(ig('/build/', 'build/out'), true);
    assert.equal(ig('a/b', 'a/b/c'), true);
    assert.equal(ig('a/b', 'a/bc'), false);
  });

  test('globs: * and ? stay within a path segment, [] classes, escapes', () => {
    assert.equal(ig('*.log', 'x.log'), true);
    assert.equal(ig('*.log', 'dir/x.log'), false);
    assert.equal(ig('*/*.log', 'dir/x.log'), true);
    assert.equal(ig('file?.txt', 'file1.txt'), true);
    assert.equal(ig('file?.txt', 'file10.txt'), false);
    assert.equal(ig('[ab].txt', 'b.txt'), true);
    assert.equal(ig('[ab].txt', 'c.txt'), false);
    assert.equal(ig('a\\*b', 'a*b'), true);
    assert.equal(ig('a\\*b', 'axb'), false);
    assert.equal(ig('a.b', 'axb'), false);
  });

  test('** matches any number of directories, also below a matched one', () => {
    assert.equal(ig('**/*.go', 'a/b/c.go'), true);
    assert.equal(ig('**/*.go', 'c.go'), true);
    assert.equal(ig('**/vendor', 'x/y/vendor/z/w'), true);
    assert.equal(ig('docs/**', 'docs/a/b'), true);
    assert.equal(ig('docs/**', 'docsx'), false);
    assert.equal(ig('a/**/z', 'a/z'), true);
    assert.equal(ig('a/**/z', 'a/b/c/z'), true);
    assert.equal(ig('**', 'anything/at/all'), true);
  });

  test('exceptions: later patterns win; a kept file inside an ignored directory', () => {
    const m = IgnoreMatcher.fromFile('*.md\n!README.md\nREADME-secret.md\ndocs\n!docs/keep.txt\n');
    assert.equal(m.hasExceptions, true);
    assert.equal(m.ignores('CHANGES.md'), true);
    assert.equal(m.ignores('README.md'), false);
    assert.equal(m.ignores('README-secret.md'), true);
    assert.equal(m.ignores('docs/other.txt'), true);
    assert.equal(m.ignores('docs/keep.txt'), false);
    assert.equal(IgnoreMatcher.fromFile('*\n!src\n').ignores('src/a/b.ts'), false);
    assert.equal(IgnoreMatcher.fromFile('x').hasExceptions, false);
    assert.throws(() => new IgnoreMatcher(['!']), /illegal exclusion pattern/);
  });

  test('hostile patterns do not backtrack exponentially', () => {
    const t = performance.now();
    const m = IgnoreMatcher.fromFile(`${'**/'.repeat(25)}z\n${'*a'.repeat(25)}b\n`);
    assert.equal(m.ignores(`${'d/'.repeat(100)}y`), false);
    assert.equal(m.ignores('a'.repeat(100)), false);
    assert.ok(performance.now() - t < 30_000); // exponential backtracking would take hours
  });

  test('the context root is never ignored; empty matcher ignores nothing', () => {
    assert.equal(ig('*', '.'), false);
    assert.equal(new IgnoreMatcher([]).ignores('a'), false);
    assert.equal(new IgnoreMatcher([]).empty, true);
  });

  test('build files: the Dockerfile-specific ignore file', () => {
    assert.equal(dockerfileIgnorePath('build/Dockerfile.dev'), 'build/Dockerfile.dev.dockerignore');
    assert.equal(dockerfileIgnorePath('/Dockerfile'), 'Dockerfile.dockerignore');
  });
});
