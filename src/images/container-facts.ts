// What the image side needs to know about containers (commit, export, image removal), provided by
// the container service; kept as an interface so images never import the container internals.
import type { ContainerConfig } from '../types/container-api.ts';
import type { Mount } from '../supervisor/types.ts';

export interface ContainerSnapshot {
  id: string;
  /** The image ID (sha256:…) the container was created from. */
  imageId: string;
  snapshotKey: string;
  snapshotter: string;
  running: boolean;
  paused: boolean;
  config: ContainerConfig;
}

export interface ContainerFacts {
  /** By ID, unique ID prefix or name; 404 when unknown. */
  snapshotOf(ref: string): ContainerSnapshot;
  /** Every container and the image it uses. */
  imageUsers(): Array<{ id: string; image: string; running: boolean }>;
  /** Runs fn with the container's processes frozen when it is running (and not paused already). */
  frozen<T>(ref: string, fn: () => Promise<T>): Promise<T>;
}

/**
 * A read-only view of a writable snapshot's mounts: an overlay becomes one with only lower
 * layers (its upperdir first), so it can be mounted a second time beside the container's own
 * mount without sharing an upperdir; a bind mount just becomes read-only.
 */
export function readOnlyMounts(mounts: Mount[]): Mount[] {
  return mounts.map((m) => {
    if (m.type === 'overlay') {
      const opt = (k: string) => m.options.find((o) => o.startsWith(`${k}=`))?.slice(k.length + 1);
      const upper = opt('upperdir');
      const lower = opt('lowerdir');
      if (!upper) return { ...m, options: [...m.options.filter((o) => o !== 'rw'), 'ro'] };
      const rest = m.options.filter((o) => !/^(upperdir|workdir|lowerdir)=/.test(o) && o !== 'rw');
      return { ...m, options: [...rest, `lowerdir=${lower ? `${upper}:${lower}` : upper}`, 'ro'] };
    }
    return { ...m, options: [...m.options.filter((o) => o !== 'rw'), 'ro'] };
  });
}
