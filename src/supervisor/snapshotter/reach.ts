// containerd keeps one gRPC connection to a proxy plugin. When the daemon is killed -9 and the next
// one adopts the running containerd, that connection still points at the dead daemon's server:
// containerd's first call through it fails ("connection closed") and only then does it dial again.
// So the first start-up step after an adoption makes that call itself — a throwaway snapshot,
// prepared and removed — until one goes through, before any container or image needs the driver.
import { randomBytes } from 'node:crypto';
import type { SupervisorClient } from '../client.ts';
import { GrpcStatus, grpcCode } from '../errors.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once containerd reaches the proxy snapshotter `snapshotter`; throws what else it answers. */
export async function reachProxySnapshotter(client: SupervisorClient, snapshotter: string, timeoutMs = 15_000): Promise<number> {
  const started = Date.now();
  const key = `engine-reach-${randomBytes(6).toString('hex')}`;
  for (let attempt = 1; ; attempt++) {
    try {
      await client.snapshots.prepare({ key, parent: '', snapshotter });
      await client.snapshots.remove(key, { snapshotter });
      return attempt;
    } catch (err) {
      if (grpcCode(err) !== GrpcStatus.UNAVAILABLE || Date.now() - started > timeoutMs) throw err;
      await sleep(100); // containerd dials again after a failed call (its backoff is at most 3 s)
    }
  }
}
