// The flags of `engine run` and `engine create`, and their translation into the create body
// (ContainerCreateBody from src/types/), as the docker CLI does: ports, volumes and mounts, env
// and env files, resources with unit suffixes, restart policies, networks, health checks, tmpfs.
import { tryGoDuration } from '../wire/go-duration.ts';
import { readFileSync } from 'node:fs';
import type { ContainerCreateBody, HostConfig, MountSpec, PortMap } from '../types/container-api.ts';
import { keyValues, UsageError, type FlagSpec, type Flags } from './args.ts';

const b = (name: string, short?: string, alias?: string[]): FlagSpec => ({ name, short, kind: 'bool', alias });
const s = (name: string, short?: string, alias?: string[]): FlagSpec => ({ name, short, kind: 'string', alias });
const l = (name: string, short?: string, alias?: string[]): FlagSpec => ({ name, short, kind: 'list', alias });

export const CREATE_FLAGS: FlagSpec[] = [
  b('interactive', 'i'),
  b('tty', 't'),
  b('rm'),
  b('privileged'),
  b('read-only'),
  b('init'),
  b('publish-all', 'P'),
  b('no-healthcheck'),
  b('oom-kill-disable'),
  b('quiet', 'q'),
  l('env', 'e'),
  l('env-file'),
  l('publish', 'p'),
  l('volume', 'v'),
  l('mount'),
  l('label', 'l'),
  l('cap-add'),
  l('cap-drop'),
  l('security-opt'),
  l('tmpfs'),
  l('ulimit'),
  l('dns'),
  l('dns-search'),
  l('dns-option', undefined, ['dns-opt']),
  l('add-host'),
  l('expose'),
  l('log-opt'),
  l('device'),
  l('group-add'),
  l('sysctl'),
  l('network-alias', undefined, ['net-alias']),
  l('attach', 'a'),
  l('volumes-from'),
  l('link'),
  s('name'),
  s('network', undefined, ['net']),
  s('workdir', 'w'),
  s('user', 'u'),
  s('entrypoint'),
  s('hostname', 'h'),
  s('domainname'),
  s('restart'),
  s('memory', 'm'),
  s('memory-swap'),
  s('memory-reservation'),
  s('cpus'),
  s('cpu-shares', 'c'),
  s('cpuset-cpus'),
  s('log-driver'),
  s('stop-signal'),
  s('stop-timeout'),
  s('pull'),
  s('platform'),
  s('pid'),
  s('ipc'),
  s('uts'),
  s('userns'),
  s('cgroupns'),
  s('health-cmd'),
  s('health-interval'),
  s('health-timeout'),
  s('health-retries'),
  s('health-start-period'),
  s('health-start-interval'),
  s('oom-score-adj'),
  s('memory-swappiness'),
  s('cpu-period'),
  s('cpu-quota'),
  s('cpuset-mems'),
  s('blkio-weight'),
  s('cpu-rt-period'),
  s('cpu-rt-runtime'),
  l('annotation'),
  s('detach-keys'),
  s('shm-size'),
  s('runtime'),
  s('mac-address'),
  s('ip'),
  s('ip6'),
  s('pids-limit'),
  s('cidfile'),
  s('workdir-unused'),
  s('isolation'),
  s('cgroup-parent'),
];
export const RUN_FLAGS: FlagSpec[] = [...CREATE_FLAGS, b('detach', 'd'), { name: 'sig-proxy', kind: 'bool' }];

/** RAMInBytes: 512, 512k, 64m, 1g (binary units). */
export function parseBytes(v: string): number {
  const m = v.trim().match(/^(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b)?$/i);
  if (!m) throw new UsageError(`invalid size: '${v}'`);
  const mult = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4, p: 1024 ** 5 }[m[2]!.toLowerCase() as 'k'];
  return Math.round(Number(m[1]) * mult);
}

/** Go durations (1m30s, 500ms, 10s) in nanoseconds. */
export function parseDuration(v: string): number {
  const ns = tryGoDuration(v);
  if (ns === undefined) throw new UsageError(`invalid duration: "${v}"`);
  return Number(ns);
}

