// Debian's docker-registry (distribution 2.8) for tests: plain HTTP or TLS from a throw-away CA,
// optionally with htpasswd basic auth and required client certificates, on a free port, storage in
// a temp dir. Plus what the registry tests need around it: a raw uploader that pushes hand-built
// images straight to a registry (independent of the daemon's push), a reverse proxy in front of a
// registry that counts and throttles requests, and a forward HTTP proxy that records what it carried.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './daemon.ts';
import { makeCa, signCert } from './openssl.ts';
import { freePort } from './ports.ts';

export const REGISTRY_BIN = '/usr/bin/docker-registry';

/** A non-loopback IPv4 address of this host (loopback registries are insecure automatically). */
export function primaryAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  throw new Error('this host has no non-loopback IPv4 address');
}

export interface RegistryCerts {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

/** CA, server certificate for the given IPs (and localhost), client certificate. */
export async function makeRegistryCerts(dir: string, ips: string[]): Promise<RegistryCerts> {
  await mkdir(dir, { recursive: true });
  await makeCa(dir, 'ca.crt', 'ca.key', 'engine-registry-test-ca');
  const ca = { cert: 'ca.crt', key: 'ca.key' };
  const san = ['DNS:localhost', ...ips.map((ip) => `IP:${ip}`)].join(',');
  await signCert(dir, {
    ca,
    cn: 'registry',
    cert: 'server.crt',
    key: 'server.key',
    ext: `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`,
  });
  await signCert(dir, { ca, cn: 'engine-client', cert: 'client.cert', key: 'client.key', ext: 'extendedKeyUsage=clientAuth\n' });
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    serverCert: join(dir, 'server.crt'),
    serverKey: join(dir, 'server.key'),
    clientCert: join(dir, 'client.cert'),
    clientKey: join(dir, 'client.key'),
  };
}

export interface RegistryOptions {
  tls?: { cert: string; key: string; clientCa?: string };
  auth?: { user: string; password: string };
  /** Listen address (default all interfaces, so both loopback and the primary address reach it). */
  bind?: string;
}

export class TestRegistry {
  proc: ChildProcess | null = null;
  output = '';

  constructor(
    readonly dir: string,
    readonly port: number,
    readonly opts: RegistryOptions,
  ) {}

  /** host:port on loopback. */
  get host(): string {
    return `127.0.0.1:${this.port}`;
  }
  get scheme(): string {
    return this.opts.tls ? 'https' : 'http';
  }

