// Issue 4 (distribution): pull, push, login, search and distribution inspect against Debian's
// docker-registry, through the real docker CLI and raw HTTP — progress streams, insecure and TLS
// registries with certs.d, basic auth, mirrors, proxies, shared and interrupted pulls.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SupervisorClient } from '../../src/supervisor/client.ts';
import { tarToBuffer } from '../../src/util/tar-writer.ts';
import { buildBusyboxLayer } from '../fixtures/busybox-image.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import {
  ForwardProxy, makeRegistryCerts, primaryAddress, pushRawImage, pushRawIndex, RegistryProxy, sha256, startRegistry,
  type RegistryCerts, type TestRegistry,
} from '../helpers/registry.ts';

const MT_GZ = 'application/vnd.oci.image.layer.v1.tar+gzip';
const MT_TAR = 'application/vnd.oci.image.layer.v1.tar';
const MTIME = Date.UTC(2024, 0, 1) / 1000;

interface Line {
  status?: string;
  id?: string;
  progressDetail?: { current?: number; total?: number };
  progress?: string;
  error?: string;
  errorDetail?: { message: string };
  aux?: Record<string, unknown>;
}

function lines(text: string): Line[] {
  return text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Line);
}

function supervisor(d: TestDaemon): SupervisorClient {
  return new SupervisorClient(join(d.execRoot, 'containerd', 'containerd.sock'), { namespace: 'engine' });
}

/** Drops an image record the way `docker rmi` would (sync GC: its content goes too). */
async function removeImage(d: TestDaemon, name: string): Promise<void> {
  const r = await d.request('DELETE', `/images/${encodeURIComponent(name)}?force=1`);
  if (r.status === 200) return;
  const c = supervisor(d);
  try {
    await c.images.delete(name, { sync: true });
  } finally {
    c.close();
  }
}

const config = (diffIds: string[], extra: Record<string, unknown> = {}) => ({
  architecture: 'amd64', os: 'linux', created: new Date(MTIME * 1000).toISOString(),
  config: { Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'], Cmd: ['sh'] },
  rootfs: { type: 'layers', diff_ids: diffIds }, ...extra,
});

async function fileLayer(files: Record<string, string | Buffer>): Promise<Buffer> {
  return tarToBuffer(async (tw) => {
    const dirs = new Set<string>();
    for (const name of Object.keys(files)) {
      const parts = name.split('/').slice(0, -1);
      for (let i = 1; i <= parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
    }
    for (const d of [...dirs].sort()) await tw.directory(d, { mtime: MTIME, mode: 0o755 });
    for (const [name, content] of Object.entries(files)) await tw.file(name, content, { mtime: MTIME });
  });
}

describe('registries: pull, push, login, search, inspect', { timeout: 600_000 }, () => {
  let d: TestDaemon;
  let plain: TestRegistry;
  let secure: TestRegistry;
  let certs: RegistryCerts;
  let certsD: string;
  let work: string;
  const ip = primaryAddress();
  let busyboxLayer: { tar: Buffer; gz: Buffer };

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'engine-registry-test-'));
    certsD = join(work, 'certs.d');
    await mkdir(certsD);
    certs = await makeRegistryCerts(join(work, 'ca'), ['127.0.0.1', ip]);
    plain = await startRegistry();
    secure = await startRegistry({ tls: { cert: certs.serverCert, key: certs.serverKey, clientCa: certs.caCert }, auth: { user: 'alice', password: 'wonderland' } });
    d = await startDaemon({ config: { 'max-download-attempts': 2 }, env: { ENGINE_CERTS_D: certsD } });
    busyboxLayer = await buildBusyboxLayer();
  });
  after(async () => {
    await d?.cleanup();
    await plain?.cleanup();
    await secure?.cleanup();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('docker push to a loopback registry, remove, docker pull back, docker run', async () => {
    const name = `${plain.host}/busybox:latest`;
    await loadBusybox(d, `${plain.host}/busybox:latest`);
    const push = await d.docker(['push', name]);
    assert.equal(push.code, 0, push.stderr);
    assert.match(push.stdout, new RegExp(`The push refers to repository \\[${plain.host}/busybox\\]`));
    assert.match(push.stdout, /: Pushed$/m);
    const m = /^latest: digest: (sha256:[0-9a-f]{64}) size: (\d+)$/m.exec(push.stdout);
    assert.ok(m, push.stdout);
    const again = await d.docker(['push', name]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /: Layer already exists$/m);

    await removeImage(d, name);
    assert.equal((await d.request('GET', `/images/${encodeURIComponent(name)}/json`)).status, 404);

    const pull = await d.docker(['pull', name]);
    assert.equal(pull.code, 0, pull.stderr);
    assert.match(pull.stdout, /^latest: Pulling from busybox$/m);
    assert.match(pull.stdout, /: Pull complete$/m);
    assert.match(pull.stdout, new RegExp(`^Digest: ${m[1]}$`, 'm'));
    assert.match(pull.stdout, new RegExp(`^Status: Downloaded newer image for ${plain.host}/busybox:latest$`, 'm'));

    const runOut = await d.docker(['run', '--rm', name, 'echo', 'pulled and running']);
    assert.equal(runOut.code, 0, runOut.stderr);
    assert.equal(runOut.stdout, 'pulled and running\n');

    const up = await d.docker(['pull', name]);
    assert.equal(up.code, 0, up.stderr);
    assert.match(up.stdout, /: Already exists$/m);
    assert.match(up.stdout, new RegExp(`^Status: Image is up to date for ${plain.host}/busybox:latest$`, 'm'));
  });
});
