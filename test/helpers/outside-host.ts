// The "outside world" of networking tests: the machine has no outside network, so a second network
// namespace joined to the host by a veth pair plays an outside host — a client of published ports
// and a server containers reach through NAT, over IPv4 and IPv6.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, run } from './daemon.ts';

export function sh(cmd: string, args: string[]): Promise<string> {
  return run(cmd, args).then((r) => {
    if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  });
}

/**
 * A shell line fetching http://host:port/ and printing the body's last line (busybox nc: this
 * busybox's wget crashes). IPv6 hosts are given bare (fd00::1), as nc takes them.
 */
export function httpGet(host: string, port: number, nc = 'nc'): string {
  return `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | ${nc} -w 3 ${host} ${port} | tail -n 1`;
}

/**
 * The outside host: a /30 of its own for IPv4 and a /64 (a random ULA) for IPv6, routing back
 * through the host. Runs servers (a Node HTTP server answering with the client's address) and
 * clients (busybox nc) inside.
 */
export class OutsideHost {
  private servers: ChildProcess[] = [];
  private constructor(
    readonly dir: string,
    readonly nsPath: string,
    readonly hostIf: string,
    readonly hostIp: string,
    readonly ip: string,
    readonly hostIp6: string,
    readonly ip6: string,
  ) {}

  static async create(): Promise<OutsideHost> {
    const dir = await mkdtemp(join(tmpdir(), 'engine-ext-'));
    const nsPath = join(dir, 'ns');
    await writeFile(nsPath, '');
    const k = 1 + Math.floor(Math.random() * 250);
    const j = Math.floor(Math.random() * 60) * 4;
    const hostIp = `10.250.${k}.${j + 1}`;
    const ip = `10.250.${k}.${j + 2}`;
    const group = () => randomBytes(2).readUInt16BE(0).toString(16); // canonical text: no leading zeros
    const prefix = `fd77:${group()}:${group()}:1`;
    const hostIp6 = `${prefix}::1`;
    const ip6 = `${prefix}::2`;
    const hostIf = `vx${randomBytes(3).toString('hex')}`;
    await sh('unshare', [`--net=${nsPath}`, 'ip', 'link', 'set', 'lo', 'up']);
    await sh('ip', ['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', nsPath]);
    await sh('ip', ['addr', 'add', `${hostIp}/30`, 'dev', hostIf]);
    await sh('ip', ['-6', 'addr', 'add', `${hostIp6}/64`, 'dev', hostIf, 'nodad']);
    await sh('ip', ['link', 'set', hostIf, 'up']);
    await sh('nsenter', [
      `--net=${nsPath}`,
      'sh',
      '-c',
      [
        `ip addr add ${ip}/30 dev eth0`,
        `ip -6 addr add ${ip6}/64 dev eth0 nodad`,
        'ip link set eth0 up',
        `ip route add default via ${hostIp}`,
        `ip -6 route add default via ${hostIp6}`,
      ].join(' && '),
    ]);
    return new OutsideHost(dir, nsPath, hostIf, hostIp, ip, hostIp6, ip6);
  }

  /** An HTTP server on port (both families) answering every request with the address it came from. */
  async serve(port: number): Promise<void> {
    const script = `require('http').createServer((q,s)=>s.end(q.socket.remoteAddress.replace(/^::ffff:/,''))).listen(${port},'::',()=>console.log('ready'))`;
    const child = spawn('nsenter', [`--net=${this.nsPath}`, join(REPO_ROOT, 'bin/node'), '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.servers.push(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout!.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`outside server exited ${code}`)));
    });
  }

  /** An HTTP GET from the outside namespace; the body, or undefined when it failed. */
  async get(host: string, port: number): Promise<string | undefined> {
    const r = await run('nsenter', [`--net=${this.nsPath}`, 'sh', '-c', httpGet(host, port, 'busybox nc')]);
    return r.code === 0 && r.stdout !== '' ? r.stdout : undefined;
  }

  /** One UDP datagram from the outside namespace; the first reply, or undefined. */
  async udp(host: string, port: number, text: string): Promise<string | undefined> {
    const family = host.includes(':') ? 'udp6' : 'udp4';
    const script = `const s=require('dgram').createSocket('${family}');const t=setTimeout(()=>process.exit(1),2000);s.on('message',(m)=>{process.stdout.write(m);process.exit(0)});s.send(${JSON.stringify(text)},${port},${JSON.stringify(host)})`;
    const r = await run('nsenter', [`--net=${this.nsPath}`, join(REPO_ROOT, 'bin/node'), '-e', script]);
    return r.code === 0 ? r.stdout : undefined;
  }

  async destroy(): Promise<void> {
    for (const s of this.servers) s.kill('SIGKILL');
    await run('ip', ['link', 'del', this.hostIf]);
    await run('umount', [this.nsPath]);
    await rm(this.dir, { recursive: true, force: true });
  }
}
