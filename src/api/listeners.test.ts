import assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { link, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Logger } from '../util/log.ts';
import { parseHostSpec, type ListenSpec } from './host-spec.ts';
import { lookupGroup, openListeners, type ListenerOptions, type OpenListener } from './listeners.ts';

const NODE = fileURLToPath(new URL('../../../bin/node', import.meta.url));
const LISTENERS_MODULE = fileURLToPath(new URL('./listeners.js', import.meta.url));
const LOG_MODULE = fileURLToPath(new URL('../util/log.js', import.meta.url));

function captureLog(): { log: Logger; lines: Array<{ level: string; msg: string; [k: string]: unknown }> } {
  const lines: Array<{ level: string; msg: string }> = [];
  const out = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { log: new Logger({ level: 'debug', format: 'json', raw: false }, {}, out), lines };
}

type Seen = { url: string; prefix: string };
function options(overrides: Partial<ListenerOptions> & { seen?: Seen[] } = {}): ListenerOptions {
  const seen = overrides.seen ?? [];
  return {
    group: '',
    log: captureLog().log,
    onRequest(req, res, prefix) {
      seen.push({ url: req.url ?? '', prefix });
      res.setHeader('Content-Type', 'text/plain');
      res.end(`ok ${prefix}`);
    },
    onUpgrade(_req, socket) {
      socket.destroy();
    },
    ...overrides,
  };
}

