// The bare containerd lifecycle floor, from Node over the same gRPC client the daemon uses, against
// engined's own containerd (in a namespace of its own, so engined never sees these containers):
// snapshot prepare → container create → FIFOs → task create → wait/start → output EOF → task delete
// → container delete → snapshot remove → FIFO dir removed.

import { execFile } from 'node:child_process';
import { constants, openSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { jsonAny, SPEC_TYPE_URL, SupervisorClient } from '../../src/supervisor/client.ts';
import type { AnyMessage } from '../../src/supervisor/protos.ts';
import { ensureBusyboxImage, type BusyboxImage } from '../../test/fixtures/busybox-image.ts';
import type { SpecFor } from './engined-spec.ts';
import { floorSpec } from './floor-spec.ts';

const execFileP = promisify(execFile);
const NAMESPACE = 'bench-floor';
const GC_ROOT = 'containerd.io/gc.root';

export interface FloorPhases {
  prepareAndCreate: number;
  fifos: number;
  taskCreate: number;
  start: number;
  wait: number;
  cleanup: number;
  total: number;
}

function readToEnd(path: string): Promise<void> {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const sock = new Socket({ fd, readable: true, writable: false });
  return new Promise((resolve, reject) => {
    sock.on('data', () => undefined);
    sock.on('end', () => resolve());
    sock.on('error', reject);
  });
}

export class ContainerdFloor {
  private seq = 0;
  private constructor(
    private readonly client: SupervisorClient,
    private readonly image: BusyboxImage,
    private readonly runtimeOptions: AnyMessage,
    private readonly workDir: string,
  ) {}

  /** `socket`: engined's containerd; `workDir`: bench-owned dir for FIFOs and the runc state root. */
  static async open(socket: string, workDir: string): Promise<ContainerdFloor> {
    const client = new SupervisorClient(socket, { namespace: NAMESPACE });
    await client.ensureNamespace(NAMESPACE);
    const image = await ensureBusyboxImage(client);
    const options = client.runcOptions({ root: join(workDir, 'runc') });
    return new ContainerdFloor(client, image, options, workDir);
  }

  /** One lifecycle of `true`; `specFor` swaps in another spec (default: the lifecycle-test style). */
  async once(specFor?: SpecFor): Promise<FloorPhases> {
    const c = this.client;
    const id = `floor-${process.pid}-${this.seq++}`;
    const fifoDir = join(this.workDir, 'fifo', id);
    const t0 = performance.now();
    const rootfs = await c.snapshots.prepare({ key: id, parent: this.image.chainId, labels: { [GC_ROOT]: new Date().toISOString() } });
    await c.containers.create({
      id,
      runtime: { name: 'io.containerd.runc.v2', options: this.runtimeOptions },
      spec: jsonAny(SPEC_TYPE_URL, specFor ? specFor(id) : floorSpec(id, ['true'], `/bench-floor/${id}`)),
      snapshotter: 'overlayfs',
      snapshot_key: id,
    });
    const t1 = performance.now();
    await mkdir(fifoDir, { recursive: true, mode: 0o700 });
    const stdout = join(fifoDir, 'stdout');
    const stderr = join(fifoDir, 'stderr');
    await execFileP('mkfifo', ['-m', '0600', stdout, stderr]);
    const output = Promise.all([readToEnd(stdout), readToEnd(stderr)]);
    const t2 = performance.now();
    await c.tasks.create({ container_id: id, rootfs, stdout, stderr, terminal: false });
    const t3 = performance.now();
    const waited = c.tasks.wait(id);
    await c.tasks.start(id);
    const t4 = performance.now();
    const exit = await waited;
    await output;
    const t5 = performance.now();
    if (exit.exit_status !== 0) throw new Error(`floor: ${id} exited ${exit.exit_status}`);
    await c.tasks.delete(id);
    await c.containers.delete(id);
    await c.snapshots.remove(id);
    await rm(fifoDir, { recursive: true, force: true });
    const t6 = performance.now();
    return {
      prepareAndCreate: t1 - t0,
      fifos: t2 - t1,
      taskCreate: t3 - t2,
      start: t4 - t3,
      wait: t5 - t4,
      cleanup: t6 - t5,
      total: t6 - t0,
    };
  }

  close(): void {
    this.client.close();
  }
}
