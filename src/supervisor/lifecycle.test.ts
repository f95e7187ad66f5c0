// The whole path a container takes through containerd, on the busybox fixture image:
// prepare snapshot → container → FIFO stdio → task create/wait/start → output → delete task →
// remove snapshot → delete container.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ensureBusyboxImage, type BusyboxImage } from '../../test/fixtures/busybox-image.ts';
import { jsonAny, PROCESS_TYPE_URL, SPEC_TYPE_URL } from './client.ts';
import { GrpcStatus, grpcCode } from './errors.ts';
import { makeTestEnv, mountsUnder, type TestEnv } from '../../test/helpers/supervisor-harness.ts';
import { Supervisor } from './supervisor.ts';
import { DEFAULT_CAPABILITIES } from '../oci/caps.ts';

let env: TestEnv;
let sup: Supervisor;
let image: BusyboxImage;

before(async () => {
  env = await makeTestEnv('lc-');
  sup = await Supervisor.start({
    dataRoot: env.dataRoot,
    execRoot: env.execRoot,
    namespace: 'engine-t',
    pluginsNamespace: 'engine-t-plugins',
    cri: false,
    log: env.log,
  });
  env.defer(() => sup.stop());
});

after(async () => {
  await env?.cleanup();
});

test('busybox fixture: builds, unpacks and records the image once; the second call does nothing', async () => {
  image = await ensureBusyboxImage(sup.client);
  const recorded = await sup.client.images.get(image.name);
  const again = await ensureBusyboxImage(sup.client);
  assert.deepEqual(again, image);
  // The second call found the image and wrote nothing: a second write would have updated the record.
  assert.deepEqual(await sup.client.images.get(image.name), recorded, 'the second call does nothing');
  assert.equal(image.name, 'docker.io/library/busybox:latest');

  const record = await sup.client.images.get(image.name);
  assert.equal(record.target.digest, image.manifestDigest);
  assert.equal(record.target.media_type, 'application/vnd.oci.image.manifest.v1+json');
  const manifest = JSON.parse((await sup.client.contentReadAll(image.manifestDigest)).toString());
  assert.equal(manifest.config.digest, image.configDigest);
  const layer = manifest.layers[0].digest as string;
  assert.deepEqual((await sup.client.contentInfo(image.manifestDigest)).labels, {
    'containerd.io/gc.ref.content.config': image.configDigest,
    'containerd.io/gc.ref.content.l.0': layer,
  });
  assert.equal((await sup.client.contentInfo(image.configDigest)).labels['containerd.io/gc.ref.snapshot.overlayfs'], image.chainId);
  const config = JSON.parse((await sup.client.contentReadAll(image.configDigest)).toString());
  assert.deepEqual(config.rootfs.diff_ids, [image.chainId]);
  assert.deepEqual(config.config.Cmd, ['sh']);
  assert.equal(config.architecture, 'amd64');

  // Nothing holds the image's pieces but its references: a forced GC pass must keep them.
  await sup.client.withLease(async () => {}, { sync: true });
  assert.equal((await sup.client.snapshots.stat(image.chainId)).kind, 'COMMITTED');
  assert.equal((await sup.client.contentInfo(layer)).size, String(manifest.layers[0].size));
  assert.equal((await sup.client.leases.list()).length, 0);
});

