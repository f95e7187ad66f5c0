// Packs the SDK (src/client) as the npm package @engine/client: tsc (tsconfig.sdk.json) compiles
// src/client/index.ts and what it imports — src/types/, src/wire/ and the client-safe files of
// src/util/, never daemon code — with declarations into build/sdk/package/dist/; this script checks
// that closure against the layout checker's client rule, rewrites the declarations' relative `.ts`
// specifiers to `.js` (what a consumer's TypeScript resolves in a package), writes package.json
// (exports with types) and the README, then `npm pack`s build/sdk/engine-client-<version>.tgz.
// Usage: bin/node scripts/pack-sdk.mjs   (prints the tarball's path)
import { execFileSync } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLIENT_IMPORTS, CLIENT_SAFE_UTIL } from './check-layout.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'build/sdk');
const pkgDir = join(out, 'package');
const dist = join(pkgDir, 'dist');

rmSync(out, { recursive: true, force: true });
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.sdk.json')], {
  stdio: 'inherit',
});

function walk(dir) {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? walk(join(dir, n)) : [join(dir, n)]));
}

// The emitted tree mirrors src/: every module must be the client's or one it may import.
const allowed = (rel) => {
  const top = rel.split('/')[0];
  if (top === 'client') return true;
  if (!CLIENT_IMPORTS.client.has(top)) return false;
  return top !== 'util' || CLIENT_SAFE_UTIL.has(rel.replace(/\.(d\.ts|js)$/, '.ts'));
};
const files = walk(dist).map((f) => relative(dist, f));
const foreign = files.filter((f) => !allowed(f));
if (foreign.length) throw new Error(`pack-sdk: modules outside the client's imports were emitted: ${foreign.join(', ')}`);

// `from './x.ts'` / `import('./x.ts')` in declarations → `.js`: the .d.ts sits beside x.js.
const SPECIFIER = /((?:from\s+|import\s*\(\s*)(['"]))(\.{1,2}\/[^'"]+?)\.ts\2/g;
for (const f of files.filter((f) => f.endsWith('.d.ts'))) {
  const p = join(dist, f);
  const text = readFileSync(p, 'utf8');
  const rewritten = text.replace(SPECIFIER, (_m, head, q, spec) => `${head}${spec}.js${q}`);
  if (rewritten !== text) writeFileSync(p, rewritten);
}

const repo = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const manifest = {
  name: '@engine/client',
  version: repo.version,
  description: 'Typed client of the Docker Engine API as served by engined (the engine SDK)',
  license: repo.license,
  type: 'module',
  engines: { node: '>=24' },
  exports: {
    '.': { types: './dist/client/index.d.ts', default: './dist/client/index.js' },
    './package.json': './package.json',
  },
  main: './dist/client/index.js',
  types: './dist/client/index.d.ts',
  files: ['dist', 'README.md'],
  sideEffects: false,
  // The declarations name node:stream, node:http … types: a TypeScript user has @types/node.
  peerDependencies: { '@types/node': '>=24' },
  peerDependenciesMeta: { '@types/node': { optional: true } },
};
writeFileSync(join(pkgDir, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
copyFileSync(join(root, 'src/client/README.md'), join(pkgDir, 'README.md'));

const packed = JSON.parse(
  execFileSync('npm', ['pack', '--json', '--pack-destination', out], {
    cwd: pkgDir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }),
);
console.log(join(out, packed[0].filename));
