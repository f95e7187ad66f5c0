// Experiment, not part of the build (issue 16): the daemon in a V8 start-up snapshot. Builds
// dist/snap/engined-snap.cjs (the daemon as one CommonJS script), dist/snap/grpc.cjs (grpc-js,
// loaded after deserialisation with the compile cache) and dist/snap/engined.blob; then
//   node --snapshot-blob dist/snap/engined.blob engined <daemon args>
// runs the daemon from it (the word after the blob stands for the script in process.argv).
// The builtins a snapshot cannot hold (http, https, http2, tls, sqlite) and grpc-js (which loads
// http2 at its top) become objects of lazy getters, loaded on first use after deserialisation;
// the protos are parsed and the start-up methods' codecs generated at build time.
// Measured (bench/README.md "start-up"): ~15 % less daemon CPU before /_ping, not enough to be
// worth its risks (builtins Node marks "not fully verified" in snapshots: child_process,
// readline, dgram, perf_hooks, vm; code run only
// after start-up loses V8's compile cache). Usage: bin/node scripts/snapshot-experiment.mjs, then
// ENGINE_SNAPSHOT=1 bin/engined … runs the daemon from the blob.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const req = createRequire(join(root, 'package.json'));
const out = join(root, 'dist', 'snap');
const lazyModule = (loadExpr, names) =>
  [
    'let m;',
    `const load = () => (m ??= ${loadExpr});`,
    ...names.map(
      (n) => `Object.defineProperty(exports, ${JSON.stringify(n)}, { enumerable: true, get: () => load()[${JSON.stringify(n)}] });`,
    ),
  ].join('\n');
const UNDICI_GETTERS = new Set(['WebSocket', 'CloseEvent', 'MessageEvent']);
const lazy = {
  name: 'snapshot-lazy',
  setup(b) {
    b.onResolve({ filter: /^(node:)?(http|https|http2|tls|sqlite)$/ }, (a) => ({
      path: a.path.replace(/^node:/, ''),
      namespace: 'lazy-builtin',
    }));
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (a) => ({
      contents: lazyModule(
        `process.getBuiltinModule('node:${a.path}')`,
        Object.keys(req(`node:${a.path}`)).filter((k) => !UNDICI_GETTERS.has(k)),
      ),
      loader: 'js',
    }));
    b.onResolve({ filter: /^@grpc\/grpc-js$/ }, () => ({ path: 'grpc', namespace: 'lazy-grpc' }));
    b.onLoad({ filter: /.*/, namespace: 'lazy-grpc' }, () => ({
      contents: lazyModule(
        `process.getBuiltinModule('node:module').createRequire(${JSON.stringify(join(out, 'x.cjs'))})('./grpc.cjs')`,
        Object.keys(req('@grpc/grpc-js')),
      ),
      loader: 'js',
    }));
    // etcd3 stays a package (see bundle.mjs); the snapshot's own `require` loads only builtins.
    b.onResolve({ filter: /^etcd3$/ }, () => ({ path: 'etcd3', namespace: 'lazy-etcd3' }));
    b.onLoad({ filter: /.*/, namespace: 'lazy-etcd3' }, () => ({
      contents: lazyModule(
        `process.getBuiltinModule('node:module').createRequire(${JSON.stringify(join(root, 'package.json'))})('etcd3')`,
        Object.keys(req('etcd3')),
      ),
      loader: 'js',
    }));
    // node-http.ts requires node:http at its top.
    b.onLoad({ filter: /dist\/src\/util\/node-http\.js$/ }, () => ({
      contents: "import * as h from 'node:http'; export const http = h;",
      loader: 'js',
    }));
    // The entry's `void main();` becomes an export, run by the snapshot's main function.
    b.onLoad({ filter: /dist\/src\/main\/engined\.js$/ }, (a) => ({
      contents: readFileSync(a.path, 'utf8').replace(/^void main\(\);$/m, 'export { main };'),
      loader: 'js',
    }));
  },
};

const entry = `
import v8 from 'node:v8';
import { main } from './dist/src/main/engined.js';
import * as compose from './dist/src/main/compose.js';
import { loadProtos } from './dist/src/supervisor/protos.js';
globalThis.__engineCompose = compose; // in the snapshot, evaluated
const protos = loadProtos();
for (const [s, n] of [['version', 'Version'], ['namespaces', 'Create'], ['images', 'List'], ['introspection', 'Plugins'], ['containers', 'List'], ['tasks', 'List'], ['leases', 'List']]) protos.method(s, n);
v8.startupSnapshot.setDeserializeMainFunction(() => {
  if (process.env.NODE_COMPILE_CACHE) process.getBuiltinModule('node:module').enableCompileCache(process.env.NODE_COMPILE_CACHE);
  return main();
});
`;
await build({
  stdin: { contents: entry, resolveDir: root, sourcefile: 'snapshot-entry.mjs', loader: 'js' },
  outfile: join(out, 'engined-snap.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node24',
  define: { 'import.meta.url': '__engineModuleUrl' },
  banner: { js: `var __engineModuleUrl = ${JSON.stringify('file://' + join(out, 'engined-snap.cjs'))};` },
  logLevel: 'warning',
  plugins: [lazy],
});
await build({
  entryPoints: [req.resolve('@grpc/grpc-js')],
  outfile: join(out, 'grpc.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node24',
  logLevel: 'warning',
});
execFileSync(
  process.execPath,
  ['--disable-warning=Warning', '--snapshot-blob', join(out, 'engined.blob'), '--build-snapshot', join(out, 'engined-snap.cjs')],
  { stdio: 'inherit', cwd: root },
);
console.log(`written ${join(out, 'engined.blob')}`);
