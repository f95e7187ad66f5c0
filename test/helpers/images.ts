// Gets a busybox image into a test daemon's containerd (built offline from Debian's busybox-static)
// until the images issue lets tests push and pull through a registry.
import { join } from 'node:path';
import { SupervisorClient } from '../../src/supervisor/client.ts';
import { ensureBusyboxImage } from '../fixtures/busybox-image.ts';
import type { TestDaemon } from './daemon.ts';

/**
 * The image goes into the snapshotter of the daemon's storage driver (`snapshotter`, when given,
 * saves asking the daemon: overlay2 is containerd's overlayfs, the others have the driver's name).
 */
export async function loadBusybox(d: TestDaemon, name = 'docker.io/library/busybox:latest', snapshotter?: string): Promise<void> {
  const client = new SupervisorClient(join(d.execRoot, 'containerd', 'containerd.sock'), { namespace: 'engine' });
  try {
    if (!snapshotter) {
      const driver = (await d.request('GET', '/info')).json<{ Driver: string }>().Driver;
      snapshotter = driver === 'overlay2' ? 'overlayfs' : driver;
    }
    await ensureBusyboxImage(client, { name, snapshotter });
  } finally {
    client.close();
  }
}
