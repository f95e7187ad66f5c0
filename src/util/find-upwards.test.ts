import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { findUpwards } from './find-upwards.ts';

test('findUpwards returns the nearest ancestor that has the path, or null', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'find-upwards-'));
  try {
    fs.mkdirSync(path.join(root, 'build'), { recursive: true });
    fs.writeFileSync(path.join(root, 'build', 'commit'), 'abc\n');
    fs.mkdirSync(path.join(root, 'dist', 'bundle', 'build'), { recursive: true }); // a same-named dir without the file
    const moduleUrl = pathToFileURL(path.join(root, 'dist', 'bundle', 'engined.js')).href;
    assert.equal(findUpwards(moduleUrl, 'build/commit'), path.join(root, 'build', 'commit'));
    fs.writeFileSync(path.join(root, 'dist', 'commit-nearer'), '');
    assert.equal(findUpwards(moduleUrl, 'commit-nearer'), path.join(root, 'dist', 'commit-nearer'));
    assert.equal(findUpwards(moduleUrl, 'no/such/file-' + process.pid), null);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
