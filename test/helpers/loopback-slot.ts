// The cluster tests' loopback addresses: each test file takes 127.0.<10 + 4·slot>.x … (four /24s)
// and listens on fixed ports (2377, 2380…) there. Files run in parallel in separate processes, and a
// slot taken from the pid alone collided now and then (etcd: "bind: address already in use"). A slot
// is held by an exclusive lock file for the process's life; one left by a dead process is reused.
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';

const SLOTS = 50;
let held: number | undefined;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH'; // EPERM: alive, another user's
  }
}

/** This process's slot, 0..49 (the same on every call). */
export function loopbackSlot(): number {
  if (held !== undefined) return held;
  for (let attempt = 0; attempt < 2 * SLOTS; attempt++) {
    const slot = (process.pid + attempt) % SLOTS;
    const path = `/tmp/engine-test-loopback-${slot}.lock`;
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      process.once('exit', () => {
        try {
          unlinkSync(path);
        } catch {
          // already gone: nothing to release
        }
      });
      held = slot;
      return slot;
    } catch {
      // Taken: by a live process, try the next slot; by a dead one, free it and retry this one.
      let owner = NaN;
      try {
        owner = Number(readFileSync(path, 'utf8'));
      } catch {
        // released meanwhile: the next attempt may take it
      }
      if (Number.isInteger(owner) && owner > 0 && !alive(owner)) {
        try {
          unlinkSync(path);
        } catch {
          // another process freed it first
        }
      }
    }
  }
  held = process.pid % SLOTS; // every slot held by live processes: fall back to the pid's
  return held;
}