/** -p [ip:][hostPort:]containerPort[/proto], with ranges: exposed ports and bindings. */
export function parsePorts(specs: string[], exposed: Record<string, Record<string, never>>, bindings: PortMap): void {
  for (const spec of specs) {
    const [addrPart, proto = 'tcp'] = spec.split('/') as [string, string?];
    const parts = addrPart.startsWith('[') ? addrPart.match(/^\[([^\]]+)\]:(.*)$/)!.slice(1) : addrPart.split(':');
    let ip = '';
    let host = '';
    let ctr: string;
    if (addrPart.startsWith('[')) {
      ip = parts[0]!;
      const rest = parts[1]!.split(':');
      [host, ctr] = rest.length === 2 ? [rest[0]!, rest[1]!] : ['', rest[0]!];
    } else if (parts.length === 3) [ip, host, ctr] = parts as [string, string, string];
    else if (parts.length === 2) [host, ctr] = parts as [string, string];
    else if (parts.length === 1) ctr = parts[0]!;
    else throw new UsageError(`invalid publish spec "${spec}"`);
    const range = (r: string): [number, number] => {
      const [a, z] = r.split('-').map(Number) as [number, number?];
      if (!Number.isInteger(a) || a <= 0 || a > 65535) throw new UsageError(`invalid containerPort: ${r}`);
      return [a, z ?? a];
    };
    const [c0, c1] = range(ctr);
    const [h0, h1] = host ? range(host) : [0, 0];
    if (host && h1 - h0 !== c1 - c0 && h0 !== h1)
      throw new UsageError(`invalid ranges specified for container and host Ports: ${ctr} and ${host}`);
    for (let p = c0; p <= c1; p++) {
      const key = `${p}/${proto}`;
      exposed[key] = {};
      const hostPort = host ? String(h1 - h0 === c1 - c0 ? h0 + (p - c0) : h0) : '';
      (bindings[key] ??= [])!.push({ HostIp: ip, HostPort: hostPort });
    }
  }
}

/** --mount type=bind,source=…,target=…,readonly … */
export function parseMount(spec: string): MountSpec {
  const m: MountSpec = { Type: 'volume' };
  for (const field of spec.split(',')) {
    const [k, v = 'true'] = field.split('=') as [string, string?];
    switch (k.toLowerCase()) {
      case 'type':
        m.Type = v as MountSpec['Type'];
        break;
      case 'source':
      case 'src':
        m.Source = v;
        break;
      case 'target':
      case 'destination':
      case 'dst':
        m.Target = v;
        break;
      case 'readonly':
      case 'ro':
        m.ReadOnly = v === 'true' || v === '1';
        break;
      case 'bind-propagation':
        m.BindOptions = { ...m.BindOptions, Propagation: v as never };
        break;
      case 'volume-nocopy':
        m.VolumeOptions = { ...m.VolumeOptions, NoCopy: v === 'true' };
        break;
      case 'tmpfs-size':
        m.TmpfsOptions = { ...m.TmpfsOptions, SizeBytes: parseBytes(v) };
        break;
      case 'tmpfs-mode':
        m.TmpfsOptions = { ...m.TmpfsOptions, Mode: parseInt(v, 8) };
        break;
      default:
        throw new UsageError(`invalid field '${k}' must be a key=value pair`);
    }
  }
  return m;
}

function envFrom(f: Flags): string[] {
  const out: string[] = [];
  for (const file of f.list('env-file'))
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const t = line.trim();
      if (t && !t.startsWith('#')) out.push(t.includes('=') ? t : process.env[t] !== undefined ? `${t}=${process.env[t]}` : t);
    }
  for (const e of f.list('env')) out.push(e.includes('=') || process.env[e] === undefined ? e : `${e}=${process.env[e]}`);
  return out;
}

