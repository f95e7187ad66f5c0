import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { EngineError } from '../errors.ts';
import { loadProtos, SERVICES, timestampToDate, timestampToRfc3339, dateToTimestamp } from './protos.ts';
import { fromGrpc, grpcCode } from './errors.ts';
import { jsonAny, SPEC_TYPE_URL } from './client.ts';
import { grpcTarget } from './grpc-channel.ts';

const repoRoot = (() => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return dir;
})();

test('loads every service once, quickly, with snake_case fields', () => {
  const p = loadProtos();
  assert.equal(loadProtos(), p, 'cached');
  assert.ok(p.loadMs < 1000, `proto load took ${p.loadMs} ms`);
  for (const full of Object.values(SERVICES)) assert.ok(p.root.lookupService(full));
  const create = p.method('tasks', 'Create');
  assert.equal(create.path, '/containerd.services.tasks.v1.Tasks/Create');
  assert.deepEqual([create.requestStream, create.responseStream], [false, false]);
  const write = p.method('content', 'Write');
  assert.deepEqual([write.requestStream, write.responseStream], [true, true]);
  assert.equal(p.method('events', 'Subscribe').responseStream, true);
  assert.throws(() => p.method('tasks', 'Nope'), /unknown method/);

  // Round trip through the wire format keeps snake_case keys and gives int64 as strings.
  const req = { container_id: 'c1', exec_id: 'e1', signal: 9, all: true };
  const kill = p.method('tasks', 'Kill');
  const back = p.root.lookupType('containerd.services.tasks.v1.KillRequest');
  assert.deepEqual(back.toObject(back.decode(kill.serialize(req))), req);
  const read = p.method('content', 'Read');
  const readReq = p.root.lookupType('containerd.services.content.v1.ReadContentRequest');
  assert.deepEqual(readReq.toObject(readReq.decode(read.serialize({ digest: 'sha256:x', offset: 5, size: '3' })), { longs: String }), {
    digest: 'sha256:x',
    offset: '5',
    size: '3',
  });
  const res = p.method('content', 'Info').deserialize(
    Buffer.from(
      p.root
        .lookupType('containerd.services.content.v1.InfoResponse')
        .encode({ info: { digest: 'sha256:y', size: 7, labels: { a: 'b' } } })
        .finish(),
    ),
  );
  assert.equal(res.info.size, '7');
  assert.deepEqual(res.info.labels, { a: 'b' });
  assert.equal(res.info.created_at, null, 'unset message decodes as null');
});

test('encodes runc options as a bare-type-url Any and decodes it back', () => {
  const p = loadProtos();
  const any = p.encodeRuncOptions({ root: '/run/x/runc', binary_name: '/usr/sbin/runc', systemd_cgroup: true });
  assert.equal(any.type_url, 'containerd.runc.v1.Options');
  const decoded = p.decodeAny(any)!;
  assert.equal(decoded.root, '/run/x/runc');
  assert.equal(decoded.binary_name, '/usr/sbin/runc');
  assert.equal(decoded.systemd_cgroup, true);
  assert.equal(decoded.no_pivot_root, false);
  assert.throws(() => p.encodeAny('containerd.runc.v1.Options', { io_uid: 'x' }), /io_uid/);
});

test('decodes event payloads and JSON-typed Anys', () => {
  const p = loadProtos();
  const exit = p.encodeAny('containerd.events.TaskExit', {
    container_id: 'c',
    id: 'c',
    pid: 42,
    exit_status: 3,
    exited_at: { seconds: 1700000000, nanos: 5 },
  });
  const ev = p.decodeAny(exit)!;
  assert.equal(ev.container_id, 'c');
  assert.equal(ev.pid, 42);
  assert.equal(ev.exit_status, 3);
  assert.deepEqual(ev.exited_at, { seconds: '1700000000', nanos: 5 });
  const withPrefix = p.decodeAny({
    type_url: 'type.googleapis.com/containerd.events.ContainerDelete',
    value: p.encodeAny('containerd.events.ContainerDelete', { id: 'x' }).value,
  });
  assert.deepEqual(withPrefix, { id: 'x' });
  assert.deepEqual(p.decodeAny(jsonAny(SPEC_TYPE_URL, { ociVersion: '1.0.2' })), { ociVersion: '1.0.2' });
  assert.equal(p.decodeAny({ type_url: 'no.such.Type', value: Buffer.alloc(0) }), null);
  assert.equal(p.decodeAny(null), null);
});

