// scripts/check-layout.mjs on small fixture trees: each case writes a src/ tree to a temporary
// directory, runs the checker on it as the test run does, and reads its exit code and report.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { findUpwards } from '../../src/util/find-upwards.ts';

const SCRIPT = findUpwards(import.meta.url, 'scripts/check-layout.mjs');
const root = mkdtempSync(join(tmpdir(), 'engine-check-layout-'));
after(() => rmSync(root, { recursive: true, force: true }));
let trees = 0;

/** Writes the files (paths relative to src/) and runs the checker on that src/. */
function check(files: Record<string, string>, packageJson?: object): { code: number | null; out: string; err: string } {
  const src = join(root, `t${trees++}`, 'src');
  mkdirSync(src, { recursive: true });
  if (packageJson) writeFileSync(join(src, '..', 'package.json'), JSON.stringify(packageJson));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(src, rel)), { recursive: true });
    writeFileSync(join(src, rel), text);
  }
  const r = spawnSync(process.execPath, [SCRIPT!, src], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const lines = (n: number) => Array.from({ length: n }, (_, i) => `export const v${i} = ${i};`).join('\n') + '\n';

/** A tree that follows every rule: imports only go down the layers. */
const CLEAN: Record<string, string> = {
  'main/engined.ts':
    "import { serve } from '../api/server.ts';\nimport { Containers } from '../daemon/containers.ts';\nserve(new Containers());\n",
  'api/server.ts':
    "import type { Containers } from '../daemon/containers.ts';\nimport { ok } from '../errors.ts';\nexport function serve(c: Containers) { return ok(c); }\n",
  'daemon/containers.ts':
    "import type { Body } from '../types/containers.ts';\nimport { store } from '../store/db.ts';\nexport class Containers { create(b: Body) { return store(b); } }\n",
  'store/db.ts':
    "import { log } from '../util/log.ts';\nimport { events } from '../events/bus.ts';\nexport const store = (x: unknown) => { log(x); events(); };\n",
  'events/bus.ts': 'export const events = () => {};\n',
  'util/log.ts': 'export const log = (x: unknown) => console.log(x);\n',
  'types/containers.ts': "import type { Extra } from './extra.ts';\nexport interface Body { Image: string; extra?: Extra }\n",
  'types/extra.ts': 'export type Extra = string;\n',
  'errors.ts': 'export const ok = (x: unknown) => x;\n',
  'daemon/containers.test.ts': "import { fake } from '../../test/support/fake.ts';\nfake();\n",
};

describe('check-layout', () => {
  test('a clean tree passes', () => {
    const r = check(CLEAN);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /check-layout: ok \(10 files/);
  });

  test('a cycle between two folders fails, naming the folders and the files', () => {
    const r = check({
      ...CLEAN,
      'store/db.ts': "import { events } from '../events/bus.ts';\nexport const store = () => events();\n",
      'events/bus.ts': "import type { store } from '../store/db.ts';\nexport const events = (s?: typeof store) => s;\n",
    });
    assert.equal(r.code, 1);
    assert.match(r.err, /cycle between events\/, store\//);
    assert.match(r.err, /src\/events\/bus\.ts → src\/store\/db\.ts/);
    assert.match(r.err, /src\/store\/db\.ts → src\/events\/bus\.ts/);
  });

  test('a cycle through three folders of one layer is found', () => {
    const r = check({
      ...CLEAN,
      'store/db.ts': "import '../oci/spec.ts';\n",
      'oci/spec.ts': "export { x } from '../logging/driver.ts';\n",
      'logging/driver.ts': "import * as s from '../store/db.ts';\nexport const x = s;\n",
    });
    assert.equal(r.code, 1);
    assert.match(r.err, /cycle between logging\/, oci\/, store\//);
  });

  test('an upward import fails, type-only and dynamic ones included', () => {
    const r = check({
      ...CLEAN,
      'images/service.ts': "import type {\n  Containers,\n} from '../daemon/containers.ts';\nexport type C = Containers;\n",
      'oci/spec.ts':
        "export async function load() { return (await import('../api/server.ts')).serve; }\nexport type S = import('../network/x.ts').S;\n",
      'network/x.ts': 'export type S = string;\n',
    });
    assert.equal(r.code, 1);
    assert.match(r.err, /src\/images\/service\.ts imports src\/daemon\/containers\.ts \(images\/ is layer 3, daemon\/ is layer 4\)/);
    assert.match(r.err, /src\/oci\/spec\.ts imports src\/api\/server\.ts \(oci\/ is layer 2, api\/ is layer 5\)/);
    assert.match(r.err, /src\/oci\/spec\.ts imports src\/network\/x\.ts/);
  });

  test('imports in comments, strings and templates do not count', () => {
    const r = check({
      ...CLEAN,
      'util/doc.ts':
        [
          "// import { x } from '../api/server.ts';",
          "/* import('../daemon/containers.ts') */",
          'export const a = "import { y } from \'../api/server.ts\'";',
          "export const b = `${'x'} from '../api/server.ts' import('../api/server.ts')`;",
          "export const re = /'/g; export const c = 'import(\"../api/server.ts\")';",
        ].join('\n') + '\n',
    });
    assert.equal(r.code, 0, r.err);
  });

  test('a file over 800 lines fails; 800 lines pass', () => {
    assert.equal(check({ ...CLEAN, 'util/big.ts': lines(800) }).code, 0);
    const r = check({ ...CLEAN, 'util/big.ts': lines(801) });
    assert.equal(r.code, 1);
    assert.match(r.err, /src\/util\/big\.ts: 801 lines \(limit 800\)/);
  });

  test('types/ imports nothing outside itself', () => {
    const r = check({ ...CLEAN, 'types/containers.ts': "import type { log } from '../util/log.ts';\nexport type L = typeof log;\n" });
    assert.equal(r.code, 1);
    assert.match(r.err, /src\/types\/containers\.ts imports src\/util\/log\.ts/);
  });

  test('daemon code may not import test support; tests may', () => {
    const r = check({ ...CLEAN, 'store/db.ts': "import { fake } from '../../test/support/fake.ts';\nexport const store = fake;\n" });
    assert.equal(r.code, 1);
    assert.match(r.err, /src\/store\/db\.ts imports test\/support\/fake\.ts/);
  });

  test('a folder missing from the layer table fails', () => {
    const r = check({ ...CLEAN, 'gadgets/x.ts': 'export const x = 1;\n' });
    assert.equal(r.code, 1);
    assert.match(r.err, /src\/gadgets\/ \(e\.g\. src\/gadgets\/x\.ts\) is not in the layer table/);
  });

  test('main/ may import every layer', () => {
    const r = check({
      ...CLEAN,
      'main/compose.ts': "import '../api/server.ts';\nimport '../types/extra.ts';\nimport '../events/bus.ts';\n",
    });
    assert.equal(r.code, 0, r.err);
  });
});

describe('the client side (src/client/, src/cli/)', () => {
  test('the SDK may import wire types and the client-safe util files; the CLI also the SDK', () => {
    const r = check({
      'client/index.ts':
        "import type { Body } from '../types/containers.ts';\nimport { API_VERSION } from '../util/api-version.ts';\nexport const v: Body | string = API_VERSION;\n",
      'cli/main.ts': "import { v } from '../client/index.ts';\nexport const x = v;\n",
      'types/containers.ts': 'export interface Body { Image: string }\n',
      'util/api-version.ts': "export const API_VERSION = '1.51';\n",
    });
    assert.equal(r.code, 0, r.err);
  });
  test('daemon code, daemon-only util files and errors.ts are refused to the SDK and the CLI', () => {
    const r = check({
      'client/index.ts':
        "import { Containers } from '../daemon/containers.ts';\nimport { log } from '../util/log.ts';\nexport const c = [Containers, log];\n",
      'cli/main.ts': "import { ok } from '../errors.ts';\nexport const x = ok;\n",
      'daemon/containers.ts': 'export class Containers {}\n',
      'util/log.ts': 'export const log = () => {};\n',
      'errors.ts': 'export const ok = 1;\n',
    });
    assert.equal(r.code, 1);
    assert.match(r.err, /client-side imports of daemon code/);
    assert.match(r.err, /src\/client\/index\.ts imports src\/daemon\/containers\.ts/);
    assert.match(r.err, /src\/client\/index\.ts imports src\/util\/log\.ts/);
    assert.match(r.err, /src\/cli\/main\.ts imports src\/errors\.ts/);
  });
});

describe('check-layout: rooms that read well', () => {
  test('a devDependency imported by daemon code fails; by a test, or when it is a dependency, it passes', () => {
    const files = {
      ...CLEAN,
      'oci/cdi.ts': "import { parse } from 'yaml';\nexport const p = parse;\n",
      'oci/x.test.ts': "import 'prettier';\n",
    };
    const bad = check(files, { dependencies: {}, devDependencies: { yaml: '2', prettier: '3' } });
    assert.equal(bad.code, 1);
    assert.match(bad.err, /src\/oci\/cdi\.ts imports yaml, a devDependency/);
    assert.doesNotMatch(bad.err, /prettier/);
    const good = check(files, { dependencies: { yaml: '2' }, devDependencies: { prettier: '3' } });
    assert.equal(good.code, 0, good.err);
  });

  test('an import circle between files of one folder fails, naming them; a chain passes', () => {
    const chain = {
      ...CLEAN,
      'logging/a.ts': "import { b } from './b.ts';\nexport const a = b;\n",
      'logging/b.ts': 'export const b = 1;\n',
    };
    assert.equal(check(chain).code, 0);
    const r = check({ ...chain, 'logging/b.ts': "import type { a } from './a.ts';\nexport const b = 1 as unknown as typeof a;\n" });
    assert.equal(r.code, 1);
    assert.match(r.err, /import circles between the files of one folder:\n {2}logging\/: a\.ts → b\.ts/);
  });

  test('a folder over 25 files fails; 25 pass; tests do not count', () => {
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`store/f${i}.ts`, 'export {};\n']));
    const tests = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`store/f${i}.test.ts`, 'export {};\n']));
    assert.equal(check({ ...CLEAN, ...many(24), ...tests }).code, 0); // store/db.ts is the 25th
    const r = check({ ...CLEAN, ...many(25) });
    assert.equal(r.code, 1);
    assert.match(r.err, /src\/store\/: 26 files \(limit 25/);
  });

  test('a function, arrow, method or class body over 200 lines fails with its name and line; counts are printed', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  x += ${i};`).join('\n');
    const ok = check({ ...CLEAN, 'util/f.ts': `export function small(): number {\n  let x = 0;\n${body(196)}\n  return x;\n}\n` });
    assert.equal(ok.code, 0, ok.err);
    assert.match(ok.out, /largest body src\/util\/f\.ts:1 small, 200 lines/);
    const r = check({
      ...CLEAN,
      'util/f.ts': `export function big(a: number): Promise<Map<string, number>> {\n  let x = a;\n${body(200)}\n  return x as never;\n}\n`,
      'util/g.ts': `export const arrow = async (a: number) => {\n  let x = a;\n${body(200)}\n};\n`,
      'util/h.ts': `export class Big {\n  m() {\n    let x = 0;\n${body(200)}\n  }\n}\n`,
      'util/i.ts': `export function ctl(a: number) {\n  if (a) {\n${body(150)}\n  }\n  for (;;) {\n${body(150)}\n  }\n}\n`,
    });
    assert.equal(r.code, 1);
    assert.match(r.err, /src\/util\/f\.ts:1 big: 204 lines/);
    assert.match(r.err, /src\/util\/g\.ts:1 arrow: 203 lines/);
    assert.match(r.err, /src\/util\/h\.ts:1 Big: 205 lines/);
    assert.match(r.err, /src\/util\/h\.ts:2 m: 203 lines/);
    assert.match(r.err, /src\/util\/i\.ts:1 ctl: 306 lines/);
    assert.doesNotMatch(r.err, /i\.ts:2 /); // an if block is no body
  });

  test('errors swallowed without a word are offences, listed by line; those with a comment are counted', () => {
    const bad = check({
      ...CLEAN,
      'util/s.ts':
        'export async function f(p: Promise<void>) {\n  await p.catch(() => undefined);\n  await p.catch(() => undefined); // ENOENT: already gone\n' +
        '  try { await p; } catch {}\n  try { await p; } catch { return 0; }\n  try { await p; } catch {\n    // EEXIST: made by a racing start\n  }\n' +
        '  return (await p.then(() => [1]).catch(() => [] as number[])).length;\n}\n',
    });
    assert.equal(bad.code, 1, bad.out);
    assert.match(bad.err, /errors swallowed without a word/);
    assert.match(bad.err, /src\/util\/s\.ts:2\n\s+src\/util\/s\.ts:4\n\s+src\/util\/s\.ts:5\n\s+src\/util\/s\.ts:9\n/);
    assert.doesNotMatch(bad.err, /s\.ts:3\b|s\.ts:6\b/); // each with a comment naming its failure

    // The same in a test file is no offence; with every site explained the tree passes and reports the counts.
    const ok = check({
      ...CLEAN,
      'util/s.test.ts': 'export async function t(p: Promise<void>) {\n  await p.catch(() => undefined);\n  try { await p; } catch {}\n}\n',
      'util/s.ts':
        'export async function f(p: Promise<void>) {\n  await p.catch(() => undefined); // ENOENT: already gone\n' +
        '  try { await p; } catch {\n    // EEXIST: made by a racing start\n  }\n  try { await p; } catch {\n    // EPERM: not ours\n    return 0;\n  }\n  return 1;\n}\n',
    });
    assert.equal(ok.code, 0, ok.err);
    assert.match(ok.out, /swallowed errors: 0 silent, 2 catch blocks and 1 \.catch handlers with a comment only/);
  });
});
