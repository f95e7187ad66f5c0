// glibc's malloc_trim through the daemon's native helper (src/native/malloc-trim.c, built into
// build/native/ when a C compiler is there). glibc gives freed memory back to the OS only from the
// top of its heap: the buffers of a burst that die among a few survivors stay resident (measured:
// 25–70 MiB free inside the heap after 256 MiB of logs, all of it returned by one malloc_trim).
import { nativeHelper } from './find-upwards.ts';

/** What mallinfo2 says, in bytes: in use and free in the arenas, and in blocks mmapped on their own. */
export interface MallocStats {
  inUse: number;
  free: number;
  mmapped: number;
}

let helper: { trim(): boolean; stats(): MallocStats } | null | undefined;

/** Whether the helper is there (loaded on first use). */
export function mallocTrimAvailable(): boolean {
  if (helper === undefined) helper = nativeHelper<{ trim(): boolean; stats(): MallocStats }>('malloc-trim');
  return helper !== null;
}

/** Returns the free pages of malloc's arenas to the OS; false when nothing was released or the helper is missing. */
export function mallocTrim(): boolean {
  return mallocTrimAvailable() ? helper!.trim() : false;
}

/** malloc's own accounting (for the trimmer's debug line); null when the helper is missing. */
export function mallocStats(): MallocStats | null {
  return mallocTrimAvailable() ? helper!.stats() : null;
}
