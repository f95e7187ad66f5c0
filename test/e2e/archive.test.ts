// Issue 6, archive and websocket attach: docker cp both ways (files, directories, symlinks) on
// running and stopped containers and into volumes, the path-stat header, tars that try to leave the
// target, docker diff, and GET /containers/{id}/attach/ws with a hand-made websocket client.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { tarToBuffer, type TarWriter } from '../../src/util/tar-writer.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';

const V = '/v1.51';

interface WsFrame {
  opcode: number;
  payload: Buffer;
}

/** A minimal websocket client over the daemon's unix socket (the global WebSocket cannot dial one). */
async function wsConnect(
  socketPath: string,
  path: string,
): Promise<{ socket: Socket; next: (timeoutMs?: number) => Promise<WsFrame | null>; send: (opcode: number, data: Buffer) => void }> {
  const socket = connect(socketPath);
  const key = randomBytes(16).toString('base64');
  await new Promise<void>((res, rej) => socket.once('connect', res).once('error', rej));
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: engine\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  let buf = Buffer.alloc(0);
  const frames: WsFrame[] = [];
  const waiters: Array<() => void> = [];
  let ended = false;
  let headerDone: (head: string) => void;
  const head = new Promise<string>((r) => (headerDone = r));
  let gotHeader = false;
  const parse = () => {
    if (!gotHeader) {
      const i = buf.indexOf('\r\n\r\n');
      if (i < 0) return;
      gotHeader = true;
      headerDone(buf.subarray(0, i).toString());
      buf = buf.subarray(i + 4);
    }
    for (;;) {
      if (buf.length < 2) return;
      let len = buf[1]! & 0x7f;
      let off = 2;
      if (len === 126) {
        if (buf.length < 4) return;
        len = buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (buf.length < 10) return;
        len = Number(buf.readBigUInt64BE(2));
        off = 10;
      }
      if (buf.length < off + len) return;
      frames.push({ opcode: buf[0]! & 0x0f, payload: Buffer.from(buf.subarray(off, off + len)) });
      buf = buf.subarray(off + len);
      waiters.splice(0).forEach((w) => w());
    }
  };
  socket.on('data', (c: Buffer) => {
    buf = Buffer.concat([buf, c]);
    parse();
  });
  socket.on('close', () => {
    ended = true;
    waiters.splice(0).forEach((w) => w());
  });
  const status = await head;
  assert.match(status, /^HTTP\/1\.1 101 /, status);
  const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
  assert.match(status, new RegExp(`Sec-WebSocket-Accept: ${accept.replace(/[+/]/g, '\\$&')}`, 'i'));
  const next = async (timeoutMs = 10_000): Promise<WsFrame | null> => {
    const deadline = Date.now() + timeoutMs;
    while (!frames.length) {
      if (ended) return null;
      if (Date.now() > deadline) throw new Error('no websocket frame in time');
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 100);
      });
    }
    return frames.shift()!;
  };
  const send = (opcode: number, data: Buffer) => {
    const mask = randomBytes(4);
    const headBytes =
      data.length < 126
        ? Buffer.from([0x80 | opcode, 0x80 | data.length])
        : Buffer.from([0x80 | opcode, 0x80 | 126, data.length >> 8, data.length & 0xff]);
    socket.write(Buffer.concat([headBytes, mask, Buffer.from(data.map((b, i) => b ^ mask[i & 3]!))]));
  };
  return { socket, next, send };
}

