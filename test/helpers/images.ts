// Gets a busybox image into a test daemon's containerd (built offline from Debian's busybox-static)
// until the images issue lets tests push and pull through a registry.
import { join } from 'node:path';
import { SupervisorClient } from '../../src/supervisor/client.ts';
import { ensureBusyboxImage } from '../fixtures/busybox-image.ts';
import type { TestDaemon } from './daemon.ts';

export async function loadBusybox(d: TestDaemon, name = 'docker.io/library/busybox:latest'): Promise<void> {
  const client = new SupervisorClient(join(d.execRoot, 'containerd', 'containerd.sock'), { namespace: 'engine' });
  try {
    await ensureBusyboxImage(client, { name });
  } finally {
    client.close();
  }
}
