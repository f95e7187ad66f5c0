// Bundles the compiled daemon (dist/src/main/engined.js and everything it imports, npm packages
// included) into ES modules under dist/bundle/: the entry engined.js, which bin/engined runs, and
// chunks (engined-*.js) for what is imported with import(). Start-up is mostly module loading:
// one file instead of ~300 saves ~190 ms of resolving and reading (measured: spawn → first /_ping,
// median 906 → 717 ms), and code split off behind import() (the builder, cluster mode, managed
// plugins, metrics) is neither parsed nor run by a start-up that does not use it. The chunks sit
// beside the entry (modules find build/proto upwards from their own file). The source maps are for
// `node --enable-source-maps`.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

// `import … from 'node:http'` makes Node build the module's ES facade, which reads every export,
// and node:http's WebSocket, CloseEvent and MessageEvent getters load all of undici (measured: ~50
// ms of CPU at start-up against ~5 for the module itself). Our imports of node:http read its
// exports object through process.getBuiltinModule instead, each named export copied once (as the
// facade does); those three stay unreachable (the build fails if a module imports one of them).
// CommonJS packages' require('http') never built the facade and is left alone.
const UNDICI_GETTERS = new Set(['WebSocket', 'CloseEvent', 'MessageEvent']);
const httpWithoutFacade = {
  name: 'http-without-esm-facade',
  setup(b) {
    b.onResolve({ filter: /^(node:)?http$/ }, (args) =>
      args.kind === 'import-statement' || args.kind === 'dynamic-import' ? { path: 'node:http', namespace: 'builtin-exports' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'builtin-exports' }, (args) => {
      const names = Object.keys(createRequire(import.meta.url)(args.path)).filter(
        (k) => !UNDICI_GETTERS.has(k) && /^[A-Za-z_$][\w$]*$/.test(k),
      );
      const lines = [
        `const m = process.getBuiltinModule(${JSON.stringify(args.path)});`,
        'export default m;',
        ...names.map((n) => `export const ${n} = m.${n};`),
      ];
      return { contents: lines.join('\n'), loader: 'js' };
    });
  },
};

// Chunks of an earlier build (their names carry a content hash) would pile up.
mkdirSync('dist/bundle', { recursive: true });
for (const f of readdirSync('dist/bundle', { withFileTypes: true })) {
  if (f.isFile() && f.name.startsWith('engined-')) rmSync(`dist/bundle/${f.name}`);
}

await build({
  // The pull's blob writer runs in worker threads (stage-pool.ts) loaded from beside the bundle.
  entryPoints: ['dist/src/main/engined.js', 'dist/src/images/distribution/stage/stage-worker.js'],
  outdir: 'dist/bundle',
  entryNames: '[name]',
  chunkNames: 'engined-[name]-[hash]',
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  sourcemap: true,
  // The CommonJS packages (grpc-js, protobufjs) call require(); an ES module has none of its own.
  banner: {
    js: "import { createRequire as __engineCreateRequire } from 'node:module'; const require = __engineCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
  // etcd3 reads its .proto files beside its own modules (__dirname): it stays a package, loaded
  // from node_modules by the cluster store on a manager only.
  external: ['etcd3'],
  plugins: [httpWithoutFacade],
});

const require = createRequire(import.meta.url);
const BUILTIN_KEYS = Object.fromEntries(['node:fs', 'node:path', 'node:os', 'node:url'].map((m) => [m, Object.keys(require(m))]));
/** The CLI bundle's first lines: the lazy builtins, and import.meta.url (version.ts) on first read. */
const LAZY_BUILTINS = [
  `var __lzyKeys = ${JSON.stringify(BUILTIN_KEYS)};`,
  'var __lzy__ = (id) => {',
  '  let m;',
  '  const load = () => (m ??= require(id));',
  '  const keys = __lzyKeys[id];',
  '  return new Proxy({}, {',
  '    get: (_, k) => load()[k],',
  '    set: (_, k, v) => ((load()[k] = v), true),',
  '    has: (_, k) => k in load(),',
  '    ownKeys: () => keys ?? Reflect.ownKeys(load()),',
  '    getOwnPropertyDescriptor: (_, k) =>',
  '      keys ? (keys.includes(k) ? { value: undefined, writable: true, enumerable: true, configurable: true } : undefined)',
  '        : ((d) => d && { ...d, configurable: true })(Reflect.getOwnPropertyDescriptor(load(), k)),',
  '  });',
  '};',
  "Object.defineProperty(globalThis, '__engineModuleUrl', { get: () => require('node:url').pathToFileURL(__filename).href });",
].join('\n');

// The `engine` command-line client (dist/src/cli/engine.js) → dist/bundle/engine.cjs, which bin/engine
// runs: a CLI is started for every command, so one file (no module resolution) matters even more
// than for the daemon. CommonJS, not ESM: an ES module's `import … from 'node:fs'` builds the
// builtin's ES facade, reading every export — fs.promises loads fs/promises and readline (15
// internal modules compiled per run for nothing) — and the ESM loader itself costs start-up time;
// a require()d builtin is only the exports object. import.meta.url (version.ts finds build/commit
// from it) becomes the bundle's own file URL.
rmSync('dist/bundle/engine.js', { force: true });
rmSync('dist/bundle/engine.js.map', { force: true });
const cli = await build({
  entryPoints: ['dist/src/cli/engine.js'],
  outfile: 'dist/bundle/engine.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  define: { 'import.meta.url': '__engineModuleUrl' },
  banner: { js: LAZY_BUILTINS },
  target: 'node24',
  sourcemap: true,
  logLevel: 'warning',
  write: false,
});
// Builtins load on first use, not at start-up: every `require("node:…")` of the bundle becomes
// `__lzy__("node:…")` (the same length: the source map stays right), a stand-in whose first
// property read requires the module. esbuild reads a builtin's exports only when they are used
// (`(0, import_node_fs.existsSync)(…)`), so `engine --version` loads none of them, and `engine ps`
// only node:net. Under Bun this is most of a command's memory: each builtin is JavaScript compiled
// at start-up (node:fs alone ~6 MiB of peak RSS). A default import (`__toESM(…)`) lists the
// module's keys: the stand-in answers with the names Node has, without loading it.
for (const f of cli.outputFiles) {
  const text = f.path.endsWith('.cjs') ? f.text.replace(/\brequire\("(node:[a-z_/]+)"\)/g, '__lzy__("$1")') : f.text;
  mkdirSync(dirname(f.path), { recursive: true });
  writeFileSync(f.path, text);
}
// The same bundle compiled into the native executable dist/bin/engine (scripts/build-cli.mjs), so
// every build of the bundle refreshes it.
await import('./build-cli.mjs');