describe('archive: docker cp, stat, diff; websocket attach', () => {
  let d: TestDaemon;
  let work: string;
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
    work = mkdtempSync(join(tmpdir(), 'engine-cp-'));
  });
  after(async () => {
    rmSync(work, { recursive: true, force: true });
    await d?.cleanup();
  });

  const ok = async (args: string[]) => {
    const r = await d.docker(args);
    assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const put = (container: string, path: string, tar: Buffer) =>
    d.request('PUT', `${V}/containers/${container}/archive?path=${encodeURIComponent(path)}`, {
      body: tar,
      headers: { 'Content-Type': 'application/x-tar' },
    });

  test('HEAD: the stat header (name, size, Go mode bits, mtime, resolved link target); 404 when missing', async () => {
    await ok(['run', '-d', '--name', 'statc', 'busybox', 'sh', '-c', 'ln -s ../etc/passwd /root/pl; sleep 1000']);
    await new Promise((r) => setTimeout(r, 300));
    const decode = (h: string | string[] | undefined) => JSON.parse(Buffer.from(String(h), 'base64').toString());
    const file = await d.request('HEAD', `${V}/containers/statc/archive?path=/etc/passwd`);
    assert.equal(file.status, 200);
    const fs = decode(file.headers['x-docker-container-path-stat']);
    const size = Number((await ok(['exec', 'statc', 'stat', '-c', '%s', '/etc/passwd'])).trim());
    assert.deepEqual(
      { name: fs.name, size: fs.size, mode: fs.mode, linkTarget: fs.linkTarget },
      { name: 'passwd', size, mode: 0o644, linkTarget: '' },
    );
    assert.match(fs.mtime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const dir = decode((await d.request('HEAD', `${V}/containers/statc/archive?path=/etc/`)).headers['x-docker-container-path-stat']);
    assert.equal(dir.name, 'etc');
    assert.equal(dir.mode, 2 ** 31 + 0o755);
    const link = decode((await d.request('HEAD', `${V}/containers/statc/archive?path=/root/pl`)).headers['x-docker-container-path-stat']);
    assert.equal(link.name, 'pl');
    assert.equal(link.mode, 2 ** 27 + 0o777);
    assert.equal(link.linkTarget, '/etc/passwd');
    const missing = await d.request('HEAD', `${V}/containers/statc/archive?path=/nope`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.length, 0);
    const get = await d.request('GET', `${V}/containers/statc/archive?path=/nope`);
    assert.equal(get.status, 404);
    assert.equal(get.json().message, 'Could not find the file /nope in container statc');
    assert.equal((await d.request('HEAD', `${V}/containers/nosuch/archive?path=/`)).status, 404);
    await ok(['rm', '-f', 'statc']);
  });

  test('docker cp in and out of a running container: files, directories, symlinks, "dir/." copies', async () => {
    await ok(['run', '-d', '--name', 'cpc', 'busybox', 'sleep', '1000']);
    const src = join(work, 'src');
    mkdirSync(join(src, 'sub'), { recursive: true });
    writeFileSync(join(src, 'a.txt'), 'alpha\n', { mode: 0o600 });
    writeFileSync(join(src, 'sub', 'b.txt'), 'beta\n');
    symlinkSync('a.txt', join(src, 'rel-link'));
    symlinkSync('/etc/passwd', join(src, 'abs-link'));
    symlinkSync('..', join(src, 'sub', 'up'));
    await ok(['cp', src, 'cpc:/root/']);
    assert.equal(await ok(['exec', 'cpc', 'cat', '/root/src/a.txt', '/root/src/sub/b.txt']), 'alpha\nbeta\n');
    assert.equal(
      await ok(['exec', 'cpc', 'sh', '-c', 'for l in rel-link abs-link sub/up; do readlink /root/src/$l; done']),
      'a.txt\n/etc/passwd\n..\n',
    );
    assert.equal((await ok(['exec', 'cpc', 'stat', '-c', '%a', '/root/src/a.txt'])).trim(), '600');
    assert.match(await ok(['exec', 'cpc', 'cat', '/root/src/abs-link']), /^root:x:0:0:/, 'an absolute link resolves in the container');

    const out1 = join(work, 'out1');
    await ok(['cp', 'cpc:/root/src', out1]);
    assert.equal(readFileSync(join(out1, 'a.txt'), 'utf8'), 'alpha\n');
    assert.equal(readFileSync(join(out1, 'sub', 'b.txt'), 'utf8'), 'beta\n');
    assert.equal(readlinkSync(join(out1, 'rel-link')), 'a.txt');
    assert.equal(readlinkSync(join(out1, 'abs-link')), '/etc/passwd');
    assert.equal(lstatSync(join(out1, 'sub', 'up')).isSymbolicLink(), true);
    const out2 = join(work, 'out2');
    mkdirSync(out2);
    await ok(['cp', 'cpc:/root/src/.', out2]);
    assert.equal(readFileSync(join(out2, 'a.txt'), 'utf8'), 'alpha\n', 'dir/. copies the content, not the directory');
    await ok(['cp', 'cpc:/etc/passwd', join(work, 'passwd')]);
    assert.match(readFileSync(join(work, 'passwd'), 'utf8'), /^root:/);
    // A file into a new name, and GET of a single file through the API.
    writeFileSync(join(work, 'one.txt'), 'one\n');
    await ok(['cp', join(work, 'one.txt'), 'cpc:/root/renamed.txt']);
    assert.equal(await ok(['exec', 'cpc', 'cat', '/root/renamed.txt']), 'one\n');
    const tar = await d.request('GET', `${V}/containers/cpc/archive?path=/root/renamed.txt`);
    assert.equal(tar.status, 200);
    assert.equal(tar.headers['content-type'], 'application/x-tar');
    assert.equal(tar.body.subarray(0, 11).toString(), 'renamed.txt');
    await ok(['rm', '-f', 'cpc']);
  });

  test('docker cp on a stopped container, and into a volume-mounted path', async () => {
    writeFileSync(join(work, 'in.txt'), 'copied-before-start\n');
    await ok([
      'create',
      '--name',
      'stopped',
      '-v',
      'cpvol:/data',
      'busybox',
      'sh',
      '-c',
      'cat /root/in.txt /data/vol.txt; echo made-inside > /root/made.txt',
    ]);
    await ok(['cp', join(work, 'in.txt'), 'stopped:/root/in.txt']);
    writeFileSync(join(work, 'vol.txt'), 'into-volume\n');
    await ok(['cp', join(work, 'vol.txt'), 'stopped:/data/']);
    assert.equal(
      readFileSync(join(d.dataRoot, 'volumes', 'cpvol', '_data', 'vol.txt'), 'utf8'),
      'into-volume\n',
      'a path inside a volume goes to the volume',
    );
    assert.equal(await ok(['start', '-a', 'stopped']), 'copied-before-start\ninto-volume\n');
    await ok(['cp', 'stopped:/root/made.txt', join(work, 'made.txt')]);
    assert.equal(readFileSync(join(work, 'made.txt'), 'utf8'), 'made-inside\n');
    await ok(['cp', 'stopped:/data/vol.txt', join(work, 'vol-back.txt')]);
    assert.equal(readFileSync(join(work, 'vol-back.txt'), 'utf8'), 'into-volume\n');
    // Running, the volume is reached through the container's own mounts.
    await ok(['run', '-d', '--name', 'volrun', '-v', 'cpvol:/data', 'busybox', 'sleep', '1000']);
    writeFileSync(join(work, 'live.txt'), 'live\n');
    await ok(['cp', join(work, 'live.txt'), 'volrun:/data/']);
    assert.equal(readFileSync(join(d.dataRoot, 'volumes', 'cpvol', '_data', 'live.txt'), 'utf8'), 'live\n');
    await ok(['rm', '-f', 'volrun', 'stopped']);
    await ok(['volume', 'rm', 'cpvol']);
  });

  test('tars that leave the target are refused with 400 and write nothing', async () => {
    await ok(['run', '-d', '--name', 'trav', 'busybox', 'sh', '-c', 'ln -s /etc /root/sl; sleep 1000']);
    await new Promise((r) => setTimeout(r, 300));
    const cases: Array<[string, (tw: TarWriter) => Promise<void>, RegExp]> = [
      ['dot-dot name', (tw) => tw.file('../../escape', 'x'), /escapes the archive root/],
      ['absolute name', (tw) => tw.entry({ name: 'x', pax: { path: '/escape' } }, Buffer.from('x')), /absolute path/],
      ['hard link out', (tw) => tw.hardlink('h', '../../etc/passwd'), /points outside the archive/],
      ['symlink out', (tw) => tw.symlink('s', '../../../../etc'), /points outside the archive/],
      [
        'entry beneath a symlink of the archive',
        async (tw) => {
          await tw.symlink('l', '/etc');
          await tw.file('l/evil', 'x');
        },
        /beneath a symlink/,
      ],
      ['entry through a symlink in the container', (tw) => tw.file('sl/evil', 'x'), /written through the symlink \/root\/sl/],
    ];
    for (const [what, build, re] of cases) {
      const r = await put('trav', '/root', await tarToBuffer(build));
      assert.equal(r.status, 400, `${what}: ${r.text()}`);
      assert.match(r.json().message, re, what);
    }
    assert.equal((await d.docker(['exec', 'trav', 'ls', '/escape', '/etc/evil', '/root/escape'])).stdout, '');
    const missing = await put('trav', '/no/such/dir', await tarToBuffer((tw) => tw.file('f', 'x')));
    assert.equal(missing.status, 404);
    const notDir = await put('trav', '/etc/passwd', await tarToBuffer((tw) => tw.file('f', 'x')));
    assert.equal(notDir.status, 400);
    assert.equal(notDir.json().message, 'extraction point is not a directory');
    // Extracting to a symlink that points at a directory is fine (as dockerd): it lands in /etc.
    const viaLink = await put('trav', '/root/sl', await tarToBuffer((tw) => tw.file('via-link', 'ok')));
    assert.equal(viaLink.status, 200, viaLink.text());
    assert.equal(await ok(['exec', 'trav', 'cat', '/etc/via-link']), 'ok');
    await ok(['rm', '-f', 'trav']);
    await ok(['create', '--name', 'rofs', '--read-only', 'busybox', 'true']);
    const ro = await put('rofs', '/root', await tarToBuffer((tw) => tw.file('f', 'x')));
    assert.equal(ro.status, 403);
    assert.equal(ro.json().message, 'container rootfs is marked read-only');
    await ok(['rm', 'rofs']);
  });

  test('docker diff lists the writable layer: added, changed, deleted; no runtime mount points', async () => {
    await ok([
      'run',
      '--name',
      'diffc',
      'busybox',
      'sh',
      '-c',
      'echo y >> /etc/passwd; rm /etc/group; mkdir -p /newdir/sub; echo n > /root/new',
    ]);
    const lines = (await ok(['diff', 'diffc'])).trim().split('\n').sort();
    assert.deepEqual(lines, ['A /newdir', 'A /newdir/sub', 'A /root/new', 'C /etc', 'C /etc/passwd', 'C /root', 'D /etc/group'].sort());
    const api = await d.request('GET', `${V}/containers/diffc/changes`);
    assert.ok(api.json().some((c: { Path: string; Kind: number }) => c.Path === '/etc/group' && c.Kind === 2));
    await ok(['create', '--name', 'clean', 'busybox', 'true']);
    assert.equal((await d.request('GET', `${V}/containers/clean/changes`)).text(), 'null');
    await ok(['rm', 'diffc', 'clean']);
  });

  test('websocket attach: output in binary frames, input from data frames, closed when the container exits', async () => {
    await ok(['run', '-d', '-i', '--name', 'wsc', 'busybox', 'sh', '-c', 'read line; echo got-$line; sleep 0.3']);
    const ws = await wsConnect(d.socket, `${V}/containers/wsc/attach/ws?stream=1&stdin=1&stdout=1&stderr=1`);
    ws.send(0x1, Buffer.from('hello\n'));
    let text = '';
    let frame: WsFrame | null;
    while ((frame = await ws.next())) {
      if (frame.opcode === 0x8) break;
      assert.equal(frame.opcode, 0x2, 'binary frames since API 1.28');
      text += frame.payload.toString();
    }
    assert.equal(text, 'got-hello\n', 'raw bytes, no multiplexing header');
    assert.equal(frame?.opcode, 0x8, 'a close frame when the container exits');
    ws.socket.destroy();
    // Older API versions get text frames.
    await ok(['run', '-d', '--name', 'wsold', 'busybox', 'sh', '-c', 'sleep 0.5; echo old']);
    const old = await wsConnect(d.socket, `/v1.27/containers/wsold/attach/ws?stream=1`);
    const f = await old.next();
    assert.equal(f?.opcode, 0x1);
    assert.equal(f?.payload.toString(), 'old\n');
    old.socket.destroy();
    const plain = await d.request('GET', `${V}/containers/wsold/attach/ws?stream=1`);
    assert.equal(plain.status, 400);
    await ok(['rm', '-f', 'wsc', 'wsold']);
  });
});