test('cgroup Metrics decode exactly when the cgroups protos were extracted', () => {
  const p = loadProtos();
  const present = fs.existsSync(path.join(repoRoot, 'build/proto/github.com/containerd/cgroups/stats/v1/metrics.proto'));
  assert.equal(p.hasCgroupMetrics, present);
  const type = p.typeFor('io.containerd.cgroups.v1.Metrics');
  if (!present) {
    assert.equal(type, null);
    return;
  }
  const any = p.encodeAny('io.containerd.cgroups.v1.Metrics', { memory: { usage: { usage: 1234 } }, pids: { current: 3 } });
  const m = p.decodeAny(any)!;
  assert.equal(m.memory.usage.usage, '1234');
  assert.equal(m.pids.current, '3');
});

test('timestamps', () => {
  assert.equal(timestampToDate(null), null);
  assert.equal(timestampToDate({ seconds: '0', nanos: 0 }), null);
  assert.equal(timestampToDate({ seconds: '1700000000', nanos: 123456789 })!.toISOString(), '2023-11-14T22:13:20.123Z');
  assert.equal(timestampToRfc3339({ seconds: '1700000000', nanos: 5 }), '2023-11-14T22:13:20.000000005Z');
  assert.equal(timestampToRfc3339({ seconds: 0, nanos: 0 }), '0001-01-01T00:00:00Z');
  assert.equal(timestampToRfc3339({ seconds: '-62135596800', nanos: 0 }), '0001-01-01T00:00:00Z');
  assert.equal(timestampToDate({ seconds: '-62135596800', nanos: 0 }), null);
  assert.deepEqual(dateToTimestamp(new Date(1700000000123)), { seconds: '1700000000', nanos: 123000000 });
});

test('gRPC errors map onto the error table, keeping containerd message and code', () => {
  const mk = (code: number, details: string) =>
    Object.assign(new Error(`${code} X: ${details}`), { code, details, metadata: new grpc.Metadata() });
  const cases: [number, string][] = [
    [grpc.status.NOT_FOUND, 'NOT_FOUND'],
    [grpc.status.ALREADY_EXISTS, 'CONFLICT'],
    [grpc.status.FAILED_PRECONDITION, 'CONFLICT'],
    [grpc.status.INVALID_ARGUMENT, 'INVALID_PARAMETER'],
    [grpc.status.UNAVAILABLE, 'UNAVAILABLE'],
    [grpc.status.UNKNOWN, 'INTERNAL'],
    [grpc.status.DEADLINE_EXCEEDED, 'INTERNAL'],
  ];
  for (const [code, want] of cases) {
    const err = fromGrpc(mk(code, 'container "x" in namespace "engine": not found'));
    assert.ok(err instanceof EngineError);
    assert.equal(err.code, want);
    assert.equal(grpcCode(err), code);
    assert.equal((err.cause as grpc.ServiceError).code, code);
    if (code !== grpc.status.UNAVAILABLE) assert.equal(err.message, 'container "x" in namespace "engine": not found');
    else assert.match(err.message, /^supervisor unavailable: /);
  }
  const plain = new Error('local');
  assert.equal(fromGrpc(plain), plain);
  assert.equal(grpcCode(plain), undefined);
});

test('addresses', () => {
  assert.equal(grpcTarget('/run/x.sock'), 'unix:///run/x.sock');
  assert.equal(grpcTarget('unix:///run/x.sock'), 'unix:///run/x.sock');
  assert.throws(() => grpcTarget('localhost:1234'), /unix socket/);
});
