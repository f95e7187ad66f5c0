// A test volume plugin: the VolumeDriver protocol on a unix socket, keeping each volume as a
// directory under its own root and counting mounts per ID, as a real driver (sshfs, nfs…) would.
import { mkdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';

export class TestVolumePlugin {
  readonly volumes = new Map<string, { opts: Record<string, string>; mounts: Set<string> }>();
  readonly calls: string[] = [];
  private server?: Server;

  constructor(
    readonly socketPath: string,
    readonly root: string,
    private readonly scope: 'local' | 'global' = 'local',
  ) {}

  async start(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await rm(this.socketPath, { force: true });
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void this.answer(req.url ?? '', chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : {}).then((a) => {
          res.writeHead(200, { 'Content-Type': 'application/vnd.docker.plugins.v1+json' });
          res.end(JSON.stringify(a));
        });
      });
    });
    await new Promise<void>((r) => this.server!.listen(this.socketPath, r));
  }

  private async answer(url: string, b: { Name?: string; ID?: string; Opts?: Record<string, string> }): Promise<unknown> {
    const method = url.replace('/VolumeDriver.', '');
    if (url === '/Plugin.Activate') return { Implements: ['VolumeDriver'] };
    this.calls.push(`${method}${b.Name ? ` ${b.Name}` : ''}${b.ID ? ` ${b.ID.slice(0, 12)}` : ''}`);
    const name = b.Name ?? '';
    const v = this.volumes.get(name);
    const path = join(this.root, name);
    switch (method) {
      case 'Create':
        if (b.Opts?.fail) return { Err: `refusing ${name}: ${b.Opts.fail}` };
        this.volumes.set(name, { opts: b.Opts ?? {}, mounts: new Set() });
        await mkdir(path, { recursive: true });
        return {};
      case 'Remove':
        if (!v) return { Err: `no volume ${name}` };
        if (v.mounts.size) return { Err: `${name} is mounted` };
        this.volumes.delete(name);
        await rm(path, { recursive: true, force: true });
        return {};
      case 'Mount':
        if (!v) return { Err: `no volume ${name}` };
        v.mounts.add(b.ID ?? '');
        return { Mountpoint: path };
      case 'Unmount':
        v?.mounts.delete(b.ID ?? '');
        return {};
      case 'Path':
        return v ? { Mountpoint: v.mounts.size ? path : '' } : { Err: `no volume ${name}` };
      case 'Get':
        return v ? { Volume: { Name: name, Mountpoint: path } } : { Err: `no volume ${name}` };
      case 'List':
        return { Volumes: [...this.volumes.keys()].map((n) => ({ Name: n })) };
      case 'Capabilities':
        return { Capabilities: { Scope: this.scope } };
      default:
        return { Err: `unknown call ${method}` };
    }
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (s)
      await new Promise<void>((r) => {
        s.close(() => r());
        s.closeAllConnections();
      });
    await rm(this.socketPath, { force: true });
  }
}