  async start(): Promise<void> {
    const cfg =
      [
        'version: 0.1',
        'log:',
        '  level: error',
        '  accesslog:',
        '    disabled: true',
        'storage:',
        '  filesystem:',
        `    rootdirectory: ${join(this.dir, 'data')}`,
        '  delete:',
        '    enabled: true',
        '  maintenance:',
        '    uploadpurging:',
        '      enabled: false',
        'http:',
        `  addr: ${this.opts.bind ?? '0.0.0.0'}:${this.port}`,
        ...(this.opts.tls
          ? [
              '  tls:',
              `    certificate: ${this.opts.tls.cert}`,
              `    key: ${this.opts.tls.key}`,
              ...(this.opts.tls.clientCa ? ['    clientcas:', `      - ${this.opts.tls.clientCa}`] : []),
            ]
          : []),
        ...(this.opts.auth ? ['auth:', '  htpasswd:', '    realm: engine-test', `    path: ${join(this.dir, 'htpasswd')}`] : []),
      ].join('\n') + '\n';
    await writeFile(join(this.dir, 'config.yml'), cfg);
    this.output = '';
    this.proc = spawn(REGISTRY_BIN, ['serve', join(this.dir, 'config.yml')], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc.stdout!.on('data', (d) => (this.output += d));
    this.proc.stderr!.on('data', (d) => (this.output += d));
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (this.proc.exitCode !== null) throw new Error(`docker-registry exited: ${this.output}`);
      const up = await new Promise<boolean>((resolve) => {
        const s = connect(this.port, '127.0.0.1');
        s.on('connect', () => {
          s.destroy();
          resolve(true);
        });
        s.on('error', () => resolve(false));
      });
      if (up) return;
      if (Date.now() > deadline) throw new Error(`docker-registry did not listen on ${this.port}: ${this.output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGKILL, as a crash mid-transfer. */
  async kill(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null || p.signalCode) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
  }

  async cleanup(): Promise<void> {
    await this.kill();
    await rm(this.dir, { recursive: true, force: true });
  }
}

export async function startRegistry(opts: RegistryOptions = {}): Promise<TestRegistry> {
  const dir = await mkdtemp(join(tmpdir(), 'engine-registry-'));
  if (opts.auth) {
    const r = await run('htpasswd', ['-Bbn', opts.auth.user, opts.auth.password]);
    if (r.code !== 0) throw new Error(`htpasswd failed: ${r.stderr}`);
    await writeFile(join(dir, 'htpasswd'), r.stdout);
  }
  const reg = new TestRegistry(dir, await freePort(), opts);
  await reg.start();
  return reg;
}

// ---- raw image upload (no daemon involved) ----------------------------------------------------

export const sha256 = (b: Buffer | string) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

export interface RawBlob {
  mediaType: string;
  data: Buffer;
}

export interface RawImage {
  config: Record<string, unknown>;
  layers: RawBlob[];
  /** Docker schema2 media types instead of OCI ones. */
  docker?: boolean;
}

export interface PushedManifest {
  digest: string;
  size: number;
  mediaType: string;
  configDigest: string;
  bytes: Buffer;
}

async function call(
  method: string,
  url: string,
  body?: Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(url, { method, ...(body ? { body: new Uint8Array(body) } : {}), headers, redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Monolithic upload of one blob (skipped when the registry has it). */
export async function uploadBlob(base: string, repo: string, data: Buffer): Promise<string> {
  const digest = sha256(data);
  if ((await call('HEAD', `${base}/v2/${repo}/blobs/${digest}`)).status === 200) return digest;
  const start = await call('POST', `${base}/v2/${repo}/blobs/uploads/`);
  if (start.status !== 202) throw new Error(`upload start: ${start.status} ${start.text}`);
  const loc = new URL(start.headers.get('location')!, base);
  loc.searchParams.set('digest', digest);
  const put = await call('PUT', loc.toString(), data, { 'Content-Type': 'application/octet-stream' });
  if (put.status !== 201) throw new Error(`upload put: ${put.status} ${put.text}`);
  return digest;
}

export async function putManifest(base: string, repo: string, ref: string, mediaType: string, bytes: Buffer): Promise<void> {
  const r = await call('PUT', `${base}/v2/${repo}/manifests/${ref}`, bytes, { 'Content-Type': mediaType });
  if (r.status !== 201) throw new Error(`manifest put ${repo}:${ref}: ${r.status} ${r.text}`);
}

/** Uploads layers, config and manifest; tags it when `tag` is given. */
export async function pushRawImage(base: string, repo: string, tag: string | null, img: RawImage): Promise<PushedManifest> {
  const configBytes = Buffer.from(JSON.stringify(img.config));
  const configDigest = await uploadBlob(base, repo, configBytes);
  const layers = [];
  for (const l of img.layers) layers.push({ mediaType: l.mediaType, digest: await uploadBlob(base, repo, l.data), size: l.data.length });
  const mediaType = img.docker ? 'application/vnd.docker.distribution.manifest.v2+json' : 'application/vnd.oci.image.manifest.v1+json';
  const bytes = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType,
      config: {
        mediaType: img.docker ? 'application/vnd.docker.container.image.v1+json' : 'application/vnd.oci.image.config.v1+json',
        digest: configDigest,
        size: configBytes.length,
      },
      layers,
    }),
  );
  const digest = sha256(bytes);
  await putManifest(base, repo, tag ?? digest, mediaType, bytes);
  return { digest, size: bytes.length, mediaType, configDigest, bytes };
}

/** An index (or docker manifest list) over already pushed manifests. */
export async function pushRawIndex(
  base: string,
  repo: string,
  tag: string,
  entries: Array<{ manifest: PushedManifest; platform: Record<string, string> }>,
  docker = false,
): Promise<PushedManifest> {
  const mediaType = docker ? 'application/vnd.docker.distribution.manifest.list.v2+json' : 'application/vnd.oci.image.index.v1+json';
  const bytes = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType,
      manifests: entries.map((e) => ({
        mediaType: e.manifest.mediaType,
        digest: e.manifest.digest,
        size: e.manifest.size,
        platform: e.platform,
      })),
    }),
  );
  await putManifest(base, repo, tag, mediaType, bytes);
  return { digest: sha256(bytes), size: bytes.length, mediaType, configDigest: '', bytes };
}

// ---- proxies ----------------------------------------------------------------------------------

/** A reverse proxy in front of a registry: counts requests, can throttle or cut blob downloads. */
export class RegistryProxy {
  private server!: Server;
  port = 0;
  /** "GET /v2/x/blobs/sha256:…" for every request seen. */
  readonly seen: string[] = [];
  /** Bytes per second for blob bodies (0 = unthrottled). */
  throttle = 0;
  /** Cut the next blob download after this many bytes (once). */
  cutNextBlobAfter = 0;
  /** Flip one byte in every blob body of at least this size (0: off), like a corrupting network. */
  corruptBlobsFrom = 0;
  /** Blob downloads in flight now, and the most seen at once. */
  blobsInFlight = 0;
  maxBlobsInFlight = 0;
  /** Blob uploads (PUT …/blobs/uploads/…) in flight now, and the most seen at once. */
  uploadsInFlight = 0;
  maxUploadsInFlight = 0;

  constructor(private readonly target: number) {}

  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  blobGets(): string[] {
    return this.seen.filter((s) => /^GET \/v2\/.+\/blobs\/sha256:/.test(s));
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => this.forward(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as { port: number }).port;
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    this.seen.push(`${req.method} ${req.url}`);
    const isBlob = req.method === 'GET' && /\/blobs\/sha256:/.test(req.url ?? '');
    if ((req.method === 'PUT' || req.method === 'PATCH') && /\/blobs\/uploads\//.test(req.url ?? '')) {
      this.uploadsInFlight++;
      this.maxUploadsInFlight = Math.max(this.maxUploadsInFlight, this.uploadsInFlight);
      res.on('close', () => this.uploadsInFlight--);
    }
    if (isBlob) {
      this.blobsInFlight++;
      this.maxBlobsInFlight = Math.max(this.maxBlobsInFlight, this.blobsInFlight);
      res.on('close', () => this.blobsInFlight--);
    }
    const up = httpRequest({ host: '127.0.0.1', port: this.target, method: req.method, path: req.url, headers: req.headers }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      if (isBlob && this.corruptBlobsFrom && Number(ur.headers['content-length'] ?? 0) >= this.corruptBlobsFrom) {
        let first = true;
        ur.on('data', (chunk: Buffer) => {
          if (first && chunk.length) {
            chunk = Buffer.from(chunk);
            chunk[0] = chunk[0]! ^ 0xff;
            first = false;
          }
          res.write(chunk);
        });
        ur.on('end', () => res.end());
        return;
      }
      if (!isBlob || (!this.throttle && !(this.cutNextBlobAfter && Number(ur.headers['content-length'] ?? 0) > this.cutNextBlobAfter))) {
        ur.pipe(res);
        ur.on('error', () => res.destroy());
        return;
      }
      // Only a body larger than the cut point is cut (not the small config blob).
      const cut = Number(ur.headers['content-length'] ?? 0) > this.cutNextBlobAfter ? this.cutNextBlobAfter : 0;
      if (cut) this.cutNextBlobAfter = 0;
      let sent = 0;
      const started = Date.now();
      ur.on('data', (chunk: Buffer) => {
        sent += chunk.length;
        if (cut && sent > cut) {
          res.destroy();
          ur.destroy();
          return;
        }
        res.write(chunk);
        if (this.throttle) {
          const due = (sent / this.throttle) * 1000 - (Date.now() - started);
          if (due > 5) {
            ur.pause();
            setTimeout(() => ur.resume(), due);
          }
        }
      });
      ur.on('end', () => res.end());
      ur.on('error', () => res.destroy());
      ur.on('aborted', () => res.destroy());
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** A forward HTTP proxy (absolute-form requests only; CONNECT is refused) that records its traffic. */
export class ForwardProxy {
  private server!: Server;
  port = 0;
  readonly seen: string[] = [];

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      this.seen.push(`${req.method} ${req.url}`);
      const u = new URL(req.url ?? '/');
      const up = httpRequest(
        { host: u.hostname, port: u.port, method: req.method, path: u.pathname + u.search, headers: req.headers },
        (ur) => {
          res.writeHead(ur.statusCode ?? 502, ur.headers);
          ur.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
    this.server.on('connect', (req, socket) => {
      this.seen.push(`CONNECT ${req.url}`);
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as { port: number }).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/**
 * A registry front that demands Bearer tokens (like Docker Hub): /v2/… without a valid token gets a
 * 401 challenge pointing at /token, which checks Basic credentials (or a refresh token) and hands
 * out tokens; authorised requests are forwarded to the registry behind it.
 */
export class TokenGateway {
  private server!: Server;
  port = 0;
  readonly tokenRequests: string[] = [];
  private readonly tokens = new Set<string>();
  private readonly refresh = new Set<string>();

  constructor(
    private readonly target: number,
    private readonly user: string,
    private readonly password: string,
  ) {}

  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://gateway');
      if (url.pathname === '/token') return this.token(req, res, url);
      const auth = req.headers.authorization ?? '';
      if (!auth.startsWith('Bearer ') || !this.tokens.has(auth.slice(7))) {
        res.writeHead(401, {
          'Content-Type': 'application/json',
          'Docker-Distribution-Api-Version': 'registry/2.0',
          'WWW-Authenticate': `Bearer realm="http://${this.host}/token",service="engine-test-registry"`,
        });
        res.end('{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":null}]}\n');
        return;
      }
      const headers = { ...req.headers };
      delete headers.authorization;
      const up = httpRequest({ host: '127.0.0.1', port: this.target, method: req.method, path: req.url, headers }, (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as { port: number }).port;
  }

  private token(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      this.tokenRequests.push(`${req.method} ${url.search}${form.toString() ? ' ' + form.toString() : ''}`);
      let ok = false;
      if (req.method === 'POST' && form.get('grant_type') === 'refresh_token') ok = this.refresh.has(form.get('refresh_token') ?? '');
      else {
        const basic = req.headers.authorization?.startsWith('Basic ')
          ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString('utf8')
          : '';
        ok = basic === `${this.user}:${this.password}`;
      }
      if (!ok) {
        res.writeHead(401, { 'Content-Type': 'application/json' });
        res.end('{"details":"incorrect username or password"}\n');
        return;
      }
      const token = createHash('sha256').update(String(Math.random())).digest('hex');
      this.tokens.add(token);
      const body: Record<string, unknown> = { token, access_token: token, expires_in: 300 };
      if (url.searchParams.get('offline_token') === 'true') {
        const r = `refresh-${token.slice(0, 16)}`;
        this.refresh.add(r);
        body.refresh_token = r;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** A server that answers like a v1-only registry: /v2/ is unknown, /v1/_ping works. */
export async function startV1OnlyRegistry(): Promise<{ host: string; stop(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/v1/')) {
      res.writeHead(200, { 'Content-Type': 'application/json', 'X-Docker-Registry-Version': '0.9.1' });
      res.end('true');
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('404 page not found\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    host: `127.0.0.1:${port}`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
