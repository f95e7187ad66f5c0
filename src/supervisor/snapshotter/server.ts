// containerd's snapshots API (containerd.services.snapshots.v1.Snapshots) served on a unix socket,
// for containerd's `[proxy_plugins.<name>] type = "snapshot"`: containerd dials it lazily, on the
// first snapshot call, and passes the plugin's name in each request. Requests and answers are
// encoded with the same parsed protos as the client (protos.ts), inverted; a SnapshotError becomes
// the gRPC status containerd's errdefs maps back to its error class.
import * as grpc from '@grpc/grpc-js';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { dateToTimestamp, loadProtos, SERVICES, TO_OBJECT } from '../protos.ts';
import { SnapshotError } from './errors.ts';
import type { FuseOverlaySnapshotter, SnapshotInfo } from './fuse-overlayfs.ts';

const STATUS: Record<SnapshotError['kind'], grpc.status> = {
  'not-found': grpc.status.NOT_FOUND,
  'already-exists': grpc.status.ALREADY_EXISTS,
  'failed-precondition': grpc.status.FAILED_PRECONDITION,
  'invalid-argument': grpc.status.INVALID_ARGUMENT,
};

const KIND = { view: 'VIEW', active: 'ACTIVE', committed: 'COMMITTED' } as const;

/** How many infos go in one List answer (containerd's own service sends batches of 100). */
const LIST_BATCH = 100;

function wireInfo(i: SnapshotInfo): Record<string, unknown> {
  return {
    name: i.name,
    parent: i.parent,
    kind: KIND[i.kind],
    created_at: dateToTimestamp(new Date(i.created)),
    updated_at: dateToTimestamp(new Date(i.updated)),
    labels: i.labels,
  };
}

function toStatus(err: unknown): Partial<grpc.StatusObject> {
  if (err instanceof SnapshotError) return { code: STATUS[err.kind], details: err.message };
  return { code: grpc.status.UNKNOWN, details: (err as Error)?.message ?? String(err) };
}

/** The service definition built from the parsed protos: requests decoded, answers encoded. */
function definition(): grpc.ServiceDefinition {
  const svc = loadProtos().root.lookupService(SERVICES.snapshots);
  const def: Record<string, grpc.MethodDefinition<object, object>> = {};
  for (const [name, m] of Object.entries(svc.methods)) {
    m.resolve();
    const req = m.resolvedRequestType!;
    const res = m.resolvedResponseType!;
    def[name] = {
      path: `/${SERVICES.snapshots}/${name}`,
      originalName: name,
      requestStream: false,
      responseStream: !!m.responseStream,
      requestSerialize: (v: object) => Buffer.from(req.encode(req.fromObject(v)).finish()),
      requestDeserialize: (b: Buffer) => req.toObject(req.decode(b), TO_OBJECT),
      responseSerialize: (v: object) => Buffer.from(res.encode(res.fromObject(v)).finish()),
      responseDeserialize: (b: Buffer) => res.toObject(res.decode(b), TO_OBJECT),
    };
  }
  return def;
}

type Req = Record<string, any>;
type Handler = (req: Req) => Promise<object>;

export interface SnapshotServer {
  readonly address: string;
  close(): Promise<void>;
}

/**
 * Serves `snapshotter` as the snapshots API on the unix socket `address` (replacing a socket a
 * killed run left). `name` is the proxy plugin's name: requests naming another snapshotter are refused.
 */
export async function serveSnapshotter(snapshotter: FuseOverlaySnapshotter, address: string, name: string): Promise<SnapshotServer> {
  const check = (req: Req) => {
    if (req.snapshotter && req.snapshotter !== name)
      throw new SnapshotError('not-found', `snapshotter ${JSON.stringify(req.snapshotter)} is not served here (only ${name})`);
  };
  const unary: Record<string, Handler> = {
    Prepare: async (r) => ({ mounts: await snapshotter.prepare(r.key, r.parent, r.labels) }),
    View: async (r) => ({ mounts: await snapshotter.view(r.key, r.parent, r.labels) }),
    Mounts: async (r) => ({ mounts: await snapshotter.mounts(r.key) }),
    Commit: async (r) => (await snapshotter.commit(r.name, r.key, r.labels), {}),
    Remove: async (r) => (await snapshotter.remove(r.key), {}),
    Stat: async (r) => ({ info: wireInfo(await snapshotter.stat(r.key)) }),
    Update: async (r) => ({
      info: wireInfo(await snapshotter.update({ name: r.info?.name ?? '', labels: r.info?.labels ?? {} }, r.update_mask?.paths ?? [])),
    }),
    Usage: async (r) => {
      const u = await snapshotter.usage(r.key);
      return { size: u.size, inodes: u.inodes };
    },
    Cleanup: async () => (await snapshotter.cleanup(), {}),
  };
  const impl: grpc.UntypedServiceImplementation = {};
  for (const [method, handle] of Object.entries(unary)) {
    impl[method] = (call: grpc.ServerUnaryCall<Req, object>, cb: grpc.sendUnaryData<object>) => {
      Promise.resolve()
        .then(() => (check(call.request), handle(call.request)))
        .then(
          (answer) => cb(null, answer),
          (err) => cb(toStatus(err)),
        );
    };
  }
  impl.List = (call: grpc.ServerWritableStream<Req, object>) => {
    Promise.resolve()
      .then(async () => {
        check(call.request);
        const infos = await snapshotter.list(call.request.filters ?? []);
        for (let i = 0; i < infos.length; i += LIST_BATCH) call.write({ info: infos.slice(i, i + LIST_BATCH).map(wireInfo) });
        call.end();
      })
      .catch((err) => call.emit('error', Object.assign(new Error(toStatus(err).details), toStatus(err)))); // grpc-js sends it as the status
  };

  const server = new grpc.Server({ 'grpc.max_receive_message_length': 16 << 20 });
  server.addService(definition(), impl);
  mkdirSync(dirname(address), { recursive: true, mode: 0o700 });
  rmSync(address, { force: true }); // a killed run's socket: nobody listens on it any more
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix:${address}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        // Calls under way finish; new ones are refused. A List stream that never ends is cut after 2 s.
        const timer = setTimeout(() => server.forceShutdown(), 2000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          rmSync(address, { force: true });
          resolve();
        });
      }),
  };
}
