// The fuse-overlayfs storage driver's snapshotter as the daemon runs it: what the host must have
// (checked before anything starts, so a host that cannot serve the driver fails the start with one
// line), the store under <data-root>/fuse-overlayfs, and its gRPC server on
// <exec-root>/fuse-overlayfs/snapshotter.sock, started before containerd so that containerd's first
// call to the proxy plugin finds it listening.
import { join } from 'node:path';
import type { Logger } from '../../util/log.ts';
import { FuseOverlaySnapshotter } from './fuse-overlayfs.ts';
import { serveSnapshotter } from './server.ts';

export { fuseOverlayfsMissing } from './host-check.ts';

/** The proxy plugin's name: containerd's snapshotter id, as the storage driver maps it. */
export const FUSE_SNAPSHOTTER = 'fuse-overlayfs';

export interface RunningSnapshotter {
  name: string;
  address: string;
  close(): Promise<void>;
}

export async function startFuseSnapshotter(o: { dataRoot: string; execRoot: string; log: Logger }): Promise<RunningSnapshotter> {
  const log = o.log.child({ module: 'fuse-overlayfs' });
  const snapshotter = await FuseOverlaySnapshotter.open(join(o.dataRoot, 'fuse-overlayfs'), {
    warn: (message, fields) => log.warn(message, fields),
  });
  try {
    const server = await serveSnapshotter(snapshotter, join(o.execRoot, 'fuse-overlayfs', 'snapshotter.sock'), FUSE_SNAPSHOTTER);
    log.debug('fuse-overlayfs snapshotter listening', { address: server.address });
    let closing: Promise<void> | undefined;
    return {
      name: FUSE_SNAPSHOTTER,
      address: server.address,
      // Once: a failed start-up reaches it both from the service runner and from engined.ts.
      close: () => (closing ??= server.close().then(() => snapshotter.close())),
    };
  } catch (err) {
    snapshotter.close();
    throw err;
  }
}