function defaultSpec(id: string, args: string[]) {
  const caps = [...DEFAULT_CAPABILITIES];
  return {
    ociVersion: '1.0.2-dev',
    process: {
      terminal: false,
      user: { uid: 0, gid: 0 },
      args,
      cwd: '/',
      env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
      capabilities: { bounding: caps, effective: caps, permitted: caps },
      rlimits: [{ type: 'RLIMIT_NOFILE', hard: 1024, soft: 1024 }],
      noNewPrivileges: true,
    },
    root: { path: 'rootfs' },
    hostname: id,
    mounts: [
      { destination: '/proc', type: 'proc', source: 'proc', options: ['nosuid', 'noexec', 'nodev'] },
      { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'] },
      {
        destination: '/dev/pts',
        type: 'devpts',
        source: 'devpts',
        options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5'],
      },
      { destination: '/dev/shm', type: 'tmpfs', source: 'shm', options: ['nosuid', 'noexec', 'nodev', 'mode=1777', 'size=65536k'] },
      { destination: '/sys', type: 'sysfs', source: 'sysfs', options: ['nosuid', 'noexec', 'nodev', 'ro'] },
    ],
    linux: {
      resources: { devices: [{ allow: false, access: 'rwm' }] },
      namespaces: [{ type: 'pid' }, { type: 'ipc' }, { type: 'uts' }, { type: 'mount' }, { type: 'network' }],
      maskedPaths: ['/proc/kcore', '/proc/keys', '/proc/timer_list', '/sys/firmware'],
      readonlyPaths: ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'],
    },
  };
}

/** Opens a FIFO's read side without blocking (no writer yet) and collects what arrives until EOF. */
function readFifo(p: string): { done: Promise<string> } {
  const fd = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  const sock = new net.Socket({ fd, readable: true, writable: false });
  const chunks: Buffer[] = [];
  sock.on('data', (b: Buffer) => chunks.push(b));
  return {
    done: new Promise((resolve, reject) => {
      sock.on('end', () => resolve(Buffer.concat(chunks).toString()));
      sock.on('error', reject);
    }),
  };
}

test('container lifecycle with FIFO stdio', async () => {
  image ??= await ensureBusyboxImage(sup.client);
  const c = sup.client;
  const id = `lc-${process.pid}`;
  const fifoDir = path.join(env.dir, 'fifo', id);
  fs.mkdirSync(fifoDir, { recursive: true });
  const stdout = path.join(fifoDir, 'stdout');
  const stderr = path.join(fifoDir, 'stderr');
  const times: Record<string, number> = {};
  let mark = performance.now();
  const lap = (name: string) => {
    const now = performance.now();
    times[name] = now - mark;
    mark = now;
  };
  const start = performance.now();
  let taskCreated = false;
  let containerCreated = false;
  let snapshotPrepared = false;
  try {
    const rootfs = await c.withLease(async (lease) => {
      const mounts = await c.snapshots.prepare({ key: id, parent: image.chainId }, { lease });
      snapshotPrepared = true;
      lap('lease + Snapshots.Prepare');
      await c.containers.create(
        {
          id,
          labels: { test: 'lifecycle' },
          image: image.name,
          runtime: { name: 'io.containerd.runc.v2', options: sup.runcOptions() },
          spec: jsonAny(SPEC_TYPE_URL, defaultSpec(id, ['sh', '-c', 'echo hi; echo oops >&2; exit 3'])),
          snapshotter: 'overlayfs',
          snapshot_key: id,
        },
        { lease },
      );
      containerCreated = true;
      return mounts;
    });
    lap('Containers.Create + Leases.Delete');
    assert.equal(rootfs[0]!.type, 'overlay');

    execFileSync('mkfifo', ['-m', '0600', stdout, stderr]);
    const out = readFifo(stdout);
    const err = readFifo(stderr);
    lap('mkfifo + open');

    const created = await c.tasks.create({ container_id: id, rootfs, stdout, stderr, terminal: false });
    taskCreated = true;
    lap('Tasks.Create');
    assert.ok(created.pid > 0);
    assert.ok(fs.existsSync(path.join(sup.runcRoot, 'engine-t', id, 'state.json')), 'runc state under our exec-root');
    assert.ok(!fs.existsSync(path.join('/run/containerd/runc/engine-t', id)), 'not under the global runc root');
    assert.equal((await c.tasks.get(id)).status, 'CREATED');

    const waited = c.tasks.wait(id);
    const pid = await c.tasks.start(id);
    lap('Tasks.Start');
    assert.equal(pid, created.pid);
    const exit = await waited;
    lap('Tasks.Wait');
    assert.equal(exit.exit_status, 3);
    assert.equal(await out.done, 'hi\n');
    assert.equal(await err.done, 'oops\n');

    const deleted = await c.tasks.delete(id);
    taskCreated = false;
    lap('Tasks.Delete');
    assert.equal(deleted.exit_status, 3);
    assert.equal(deleted.pid, pid);
    assert.ok(!fs.existsSync(path.join(sup.runcRoot, 'engine-t', id)));

    await c.snapshots.remove(id);
    snapshotPrepared = false;
    lap('Snapshots.Remove');
    await c.containers.delete(id);
    containerCreated = false;
    lap('Containers.Delete');
    const total = performance.now() - start;
    console.log(
      `lifecycle: ${Object.entries(times)
        .map(([k, v]) => `${k} ${v.toFixed(1)}`)
        .join(', ')}; total ${total.toFixed(1)} ms`,
    );

    await assert.rejects(c.containers.get(id), (e: unknown) => grpcCode(e) === GrpcStatus.NOT_FOUND);
    assert.deepEqual(mountsUnder(env.dir), [], 'no mounts left');
    for (const ctl of ['memory', 'pids', 'cpu']) assert.ok(!fs.existsSync(`/sys/fs/cgroup/${ctl}/${id}`), `no ${ctl} cgroup left`);
  } finally {
    // Best effort, in the order containerd needs, when an assertion failed half-way.
    if (taskCreated) {
      await c.tasks.kill(id, 9).catch(() => {});
      await c.tasks.delete(id).catch(() => {});
    }
    if (snapshotPrepared) await c.snapshots.remove(id).catch(() => {});
    if (containerCreated) await c.containers.delete(id).catch(() => {});
  }
});

test('a running task: exec, pids, pause/resume, metrics, kill', async () => {
  image ??= await ensureBusyboxImage(sup.client);
  const c = sup.client;
  const id = `run-${process.pid}`;
  const fifoDir = path.join(env.dir, 'fifo', id);
  fs.mkdirSync(fifoDir, { recursive: true });
  let stage = 'none';
  try {
    const rootfs = await c.withLease(async (lease) => {
      const mounts = await c.snapshots.prepare({ key: id, parent: image.chainId }, { lease });
      stage = 'snapshot';
      await c.containers.create(
        {
          id,
          runtime: { name: 'io.containerd.runc.v2', options: sup.runcOptions() },
          spec: jsonAny(SPEC_TYPE_URL, defaultSpec(id, ['sleep', '30'])),
          snapshotter: 'overlayfs',
          snapshot_key: id,
        },
        { lease },
      );
      stage = 'container';
      return mounts;
    });
    const listed = await c.containers.list([`id==${id}`]);
    assert.deepEqual(
      listed.map((x) => x.id),
      [id],
    );
    const updated = await c.containers.update({ id, labels: { role: 'sleeper' } }, ['labels']);
    assert.deepEqual(updated.labels, { role: 'sleeper' });
    assert.equal(c.protos.decodeAny(updated.runtime!.options)!.root, sup.runcRoot);

    await c.tasks.create({ container_id: id, rootfs }); // no stdio: /dev/null
    stage = 'task';
    const waited = c.tasks.wait(id);
    const pid = await c.tasks.start(id);
    assert.equal((await c.tasks.get(id)).status, 'RUNNING');
    // Tasks.List leaves container_id empty; id is the container's id for init processes.
    assert.ok((await c.tasks.list()).some((t) => t.id === id && t.pid === pid && t.status === 'RUNNING'));
    assert.deepEqual(
      (await c.tasks.listPids(id)).map((p) => p.pid),
      [pid],
    );

    // Exec with FIFO stdio; the exec id must be released with DeleteProcess before reuse.
    const out = path.join(fifoDir, 'exec-out');
    const err = path.join(fifoDir, 'exec-err');
    execFileSync('mkfifo', ['-m', '0600', out, err]);
    const outR = readFifo(out);
    const errR = readFifo(err);
    const proc = {
      terminal: false,
      user: { uid: 0, gid: 0 },
      args: ['sh', '-c', 'echo exec-out; ls /nope; exit 7'],
      cwd: '/',
      env: ['PATH=/bin'],
    };
    await c.tasks.exec({ container_id: id, exec_id: 'e1', stdout: out, stderr: err, spec: jsonAny(PROCESS_TYPE_URL, proc) });
    const execWait = c.tasks.wait(id, 'e1');
    await c.tasks.start(id, 'e1');
    assert.equal((await execWait).exit_status, 7);
    assert.equal(await outR.done, 'exec-out\n');
    assert.match(await errR.done, /nope: No such file or directory/);
    assert.equal((await c.tasks.deleteProcess(id, 'e1')).exit_status, 7);

    await c.tasks.pause(id);
    assert.equal((await c.tasks.get(id)).status, 'PAUSED');
    await c.tasks.resume(id);
    assert.equal((await c.tasks.get(id)).status, 'RUNNING');

    const [metric] = await c.tasks.metrics([`id==${id}`]);
    assert.equal(metric!.id, id);
    assert.equal(metric!.raw!.type_url, 'io.containerd.cgroups.v1.Metrics');
    if (c.protos.hasCgroupMetrics) assert.ok(Number(metric!.data!.memory.usage.usage) > 0);
    else assert.equal(metric!.data, null);

    await c.tasks.kill(id, 9);
    assert.equal((await waited).exit_status, 137);
    await c.tasks.delete(id);
    stage = 'container';
    await c.snapshots.remove(id);
    await c.containers.delete(id);
    stage = 'none';
  } finally {
    if (stage === 'task') {
      await c.tasks.kill(id, 9).catch(() => {});
      await c.tasks.delete(id).catch(() => {});
    }
    if (stage !== 'none') {
      await c.snapshots.remove(id).catch(() => {});
      await c.containers.delete(id).catch(() => {});
    }
  }
});

test('Diff.Diff of a snapshot change, read back as a layer', async () => {
  image ??= await ensureBusyboxImage(sup.client);
  const c = sup.client;
  await c.withLease(async (lease) => {
    const upper = await c.snapshots.prepare({ key: 'diff-upper', parent: image.chainId }, { lease });
    const lower = await c.snapshots.view({ key: 'diff-lower', parent: image.chainId }, { lease });
    // Write into the overlay's upperdir directly (what a container's writes end up as).
    const upperdir = upper[0]!.options.find((o) => o.startsWith('upperdir='))!.slice('upperdir='.length);
    fs.mkdirSync(path.join(upperdir, 'root'), { mode: 0o700 });
    fs.writeFileSync(path.join(upperdir, 'root', 'newfile'), 'data\n');
    const layer = await c.diff.diff(
      { left: lower, right: upper, media_type: 'application/vnd.oci.image.layer.v1.tar+gzip', ref: `diff-${process.pid}` },
      { lease },
    );
    assert.equal(layer.media_type, 'application/vnd.oci.image.layer.v1.tar+gzip');
    const gz = await c.contentReadAll(layer.digest);
    assert.equal(gz.length, Number(layer.size));
    const listing = execFileSync('tar', ['-tzf', '-'], { input: gz, encoding: 'utf8' }).split('\n').filter(Boolean);
    assert.deepEqual(listing.sort(), ['root/', 'root/newfile']);
    await c.snapshots.remove('diff-lower');
    await c.snapshots.remove('diff-upper');
  });
});

test('deleting the image with sync GC removes its blobs and snapshot', async () => {
  image ??= await ensureBusyboxImage(sup.client);
  const c = sup.client;
  assert.deepEqual(
    (await c.images.list()).map((i) => i.name),
    [image.name],
  );
  await c.images.delete(image.name, { sync: true });
  await assert.rejects(c.images.get(image.name), (e: unknown) => grpcCode(e) === GrpcStatus.NOT_FOUND);
  await assert.rejects(c.snapshots.stat(image.chainId), (e: unknown) => grpcCode(e) === GrpcStatus.NOT_FOUND);
  await assert.rejects(c.contentInfo(image.manifestDigest), (e: unknown) => grpcCode(e) === GrpcStatus.NOT_FOUND);
  await assert.rejects(c.contentInfo(image.configDigest), (e: unknown) => grpcCode(e) === GrpcStatus.NOT_FOUND);
  // And the fixture brings it back.
  const again = await ensureBusyboxImage(c);
  assert.deepEqual(again, image);
});