function request(
  opts: http.RequestOptions & { tls?: boolean; ca?: Buffer; cert?: Buffer; key?: Buffer },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = (opts.tls ? https : http).request({ agent: false, ...opts }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function closeAll(listeners: OpenListener[]): Promise<void> {
  for (const l of listeners) {
    l.closeAllConnections();
    await l.close();
  }
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-listeners-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('unix listener', () => {
  it('listens with mode 0660, falls back to our group when the group is missing, and removes the socket on close', async () => {
    const path = join(dir, 'sub', 'a.sock'); // the parent directory is created too
    const { log, lines } = captureLog();
    const seen: Seen[] = [];
    const [l] = await openListeners([{ kind: 'unix', path }], options({ log, seen, group: 'engine-test-no-such-group' }));
    try {
      assert.equal(l!.address, `unix://${path}`);
      const st = await stat(path);
      assert.ok(st.isSocket());
      assert.equal(st.mode & 0o777, 0o660);
      assert.equal(st.uid, process.getuid!());
      assert.equal(st.gid, process.getgid!());
      assert.ok(
        lines.some(
          (x) =>
            x.level === 'warning' &&
            x.msg === `could not change group ${path} to engine-test-no-such-group: group engine-test-no-such-group not found`,
        ),
        JSON.stringify(lines),
      );
      assert.ok(lines.some((x) => x.level === 'info' && x.msg === `API listen on unix://${path}`));
      const res = await request({ socketPath: path, path: '/v1.51/_ping' });
      assert.deepEqual(res, { status: 200, body: 'ok ' });
      assert.deepEqual(seen, [{ url: '/v1.51/_ping', prefix: '' }]);
    } finally {
      await l!.close();
    }
    assert.equal(existsSync(path), false);
  });

  it('gives the socket to an existing group', async () => {
    const other = readFileSync('/etc/group', 'utf8')
      .split('\n')
      .map((l) => l.split(':'))
      .find((f) => f.length >= 3 && Number(f[2]) !== process.getgid!());
    assert.ok(other, 'need a second group in /etc/group');
    const [name, , gid] = other;
    assert.equal(await lookupGroup(name!), Number(gid));
    const path = join(dir, 'group.sock');
    const [l] = await openListeners([{ kind: 'unix', path }], options({ group: name! }));
    try {
      const st = await stat(path);
      assert.equal(st.gid, Number(gid));
      assert.equal(st.mode & 0o777, 0o660);
    } finally {
      await l!.close();
    }
  });

  it('accepts a numeric gid that is not in /etc/group', async () => {
    assert.equal(await lookupGroup('54321'), 54321);
    assert.equal(await lookupGroup('no-such-group-xyz'), undefined);
  });

  it('replaces a stale socket file nobody answers on', async () => {
    const path = join(dir, 'stale.sock');
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(join(dir, 'holder.sock'), r));
    await link(join(dir, 'holder.sock'), path); // a second name for the socket inode…
    await new Promise((r) => holder.close(r)); // …that stays behind, dead, when the server goes
    assert.ok((await stat(path)).isSocket());
    await assert.rejects(request({ socketPath: path, path: '/' }), /ECONNREFUSED/);

    const [l] = await openListeners([{ kind: 'unix', path }], options());
    try {
      assert.equal((await request({ socketPath: path, path: '/x' })).status, 200);
    } finally {
      await l!.close();
    }
  });

  it('refuses a socket a live daemon answers on and leaves it alone', async () => {
    const path = join(dir, 'live.sock');
    const live = http.createServer((_req, res) => res.end('live'));
    await new Promise<void>((r) => live.listen(path, r));
    try {
      await assert.rejects(openListeners([{ kind: 'unix', path }], options()), /address already in use/);
      assert.deepEqual(await request({ socketPath: path, path: '/' }), { status: 200, body: 'live' });
    } finally {
      await new Promise((r) => live.close(r));
    }
  });

  it('refuses a path that is not a socket', async () => {
    const path = join(dir, 'file.sock');
    await writeFile(path, 'data');
    await assert.rejects(openListeners([{ kind: 'unix', path }], options()), /exists and is not a socket/);
    assert.equal(readFileSync(path, 'utf8'), 'data');
  });
});

describe('tcp listener', () => {
  it('serves on 127.0.0.1 with the prefix, and warns loudly that plain TCP is insecure', async () => {
    const { log, lines } = captureLog();
    const seen: Seen[] = [];
    const listeners = await openListeners([parseHostSpec('tcp://127.0.0.1:0/engine/', false)], options({ log, seen }));
    try {
      const [l] = listeners;
      const port = (l!.server.address() as net.AddressInfo).port;
      assert.ok(port > 0);
      assert.equal(l!.address, `tcp://127.0.0.1:${port}/engine`);
      assert.ok(l!.server instanceof http.Server && !(l!.server instanceof https.Server));
      assert.equal(l!.server.requestTimeout, 0);
      assert.ok(l!.server.keepAliveTimeout >= 60_000);
      const res = await request({ host: '127.0.0.1', port, path: '/engine/v1.51/info' });
      assert.deepEqual(res, { status: 200, body: 'ok /engine' });
      assert.deepEqual(seen, [{ url: '/engine/v1.51/info', prefix: '/engine' }]);
      const warnings = lines.filter((x) => x.level === 'warning' && x.host === l!.address);
      assert.ok(warnings.length >= 3, JSON.stringify(lines));
      assert.ok(warnings.some((w) => /without TLS/.test(w.msg)));
      assert.ok(warnings.some((w) => /root/.test(w.msg)));
    } finally {
      await closeAll(listeners);
    }
  });

  it('an upgraded connection reset while a route still answers on it is a debug line, not an uncaught error', async () => {
    const { log, lines } = captureLog();
    let timer: NodeJS.Timeout | undefined;
    const listeners = await openListeners(
      [parseHostSpec('tcp://127.0.0.1:0', false)],
      options({
        log,
        // As the API server's handleUpgrade does for a route that is no hijack: an answer streamed on the socket.
        onUpgrade(req, socket) {
          const res = new http.ServerResponse(req);
          res.assignSocket(socket as net.Socket);
          res.writeHead(200);
          timer = setInterval(() => res.write('{"n":1}\n'), 10);
        },
      }),
    );
    try {
      const port = (listeners[0]!.server.address() as net.AddressInfo).port;
      const client = net.connect(port, '127.0.0.1');
      client.on('error', () => undefined); // the reset is ours
      client.write('GET /containers/c/stats HTTP/1.1\r\nHost: e\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n');
      await once(client, 'data');
      client.resetAndDestroy();
      const deadline = Date.now() + 10_000;
      while (!lines.some((l) => l.msg === 'upgraded connection broke') && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      assert.ok(
        lines.some((l) => l.msg === 'upgraded connection broke'),
        JSON.stringify(lines.filter((l) => l.level === 'debug')),
      );
      assert.equal((await request({ host: '127.0.0.1', port, path: '/_ping' })).status, 200, 'the listener still answers');
    } finally {
      clearInterval(timer);
      await closeAll(listeners);
    }
  });

  it('fails clearly when the port is taken, and closes what it already opened', async () => {
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as net.AddressInfo).port;
    const unixPath = join(dir, 'rollback.sock');
    try {
      await assert.rejects(
        openListeners(
          [
            { kind: 'unix', path: unixPath },
            { kind: 'tcp', host: '127.0.0.1', port, prefix: '' },
          ],
          options(),
        ),
        new RegExp(`can't listen on tcp://127.0.0.1:${port}: .*EADDRINUSE`),
      );
      assert.equal(existsSync(unixPath), false, 'the unix listener opened first is closed again');
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });

  it('close() waits for in-flight requests, and closes keep-alive connections once they finish', async () => {
    let finish!: () => void;
    const started = Promise.withResolvers<void>();
    const listeners = await openListeners([{ kind: 'tcp', host: '127.0.0.1', port: 0, prefix: '' }], {
      ...options(),
      onRequest(_req, res) {
        started.resolve();
        finish = () => res.end('late');
      },
    });
    const port = (listeners[0]!.server.address() as net.AddressInfo).port;
    const agent = new http.Agent({ keepAlive: true });
    try {
      const pending = request({ host: '127.0.0.1', port, path: '/slow', agent });
      await started.promise;
      let closed = false;
      const closing = listeners[0]!.close().then(() => (closed = true));
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(closed, false, 'close waits for the request in flight');
      await assert.rejects(request({ host: '127.0.0.1', port, path: '/new' }), /ECONNREFUSED/);
      finish();
      assert.deepEqual(await pending, { status: 200, body: 'late' });
      const timeout = new Promise((_, reject) =>
        setTimeout(() => reject(new Error('close() still waits on the idle keep-alive connection')), 3000).unref(),
      );
      await Promise.race([closing, timeout]);
    } finally {
      agent.destroy();
      await closeAll(listeners);
    }
  });

  it('closeAllConnections() cuts hijacked connections so close() can finish', async () => {
    const upgraded = Promise.withResolvers<void>();
    const listeners = await openListeners([{ kind: 'tcp', host: '127.0.0.1', port: 0, prefix: '/p' }], {
      ...options(),
      onUpgrade(_req, socket, _head, prefix) {
        socket.write(`HTTP/1.1 101 UPGRADED\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nX-Prefix: ${prefix}\r\n\r\n`);
        upgraded.resolve();
      },
    });
    const port = (listeners[0]!.server.address() as net.AddressInfo).port;
    const client = net.connect(port, '127.0.0.1');
    let received = '';
    client.on('data', (d) => (received += d));
    client.write('POST /p/v1.51/containers/x/attach HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n');
    await upgraded.promise;
    let closed = false;
    const closing = listeners[0]!.close().then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(closed, false, 'a hijacked stream keeps close() waiting');
    listeners[0]!.closeAllConnections();
    await closing;
    await once(client, 'close');
    assert.match(received, /X-Prefix: \/p/);
  });
});

describe('tls listener', () => {
  let certs: Record<'ca' | 'serverCert' | 'serverKey' | 'clientCert' | 'clientKey' | 'rogueCert' | 'rogueKey', string>;
  const read = (p: string) => readFileSync(p);

  before(() => {
    const d = join(dir, 'certs');
    const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: d, stdio: 'pipe' });
    mkdirSync(d, { recursive: true });
    const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    const ca = (name: string) =>
      ssl(
        'req',
        '-x509',
        ...key,
        '-keyout',
        `${name}-key.pem`,
        '-out',
        `${name}.pem`,
        '-days',
        '1',
        '-subj',
        `/CN=${name}`,
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      );
    const leaf = (name: string, signer: string, ext: string) => {
      ssl('req', ...key, '-keyout', `${name}-key.pem`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
      execFileSync('sh', ['-c', `printf '%s\\n' '${ext}' > ${name}.ext`], { cwd: d });
      ssl(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        `${signer}.pem`,
        '-CAkey',
        `${signer}-key.pem`,
        '-CAcreateserial',
        '-out',
        `${name}.pem`,
        '-days',
        '1',
        '-extfile',
        `${name}.ext`,
      );
    };
    ca('ca');
    ca('rogue-ca');
    leaf('server', 'ca', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth');
    leaf('client', 'ca', 'extendedKeyUsage=clientAuth');
    leaf('rogue', 'rogue-ca', 'extendedKeyUsage=clientAuth');
    const p = (f: string) => join(d, f);
    certs = {
      ca: p('ca.pem'),
      serverCert: p('server.pem'),
      serverKey: p('server-key.pem'),
      clientCert: p('client.pem'),
      clientKey: p('client-key.pem'),
      rogueCert: p('rogue.pem'),
      rogueKey: p('rogue-key.pem'),
    };
  });

  it('with verify, refuses clients without a certificate or with a foreign one, and accepts a CA-signed one', async () => {
    const seen: Seen[] = [];
    const listeners = await openListeners(
      [parseHostSpec('tcp://127.0.0.1:0', true)],
      options({
        seen,
        tls: { cert: certs.serverCert, key: certs.serverKey, ca: certs.ca, verify: true },
      }),
    );
    try {
      const server = listeners[0]!.server;
      assert.ok(server instanceof https.Server);
      const port = (server.address() as net.AddressInfo).port;
      const base = { tls: true, host: '127.0.0.1', port, path: '/v1.51/version', ca: read(certs.ca) };
      await assert.rejects(request(base));
      await assert.rejects(request({ ...base, cert: read(certs.rogueCert), key: read(certs.rogueKey) }));
      assert.equal(seen.length, 0, 'no request got through without a valid client certificate');
      assert.deepEqual(await request({ ...base, cert: read(certs.clientCert), key: read(certs.clientKey) }), { status: 200, body: 'ok ' });
      assert.equal(seen.length, 1);
    } finally {
      await closeAll(listeners);
    }
  });

  it('without verify, accepts clients without a certificate', async () => {
    const { log, lines } = captureLog();
    const listeners = await openListeners(
      [parseHostSpec('tcp://127.0.0.1:0', true)],
      options({
        log,
        tls: { cert: certs.serverCert, key: certs.serverKey, ca: join(dir, 'absent-ca.pem'), verify: false }, // CA unused without verify
      }),
    );
    try {
      const port = (listeners[0]!.server.address() as net.AddressInfo).port;
      assert.deepEqual(await request({ tls: true, host: '127.0.0.1', port, path: '/', ca: read(certs.ca) }), { status: 200, body: 'ok ' });
      // plain HTTP on a TLS port gets nowhere
      await assert.rejects(request({ host: '127.0.0.1', port, path: '/' }));
      assert.ok(!lines.some((x) => /without TLS/.test(x.msg)), 'no plain-TCP warning on a TLS listener');
    } finally {
      await closeAll(listeners);
    }
  });

  it('negotiates TLS 1.0 with an old client (spec: TLS 1.0 and later) and TLS 1.3 with a new one', async () => {
    const listeners = await openListeners(
      [parseHostSpec('tcp://127.0.0.1:0', true)],
      options({
        tls: { cert: certs.serverCert, key: certs.serverKey, verify: false },
      }),
    );
    try {
      const port = (listeners[0]!.server.address() as net.AddressInfo).port;
      const negotiate = (version: tls.SecureVersion) =>
        new Promise<string | null>((resolve, reject) => {
          const c = tls.connect(
            { host: '127.0.0.1', port, ca: read(certs.ca), minVersion: version, maxVersion: version, ciphers: 'DEFAULT:@SECLEVEL=0' },
            () => {
              resolve(c.getProtocol());
              c.end();
            },
          );
          c.on('error', reject);
        });
      assert.equal(await negotiate('TLSv1'), 'TLSv1');
      assert.equal(await negotiate('TLSv1.3'), 'TLSv1.3');
    } finally {
      await closeAll(listeners);
    }
  });

  it('serves plain HTTP on a unix socket next to a TLS TCP listener', async () => {
    const path = join(dir, 'tls-sibling.sock');
    const listeners = await openListeners(
      [{ kind: 'unix', path }, parseHostSpec('tcp://127.0.0.1:0', true)],
      options({
        tls: { cert: certs.serverCert, key: certs.serverKey, ca: certs.ca, verify: true },
      }),
    );
    try {
      assert.ok(!(listeners[0]!.server instanceof https.Server));
      assert.ok(listeners[1]!.server instanceof https.Server);
      assert.deepEqual(await request({ socketPath: path, path: '/' }), { status: 200, body: 'ok ' });
    } finally {
      await closeAll(listeners);
    }
  });

  it('names a missing certificate file', async () => {
    await assert.rejects(
      openListeners(
        [parseHostSpec('tcp://127.0.0.1:0', true)],
        options({ tls: { cert: join(dir, 'nope.pem'), key: certs.serverKey, verify: false } }),
      ),
      /could not read TLS certificate .*nope\.pem/,
    );
  });
});

describe('fd listener (systemd socket activation)', () => {
  let script: string;
  before(async () => {
    script = join(dir, 'activated.mjs');
    await writeFile(
      script,
      `
      import { openListeners } from ${JSON.stringify(LISTENERS_MODULE)};
      import { Logger } from ${JSON.stringify(LOG_MODULE)};
      const log = new Logger({ level: 'info', format: 'text', raw: false }, {}, process.stderr);
      try {
        const ls = await openListeners([{ kind: 'fd', name: process.argv[2] }], {
          group: '', log, onUpgrade() {},
          onRequest(req, res) { res.end(JSON.stringify({ pid: process.pid, listenFds: process.env.LISTEN_FDS ?? null })); },
        });
        process.stdout.write(JSON.stringify({ addresses: ls.map((l) => l.address) }) + '\\n');
      } catch (err) {
        process.stdout.write(JSON.stringify({ error: err.message }) + '\\n');
        process.exit(3);
      }
    `,
    );
  });

  async function activated(name: string): Promise<{ child: ChildProcess; port: number; first: Record<string, unknown> }> {
    const socket = net.createServer();
    await new Promise<void>((r) => socket.listen(0, '127.0.0.1', r));
    const port = (socket.address() as net.AddressInfo).port;
    // $$ of the shell is the pid node gets after exec (bin/node execs too).
    const child = spawn('sh', ['-c', 'export LISTEN_PID=$$ LISTEN_FDS=1; exec "$0" "$@"', NODE, script, name], {
      stdio: ['ignore', 'pipe', 'pipe', (socket as unknown as { _handle: { fd: number } })._handle.fd],
    });
    await new Promise((r) => socket.close(r)); // the child holds its own copy of the socket
    let out = '';
    child.stdout!.setEncoding('utf8');
    for await (const chunk of child.stdout!) {
      out += chunk;
      if (out.includes('\n')) break;
    }
    return { child, port, first: JSON.parse(out.split('\n')[0]!) };
  }

  for (const name of ['', '3']) {
    it(`a child started with LISTEN_FDS=1 serves HTTP on the passed socket (fd://${name})`, async () => {
      const { child, port, first } = await activated(name);
      try {
        assert.deepEqual(first, { addresses: ['fd://3'] });
        const res = await request({ host: '127.0.0.1', port, path: '/' });
        assert.equal(res.status, 200);
        assert.deepEqual(JSON.parse(res.body), { pid: child.pid, listenFds: null });
      } finally {
        child.kill('SIGKILL');
        await once(child, 'exit');
      }
    });
  }

  it('a child asked for an fd that was not passed exits with an error', async () => {
    const { child, first } = await activated('4');
    const [code] = await once(child, 'exit');
    assert.equal(code, 3);
    assert.deepEqual(first, { error: 'failed to find the socket with fd 4' });
  });

  it('without activation variables (or for another pid) there are no sockets', async () => {
    const missing = /^Error: no sockets found via socket activation: make sure the service was started by systemd$/;
    for (const env of [
      {},
      { LISTEN_PID: String(process.pid + 1), LISTEN_FDS: '1' },
      { LISTEN_PID: String(process.pid), LISTEN_FDS: '0' },
    ]) {
      for (const name of ['', '3']) {
        const e: NodeJS.ProcessEnv = { ...env };
        await assert.rejects(openListeners([{ kind: 'fd', name }], options({ env: e })), (err: Error) => missing.test(String(err)));
        assert.deepEqual(e, {}, 'LISTEN_* variables are consumed');
      }
    }
  });

  it('names the missing fd', async () => {
    const env: NodeJS.ProcessEnv = { LISTEN_PID: String(process.pid), LISTEN_FDS: '2', LISTEN_FDNAMES: 'a:b', OTHER: 'kept' };
    const spec: ListenSpec = { kind: 'fd', name: '7' };
    await assert.rejects(openListeners([spec], options({ env })), /^Error: failed to find the socket with fd 7$/);
    assert.deepEqual(env, { OTHER: 'kept' });
  });
});