/** The create body and the container name from parsed flags and [image, ...cmd]. */
export function createBody(f: Flags, detached: boolean): { body: ContainerCreateBody; name?: string; platform?: string } {
  const [image, ...cmd] = f.args;
  if (!image) throw new UsageError('requires at least 1 argument.');
  const exposed: Record<string, Record<string, never>> = {};
  const bindings: PortMap = {};
  parsePorts(f.list('publish'), exposed, bindings);
  for (const e of f.list('expose')) exposed[e.includes('/') ? e : `${e}/tcp`] = {};
  const binds: string[] = [];
  const volumes: Record<string, Record<string, never>> = {};
  for (const v of f.list('volume')) {
    const parts = v.split(':');
    if (parts.length === 1) volumes[v] = {};
    else binds.push(v);
  }
  const attach = f.list('attach');
  const interactive = f.bool('interactive');
  const hc: HostConfig = {
    AutoRemove: f.bool('rm'),
    Binds: binds.length ? binds : undefined,
    PortBindings: bindings,
    PublishAllPorts: f.bool('publish-all'),
    Privileged: f.bool('privileged'),
    ReadonlyRootfs: f.bool('read-only'),
    CapAdd: f.list('cap-add'),
    CapDrop: f.list('cap-drop'),
    SecurityOpt: f.list('security-opt'),
    Dns: f.list('dns'),
    DnsSearch: f.list('dns-search'),
    DnsOptions: f.list('dns-option'),
    ExtraHosts: f.list('add-host'),
    GroupAdd: f.list('group-add'),
    VolumesFrom: f.list('volumes-from'),
    Links: f.list('link'),
    Mounts: f.list('mount').map(parseMount),
    Tmpfs: Object.fromEntries(
      f.list('tmpfs').map((t) => {
        const i = t.indexOf(':');
        return i < 0 ? [t, ''] : [t.slice(0, i), t.slice(i + 1)];
      }),
    ),
    Sysctls: keyValues(f.list('sysctl')),
    NetworkMode: f.str('network') ?? 'default',
    ...(f.has('init') ? { Init: f.bool('init') } : {}),
    ...(f.str('memory') ? { Memory: parseBytes(f.str('memory')!) } : {}),
    ...(f.str('memory-swap') ? { MemorySwap: f.str('memory-swap') === '-1' ? -1 : parseBytes(f.str('memory-swap')!) } : {}),
    ...(f.str('memory-reservation') ? { MemoryReservation: parseBytes(f.str('memory-reservation')!) } : {}),
    ...(f.str('cpus') ? { NanoCpus: Math.round(Number(f.str('cpus')) * 1e9) } : {}),
    ...(f.str('cpu-shares') ? { CpuShares: Number(f.str('cpu-shares')) } : {}),
    ...(f.str('cpuset-cpus') ? { CpusetCpus: f.str('cpuset-cpus') } : {}),
    ...(f.str('pids-limit') ? { PidsLimit: Number(f.str('pids-limit')) } : {}),
    ...(f.str('shm-size') ? { ShmSize: parseBytes(f.str('shm-size')!) } : {}),
    ...(f.str('pid') ? { PidMode: f.str('pid') } : {}),
    ...(f.str('ipc') ? { IpcMode: f.str('ipc') } : {}),
    ...(f.str('uts') ? { UTSMode: f.str('uts') } : {}),
    ...(f.str('userns') ? { UsernsMode: f.str('userns') } : {}),
    ...(f.str('cgroupns') ? { CgroupnsMode: f.str('cgroupns') as 'host' } : {}),
    ...(f.str('cgroup-parent') ? { CgroupParent: f.str('cgroup-parent') } : {}),
    ...(f.str('runtime') ? { Runtime: f.str('runtime') } : {}),
    ...(f.bool('oom-kill-disable') ? { OomKillDisable: true } : {}),
    ...(f.str('oom-score-adj') ? { OomScoreAdj: Number(f.str('oom-score-adj')) } : {}),
    ...(f.str('memory-swappiness') ? { MemorySwappiness: Number(f.str('memory-swappiness')) } : {}),
    ...(f.str('cpu-period') ? { CpuPeriod: Number(f.str('cpu-period')) } : {}),
    ...(f.str('cpu-quota') ? { CpuQuota: Number(f.str('cpu-quota')) } : {}),
    ...(f.str('cpuset-mems') ? { CpusetMems: f.str('cpuset-mems') } : {}),
    ...(f.str('blkio-weight') ? { BlkioWeight: Number(f.str('blkio-weight')) } : {}),
    ...(f.str('cpu-rt-period') ? { CpuRealtimePeriod: Number(f.str('cpu-rt-period')) } : {}),
    ...(f.str('cpu-rt-runtime') ? { CpuRealtimeRuntime: Number(f.str('cpu-rt-runtime')) } : {}),
    ...(f.list('annotation').length ? { Annotations: keyValues(f.list('annotation')) } : {}),
    ...(f.str('log-driver') || f.list('log-opt').length
      ? { LogConfig: { Type: f.str('log-driver') ?? '', Config: keyValues(f.list('log-opt')) } }
      : {}),
    Devices: f.list('device').map((d) => {
      const [h, c, p] = d.split(':') as [string, string?, string?];
      return { PathOnHost: h, PathInContainer: c ?? h, CgroupPermissions: p ?? 'rwm' };
    }),
    Ulimits: f.list('ulimit').map((u) => {
      const [n, v] = u.split('=') as [string, string];
      const [soft, hard] = v.split(':').map(Number) as [number, number?];
      return { Name: n, Soft: soft, Hard: hard ?? soft };
    }),
  };
  const restart = f.str('restart');
  if (restart) {
    const [name, count] = restart.split(':') as [string, string?];
    hc.RestartPolicy = { Name: name as 'always', ...(count ? { MaximumRetryCount: Number(count) } : {}) };
  }
  const network = f.str('network');
  const endpoint =
    network &&
    !['host', 'none', 'bridge', 'default'].includes(network) &&
    !network.startsWith('container:') &&
    (f.list('network-alias').length || f.str('ip') || f.str('ip6'))
      ? {
          [network]: {
            Aliases: f.list('network-alias'),
            ...(f.str('ip') || f.str('ip6') ? { IPAMConfig: { IPv4Address: f.str('ip'), IPv6Address: f.str('ip6') } } : {}),
          },
        }
      : undefined;
  const health = f.bool('no-healthcheck')
    ? { Test: ['NONE'] }
    : f.str('health-cmd') ||
        f.str('health-interval') ||
        f.str('health-timeout') ||
        f.str('health-retries') ||
        f.str('health-start-period') ||
        f.str('health-start-interval')
      ? {
          ...(f.str('health-cmd') ? { Test: ['CMD-SHELL', f.str('health-cmd')!] } : {}),
          ...(f.str('health-interval') ? { Interval: parseDuration(f.str('health-interval')!) } : {}),
          ...(f.str('health-timeout') ? { Timeout: parseDuration(f.str('health-timeout')!) } : {}),
          ...(f.str('health-retries') ? { Retries: Number(f.str('health-retries')) } : {}),
          ...(f.str('health-start-period') ? { StartPeriod: parseDuration(f.str('health-start-period')!) } : {}),
          ...(f.str('health-start-interval') ? { StartInterval: parseDuration(f.str('health-start-interval')!) } : {}),
        }
      : undefined;
  const entrypoint = f.str('entrypoint');
  const body: ContainerCreateBody = {
    Image: image,
    Cmd: cmd.length ? cmd : undefined,
    ...(entrypoint !== undefined ? { Entrypoint: entrypoint === '' ? [''] : [entrypoint] } : {}),
    Env: envFrom(f),
    Labels: keyValues(f.list('label')),
    Tty: f.bool('tty'),
    OpenStdin: interactive,
    StdinOnce: interactive && !detached,
    AttachStdin: !detached && (interactive || attach.includes('stdin')),
    AttachStdout: !detached && (attach.length === 0 || attach.includes('stdout')),
    AttachStderr: !detached && (attach.length === 0 || attach.includes('stderr')),
    ExposedPorts: exposed,
    Volumes: volumes,
    ...(f.str('workdir') ? { WorkingDir: f.str('workdir') } : {}),
    ...(f.str('user') ? { User: f.str('user') } : {}),
    ...(f.str('hostname') ? { Hostname: f.str('hostname') } : {}),
    ...(f.str('domainname') ? { Domainname: f.str('domainname') } : {}),
    ...(f.str('stop-signal') ? { StopSignal: f.str('stop-signal') } : {}),
    ...(f.str('stop-timeout') ? { StopTimeout: Number(f.str('stop-timeout')) } : {}),
    ...(f.str('mac-address') ? { MacAddress: f.str('mac-address') } : {}),
    ...(health ? { Healthcheck: health } : {}),
    HostConfig: hc,
    ...(endpoint ? { NetworkingConfig: { EndpointsConfig: endpoint } } : {}),
  };
  return { body, name: f.str('name'), platform: f.str('platform') };
}
