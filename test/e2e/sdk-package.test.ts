// Issue 27: the SDK as an npm package. scripts/pack-sdk.mjs packs src/client; the tarball holds the
// client, the wire types and the client-safe helpers only (no daemon module, no import of a package
// or of anything outside it), and installs offline into a scratch project, where the repository's
// TypeScript type-checks every example of the package's README against the emitted declarations
// (and refuses a wrong one), and the first example, compiled, runs against a live daemon.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { REPO_ROOT, run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';

const NODE = join(REPO_ROOT, 'bin/node');
const TSC = join(REPO_ROOT, 'node_modules/typescript/bin/tsc');

describe('the SDK package (@engine/client)', () => {
  let tarball: string;
  let project: string;
  before(async () => {
    const packed = await run(NODE, [join(REPO_ROOT, 'scripts/pack-sdk.mjs')], { cwd: REPO_ROOT });
    assert.equal(packed.code, 0, packed.stderr);
    tarball = packed.stdout.trim().split('\n').pop()!;
    project = await mkdtemp(join(tmpdir(), 'engine-sdk-'));
  });
  after(async () => project && rm(project, { recursive: true, force: true }));

  test('the tarball holds the client and what it imports, nothing of the daemon', async () => {
    const list = await run('tar', ['tzf', tarball]);
    assert.equal(list.code, 0, list.stderr);
    const files = list.stdout.trim().split('\n').sort();
    assert.ok(files.includes('package/dist/client/index.js') && files.includes('package/dist/client/index.d.ts'), files.join('\n'));
    assert.ok(files.includes('package/README.md') && files.includes('package/package.json'));
    const clientSafe = /^package\/dist\/(client|types|wire)\/|^package\/dist\/util\/(api-version|node-http|tar-writer|time)\.(js|d\.ts)$/;
    const other = files.filter((f) => !clientSafe.test(f) && f !== 'package/README.md' && f !== 'package/package.json');
    assert.deepEqual(other, [], 'files outside the client side');
    assert.ok(
      !files.some((f) => /\.test\.|^package\/dist\/(daemon|api|main|supervisor|network|images|store|cli|logging|config)\//.test(f)),
    );
  });

  test('installs offline; the README examples type-check, a wrong call does not, the first runs against a daemon', async () => {
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'sdk-scratch', private: true, type: 'module' }));
    const inst = await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: project });
    assert.equal(inst.code, 0, inst.stderr);
    const manifest = JSON.parse(await readFile(join(project, 'node_modules/@engine/client/package.json'), 'utf8'));
    assert.equal(manifest.exports['.'].types, './dist/client/index.d.ts');
    assert.deepEqual(manifest.dependencies ?? {}, {});

    // Every import in the installed JavaScript is relative or a node: built-in.
    const pkgDist = join(project, 'node_modules/@engine/client/dist');
    for (const f of (await readdir(pkgDist, { recursive: true })).filter((f) => f.endsWith('.js'))) {
      const text = await readFile(join(pkgDist, f), 'utf8');
      for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)['"]([^'"]+)['"]/g))
        assert.match(m[1]!, /^(\.{1,2}\/|node:)/, `${f} imports ${m[1]}`);
    }

    const readme = await readFile(join(project, 'node_modules/@engine/client/README.md'), 'utf8');
    const examples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
    assert.ok(examples.length >= 3, 'the README has examples');
    const names = examples.map((_, i) => `example-${i + 1}.ts`);
    for (const [i, code] of examples.entries()) await writeFile(join(project, names[i]!), code);
    const tsconfig = (files: string[], noEmit: boolean) => ({
      compilerOptions: {
        target: 'es2024',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        noEmit,
        outDir: 'out',
        skipLibCheck: false,
        types: ['node'],
        typeRoots: [join(REPO_ROOT, 'node_modules/@types')],
      },
      files,
    });
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify(tsconfig(names, false)));
    const tsc = await run(NODE, [TSC, '-p', 'tsconfig.json'], { cwd: project });
    assert.equal(tsc.code, 0, tsc.stdout + tsc.stderr);

    // The declarations are real types, not `any`: a wrong body and a wrong member are refused.
    await writeFile(
      join(project, 'wrong.ts'),
      "import { EngineClient } from '@engine/client';\nconst c = new EngineClient();\nawait c.containers.create({ Image: 42 });\nawait c.containers.startt('x');\n",
    );
    await writeFile(join(project, 'tsconfig.wrong.json'), JSON.stringify(tsconfig(['wrong.ts'], true)));
    const wrong = await run(NODE, [TSC, '-p', 'tsconfig.wrong.json'], { cwd: project });
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stdout, /wrong\.ts\(3,[0-9]+\).*Type 'number' is not assignable to type 'string'/);
    assert.match(wrong.stdout, /wrong\.ts\(4,[0-9]+\).*Property 'startt' does not exist/);

    let d: TestDaemon | undefined;
    try {
      d = await startDaemon();
      await loadBusybox(d);
      const r = await run(NODE, ['out/example-1.js'], { cwd: project, env: { ...process.env, ENGINE_HOST: d.host } });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^API 1\.[0-9]+ on linux$/m);
      assert.match(r.stdout, /^stdout: hello from a container$/m);
      assert.match(r.stdout, /^exit status 0$/m);
      assert.match(r.stdout, /^404: No such container: no-such-container$/m);
      const left = await d.request('GET', '/containers/json?all=1');
      assert.deepEqual(left.json(), [], 'the example removed its container');
    } finally {
      await d?.cleanup();
    }
  });
});
