// buildSpec: a container's configuration → the OCI runtime spec (config.json) handed to runc through
// containerd. Pure: everything that needs the host (user ids, device numbers, namespace paths, mount
// sources, the daemon's capabilities) is resolved by the caller and passed in.

import { existsSync, readFileSync } from 'node:fs';
import { internal, invalidParameter } from '../errors.ts';
import type { ContainerConfig, HostConfig, Ulimit } from '../types/container-api.ts';
import { resolveCapabilities } from './caps.ts';
import { cgroupsPath, type CgroupDriver } from './cgroups.ts';
import { DEFAULT_DEVICE_RULES, PRIVILEGED_DEVICE_RULES, deviceCgroupRule, parseDeviceCgroupRule, type ResolvedDevice } from './devices.ts';
import { containerRef } from './modes.ts';
import { baseMounts, cleanPath, shmTmpfs, sortMounts, tmpfsFromMap, toOciMount, type ResolvedMount } from './mounts.ts';
import { mergeUlimits, toRlimits } from './rlimits.ts';
import { seccompFromProfile, type DockerSeccompProfile } from './seccomp.ts';
import { defaultSeccompProfile } from './seccomp-default.ts';
import { parseSecurityOpt, securityOptWarnings } from './security-opt.ts';
import type {
  LinuxSeccomp,
  OciBlockIO,
  OciIdMapping,
  OciCapabilities,
  OciCpu,
  OciLinuxDevice,
  OciMemory,
  OciMount,
  OciNamespace,
  OciProcess,
  OciResources,
  OciSpec,
} from './spec-types.ts';

export type { ResolvedMount } from './mounts.ts';
export type { ResolvedDevice } from './devices.ts';

export const OCI_VERSION = '1.0.2';
export const DEFAULT_PATH_ENV = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** Where the init binary (tini) appears inside containers. */
export const INIT_PATH_IN_CONTAINER = '/sbin/engine-init';

/** dockerd's default masked paths, in its order (inspect shows them); hostMaskedPaths() adds the per-CPU ones. */
export const DEFAULT_MASKED_PATHS: readonly string[] = [
  '/proc/acpi',
  '/proc/asound',
  '/proc/interrupts',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/sys/devices/virtual/powercap',
  '/sys/firmware',
];

let maskedOnHost: readonly string[] | undefined;

/**
 * The default masked paths of this host, as dockerd computes them once: the list above, then each
 * possible CPU's thermal_throttle directory that exists.
 */
export function hostMaskedPaths(sysCpu = '/sys/devices/system/cpu'): readonly string[] {
  if (maskedOnHost && sysCpu === '/sys/devices/system/cpu') return maskedOnHost;
  const out = [...DEFAULT_MASKED_PATHS];
  let possible = '';
  try {
    possible = readFileSync(`${sysCpu}/possible`, 'utf8').trim();
  } catch {
    possible = ''; // no sysfs CPU list (a container without /sys): no per-CPU paths
  }
  for (const part of possible.split(',').filter(Boolean)) {
    const [lo, hi] = part.split('-').map(Number);
    for (let cpu = lo!; cpu <= (hi ?? lo!) && cpu - lo! < 4096; cpu++) {
      const path = `${sysCpu}/cpu${cpu}/thermal_throttle`;
      if (existsSync(path)) out.push(path);
    }
  }
  if (sysCpu === '/sys/devices/system/cpu') maskedOnHost = out;
  return out;
}

export const DEFAULT_READONLY_PATHS: readonly string[] = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

const MIN_CPU_SHARES = 2;
const MAX_CPU_SHARES = 262144;
const CFS_PERIOD_US = 100000;

export interface DaemonSpecDefaults {
  /** 'builtin', 'unconfined', or a parsed profile in Docker's JSON format (--seccomp-profile). */
  seccompProfile: 'builtin' | 'unconfined' | DockerSeccompProfile;
  noNewPrivileges: boolean;
  defaultUlimits: Ulimit[];
  /** bytes */
  defaultShmSize: number;
  /** '' → the driver's default parent. */
  cgroupParent: string;
  cgroupDriver: CgroupDriver;
  cgroupVersion: 1 | 2;
  defaultCgroupnsMode: 'host' | 'private';
  defaultIpcMode: 'shareable' | 'private';
  /** Host path of the init binary (tini). */
  initPath: string;
  init: boolean;
  /** Capabilities the daemon holds (readOwnCapabilities()); containers get no more. Default: all. */
  availableCapabilities?: string[];
  /** Host kernel release / GOARCH for the seccomp conditions; default: this host. */
  kernel?: string;
  arch?: string;
  /**
   * Rootless without delegated cgroups: no cgroupsPath, so runc (rootless) skips the cgroups it
   * cannot create instead of failing; limits were refused before the spec is built.
   */
  noCgroups?: boolean;
  /** cgroup v1: memory.memsw.* exists (swap accounting). Default true. */
  swapLimit?: boolean;
  /**
   * The network sysctls dockerd sets by default that this host can take (hostNetSysctls()):
   * ping_group_range only outside a user namespace. Absent: neither is set.
   */
  netSysctls?: { pingGroupRange: boolean; unprivilegedPortStart: boolean };
}

export interface SpecInput {
  id: string;
  /** Already merged with the image config (Env, Cmd, Entrypoint, WorkingDir, User…). */
  config: ContainerConfig;
  hostConfig: HostConfig;
  /** Final argv (entrypoint + cmd). */
  args: string[];
  user: { uid: number; gid: number; additionalGids: number[] };
  daemon: DaemonSpecDefaults;
  /**
   * Host files bind-mounted at /etc/hosts, /etc/resolv.conf, /etc/hostname; /dev/shm for shared IPC;
   * /sys when the container cannot mount its own (a user namespace joining a network namespace it
   * does not own: the kernel refuses that sysfs mount).
   */
  files: { hostsPath?: string; resolvConfPath?: string; hostnamePath?: string; shmPath?: string; sysfsPath?: string };
  /** Namespaces to join: a path (/proc/<pid>/ns/net, a bind-mounted netns) or 'host' for none. */
  namespaces?: { networkPath?: string; ipcPath?: string; pidPath?: string; utsPath?: string };
  /** Binds, volumes and HostConfig.Mounts, resolved to host sources. */
  mounts: ResolvedMount[];
  /** HostConfig.Devices resolved with resolveDeviceMappings(). */
  devices?: ResolvedDevice[];
  /** Variables of legacy --links (below the container's own Env, which overrides them). */
  linkEnv?: string[];
  /** For privileged containers: listHostDevices(). */
  hostDevices?: ResolvedDevice[];
  /** --userns-remap: the container gets a user namespace with these mappings (absent: the host's). */
  userns?: { uidMappings: readonly OciIdMapping[]; gidMappings: readonly OciIdMapping[] };
  /** Major/minor of the paths in BlkioWeightDevice / BlkioDevice* (deviceNumbers()). */
  blkioDevices?: Record<string, { major: number; minor: number }>;
}

/**
 * Builds the spec. `warnings` (optional) receives messages for settings that were accepted but not
 * applied (AppArmor/SELinux labels, controllers this cgroup version lacks).
 */
export function buildSpec(input: SpecInput, warnings: string[] = []): OciSpec {
  const { config, hostConfig: hc, daemon } = input;
  const privileged = hc.Privileged === true;
  const secOpts = parseSecurityOpt(hc.SecurityOpt);
  warnings.push(...securityOptWarnings(secOpts));

  const capabilities = resolveCapabilities({
    capAdd: hc.CapAdd,
    capDrop: hc.CapDrop,
    privileged,
    available: daemon.availableCapabilities,
  });

  const spec: OciSpec = {
    ociVersion: OCI_VERSION,
    process: buildProcess(input, capabilities, secOpts.noNewPrivileges ?? daemon.noNewPrivileges),
    root: { path: 'rootfs', readonly: hc.ReadonlyRootfs === true },
    mounts: buildMounts(input, secOpts.writableCgroups === true),
    linux: {
      namespaces: buildNamespaces(input),
      resources: buildResources(input, warnings),
      ...(daemon.noCgroups
        ? {}
        : { cgroupsPath: cgroupsPath(daemon.cgroupDriver, hc.CgroupParent || daemon.cgroupParent || undefined, input.id) }),
    },
  };

  // Only a new UTS namespace gets our hostname: the host's or a joined one keeps its own.
  const ownUts = hc.UTSMode !== 'host' && !input.namespaces?.utsPath;
  if (ownUts && config.Hostname) spec.hostname = config.Hostname;

  if (input.userns) {
    spec.linux.namespaces.push({ type: 'user' });
    spec.linux.uidMappings = input.userns.uidMappings.map((m) => ({ ...m }));
    spec.linux.gidMappings = input.userns.gidMappings.map((m) => ({ ...m }));
  }

  const devices = buildDevices(input);
  if (devices.length > 0) spec.linux.devices = devices;

  // The daemon's sysctls first, the container's own over them (as dockerd: a user-set one wins).
  const sysctl = { ...defaultSysctls(input), ...hc.Sysctls };
  if (Object.keys(sysctl).length > 0) spec.linux.sysctl = sysctl;

  // Unset (null on the wire): the defaults, none for a privileged container; [] masks nothing.
  const masked = hc.MaskedPaths ?? (privileged ? undefined : DEFAULT_MASKED_PATHS);
  const readonly = hc.ReadonlyPaths ?? (privileged ? undefined : DEFAULT_READONLY_PATHS);
  if (masked) spec.linux.maskedPaths = [...masked];
  if (readonly) spec.linux.readonlyPaths = [...readonly];

  const seccomp = buildSeccomp(secOpts.seccomp ?? daemon.seccompProfile, privileged, capabilities, daemon);
  if (seccomp) spec.linux.seccomp = seccomp;

  const propagation = rootfsPropagation(spec.mounts);
  if (propagation) spec.linux.rootfsPropagation = propagation;

  if (hc.Annotations && Object.keys(hc.Annotations).length > 0) spec.annotations = { ...hc.Annotations };
  return spec;
}

/**
 * The sysctls dockerd sets on its own: the NIS domain name (kernel.domainname: runc before 1.2
 * ignores the spec's `domainname`, and dockerd never fills it), and, for a container with a network
 * namespace of its own (not the host's, not another container's), unprivileged ICMP echo sockets
 * (not with the daemon in a user namespace) and binding ports below 1024 without
 * CAP_NET_BIND_SERVICE, each where the host kernel has it.
 */
function defaultSysctls(input: SpecInput): Record<string, string> {
  const { config, hostConfig: hc, daemon } = input;
  const out: Record<string, string> = {};
  if (config.Domainname) out['kernel.domainname'] = config.Domainname;
  const mode = hc.NetworkMode ?? '';
  // Unlike dockerd (whose runtime makes a remapped container's network namespace inside its user
  // namespace), the daemon makes every network namespace itself: a remapped root cannot write its
  // sysctls, so a remapped container gets neither.
  if (mode !== 'host' && !mode.startsWith('container:') && !input.userns) {
    const host = daemon.netSysctls;
    if (host?.pingGroupRange) out['net.ipv4.ping_group_range'] = '0 2147483647';
    if (host?.unprivilegedPortStart) out['net.ipv4.ip_unprivileged_port_start'] = '0';
  }
  return out;
}

/**
 * Docker's environment: PATH (default), HOSTNAME, TERM=xterm with a TTY, then the container's Env
 * replacing same-named entries; an entry without "=" removes the variable.
 */
export function buildEnv(config: ContainerConfig, linkEnv: readonly string[] = []): string[] {
  const env = [`PATH=${DEFAULT_PATH_ENV}`, `HOSTNAME=${config.Hostname ?? ''}`];
  if (config.Tty) env.push('TERM=xterm');
  return replaceOrAppendEnv([...env, ...linkEnv], config.Env ?? []);
}

/** dockerd's ReplaceOrAppendEnvValues: a later entry replaces one of the same name in place, a bare name unsets it (linear). */
export function replaceOrAppendEnv(base: readonly string[], overrides: readonly string[]): string[] {
  const out: Array<string | undefined> = [...base];
  const nameOf = (e: string) => (e.includes('=') ? e.slice(0, e.indexOf('=')) : e);
  const index = new Map<string, number>();
  out.forEach((e, i) => index.set(nameOf(e!), i));
  for (const o of overrides) {
    const name = nameOf(o);
    const i = index.get(name);
    if (!o.includes('=')) {
      if (i !== undefined) out[i] = undefined;
      index.delete(name);
      continue;
    }
    if (i !== undefined) out[i] = o;
    else index.set(name, out.push(o) - 1);
  }
  return out.filter((e): e is string => e !== undefined);
}

function buildProcess(input: SpecInput, capabilities: string[], noNewPrivileges: boolean): OciProcess {
  const { config, hostConfig: hc, daemon } = input;
  if (input.args.length === 0) throw invalidParameter('No command specified');
  let args = [...input.args];
  if (hc.Init ?? daemon.init) {
    if (!daemon.initPath) throw invalidParameter('init requested but no init binary is configured (--init-path)');
    args = [INIT_PATH_IN_CONTAINER, '--', ...args];
  }

  const process: OciProcess = {
    terminal: config.Tty === true,
    user: { uid: input.user.uid, gid: input.user.gid, additionalGids: [...input.user.additionalGids] },
    args,
    env: buildEnv(config, input.linkEnv),
    cwd: config.WorkingDir || '/',
    capabilities: capabilitySets(capabilities, input.user.uid),
  };
  if (config.Tty && hc.ConsoleSize && hc.ConsoleSize[0] > 0 && hc.ConsoleSize[1] > 0) {
    process.consoleSize = { height: hc.ConsoleSize[0], width: hc.ConsoleSize[1] };
  }
  // No rlimits unless asked for: they are then inherited from the daemon (see rlimits.ts).
  const ulimits = mergeUlimits(daemon.defaultUlimits, hc.Ulimits);
  if (ulimits.length > 0) process.rlimits = toRlimits(ulimits);
  if (noNewPrivileges) process.noNewPrivileges = true;
  // Only a non-zero request is written: setting a score below the inherited one needs
  // CAP_SYS_RESOURCE, which the daemon may lack; 0 means "inherit".
  if (hc.OomScoreAdj) process.oomScoreAdj = hc.OomScoreAdj;
  return process;
}

/** Root gets the capabilities in all sets; other users only the bounding set, as after execve. */
function capabilitySets(caps: string[], uid: number): OciCapabilities {
  if (uid === 0) return { bounding: [...caps], effective: [...caps], permitted: [...caps] };
  return { bounding: [...caps] };
}

function buildNamespaces(input: SpecInput): OciNamespace[] {
  const { hostConfig: hc, daemon } = input;
  const paths = input.namespaces ?? {};
  const ns: OciNamespace[] = [];

  const add = (type: OciNamespace['type'], mode: string | undefined, path: string | undefined, what: string) => {
    if (path === 'host' || mode === 'host') return;
    if (path) {
      ns.push({ type, path });
      return;
    }
    const ref = containerRef(mode);
    if (ref !== undefined) throw internal(`joining the ${what} namespace of container ${ref} needs its namespace path`);
    ns.push({ type });
  };

  add('pid', hc.PidMode, paths.pidPath, 'PID');
  add('network', hc.NetworkMode, paths.networkPath, 'network');
  add('ipc', hc.IpcMode, paths.ipcPath, 'IPC');
  add('uts', hc.UTSMode, paths.utsPath, 'UTS');
  ns.push({ type: 'mount' });
  if (cgroupnsMode(hc, daemon) === 'private') ns.push({ type: 'cgroup' });
  return ns;
}

/** Unset: host for privileged containers on cgroup v1 (as dockerd), else the daemon default. */
export function cgroupnsMode(
  hc: HostConfig,
  daemon: Pick<DaemonSpecDefaults, 'defaultCgroupnsMode' | 'cgroupVersion'>,
): 'host' | 'private' {
  if (hc.CgroupnsMode === 'host' || hc.CgroupnsMode === 'private') return hc.CgroupnsMode;
  if (hc.Privileged && daemon.cgroupVersion === 1) return 'host';
  return daemon.defaultCgroupnsMode;
}

function buildMounts(input: SpecInput, writableCgroups: boolean): OciMount[] {
  const { hostConfig: hc, daemon, files } = input;
  const privileged = hc.Privileged === true;
  const ipcMode = hc.IpcMode || daemon.defaultIpcMode;

  // User-visible mounts first, so defaults at the same place can give way to them.
  const user: OciMount[] = [];
  if (hc.Init ?? daemon.init) {
    user.push({ destination: INIT_PATH_IN_CONTAINER, type: 'bind', source: daemon.initPath, options: ['bind', 'ro'] });
  }
  for (const [dest, opts] of Object.entries(hc.Tmpfs ?? {})) user.push(tmpfsFromMap(dest, opts));
  for (const m of input.mounts) user.push(toOciMount(m));
  const userDests = new Set(user.map((m) => m.destination));

  const networkFileOpts = hc.ReadonlyRootfs ? ['rbind', 'rprivate', 'ro'] : ['rbind', 'rprivate'];
  for (const [dest, source] of [
    ['/etc/resolv.conf', files.resolvConfPath],
    ['/etc/hostname', files.hostnamePath],
    ['/etc/hosts', files.hostsPath],
  ] as const) {
    if (source && !userDests.has(dest)) user.push({ destination: dest, type: 'bind', source, options: [...networkFileOpts] });
  }

  const defaults: OciMount[] = [];
  for (const m of baseMounts()) {
    if (m.destination === '/sys' && privileged) m.options = m.options!.filter((o) => o !== 'ro');
    if (m.destination === '/sys' && files.sysfsPath) {
      // A sysfs the daemon mounted for the container's network namespace (files.sysfsPath).
      defaults.push({ destination: '/sys', type: 'bind', source: files.sysfsPath, options: ['rbind', ...m.options!] });
      continue;
    }
    if (m.destination === '/sys/fs/cgroup' && (privileged || writableCgroups)) m.options = m.options!.filter((o) => o !== 'ro');
    if (m.destination === '/dev/mqueue' && ipcMode === 'host') {
      defaults.push({ destination: '/dev/mqueue', type: 'bind', source: '/dev/mqueue', options: ['rbind', 'nosuid', 'noexec', 'nodev'] });
      continue;
    }
    defaults.push(m);
  }
  const shm = shmMount(ipcMode, hc.ShmSize || daemon.defaultShmSize, files.shmPath);
  if (shm) defaults.push(shm);

  const userHasDev = userDests.has('/dev');
  const kept = defaults.filter((m) => !userDests.has(m.destination) && !(userHasDev && m.destination.startsWith('/dev/')));
  return sortMounts([...kept, ...user]);
}

function shmMount(ipcMode: string, size: number, shmPath: string | undefined): OciMount | undefined {
  if (ipcMode === 'none') return undefined;
  if (ipcMode === 'private') return shmTmpfs(size);
  const source = shmPath ?? (ipcMode === 'host' ? '/dev/shm' : undefined);
  if (!source) throw internal(`IPC mode ${ipcMode} needs the shared /dev/shm path`);
  return { destination: '/dev/shm', type: 'bind', source, options: ['rbind', 'rprivate'] };
}

function buildDevices(input: SpecInput): OciLinuxDevice[] {
  const all = [...(input.hostConfig.Privileged ? (input.hostDevices ?? []) : []), ...(input.devices ?? [])];
  const byPath = new Map<string, OciLinuxDevice>();
  for (const d of all) {
    const { permissions: _permissions, ...dev } = d;
    byPath.set(cleanPath(dev.path), { ...dev, path: cleanPath(dev.path) });
  }
  return [...byPath.values()];
}

function buildResources(input: SpecInput, warnings: string[]): OciResources {
  const { hostConfig: hc, daemon } = input;
  const res: OciResources = {};

  if (hc.Privileged) {
    res.devices = [...PRIVILEGED_DEVICE_RULES];
  } else {
    res.devices = [
      ...DEFAULT_DEVICE_RULES,
      ...(input.devices ?? []).map(deviceCgroupRule),
      ...(hc.DeviceCgroupRules ?? []).map(parseDeviceCgroupRule),
    ];
  }

  const memory = buildMemory(hc, daemon, warnings);
  if (Object.keys(memory).length > 0) res.memory = memory;
  const cpu = buildCpu(hc, daemon, warnings);
  if (Object.keys(cpu).length > 0) res.cpu = cpu;
  if (hc.PidsLimit !== undefined) res.pids = { limit: hc.PidsLimit > 0 ? hc.PidsLimit : -1 };
  const blkio = buildBlockIO(input);
  if (Object.keys(blkio).length > 0) res.blockIO = blkio;
  return res;
}

function buildMemory(hc: HostConfig, daemon: DaemonSpecDefaults, warnings: string[]): OciMemory {
  const m: OciMemory = {};
  const limit = hc.Memory ?? 0;
  if (limit > 0) m.limit = limit;
  if ((hc.MemoryReservation ?? 0) > 0) m.reservation = hc.MemoryReservation;
  const swap = hc.MemorySwap ?? 0;
  if (daemon.swapLimit !== false) {
    // Swap only means something with a memory limit; unset → dockerd's default of twice the limit.
    if (limit > 0) m.swap = swap > 0 || swap === -1 ? swap : limit * 2;
  } else if (swap > 0) {
    warnings.push('Your kernel does not support swap limit capabilities or the cgroup is not mounted. Memory limited without swap.');
  }
  if (hc.MemorySwappiness !== undefined && hc.MemorySwappiness >= 0) {
    if (daemon.cgroupVersion === 2) warnings.push('Memory swappiness is not supported with cgroup v2; discarded.');
    else m.swappiness = hc.MemorySwappiness;
  }
  if (hc.OomKillDisable) {
    if (daemon.cgroupVersion === 2) warnings.push('OomKillDisable is not supported with cgroup v2; discarded.');
    else m.disableOOMKiller = true;
  }
  // API 1.40-1.51 (dockerd's memory.KernelTCP; cgroup v1 only, the v2 kernel has no such limit).
  if (hc.KernelMemoryTCP) {
    if (daemon.cgroupVersion === 2) warnings.push('KernelMemoryTCP is not supported with cgroup v2; discarded.');
    else m.kernelTCP = hc.KernelMemoryTCP;
  }
  return m;
}

function buildCpu(hc: HostConfig, daemon: DaemonSpecDefaults, warnings: string[]): OciCpu {
  const c: OciCpu = {};
  const shares = hc.CpuShares ?? 0;
  // The kernel clamps shares and runc refuses a read-back mismatch, so clamp first (as dockerd).
  if (shares > 0) c.shares = Math.min(Math.max(shares, MIN_CPU_SHARES), MAX_CPU_SHARES);
  if ((hc.NanoCpus ?? 0) > 0) {
    c.period = CFS_PERIOD_US;
    c.quota = Math.floor((hc.NanoCpus! * CFS_PERIOD_US) / 1e9);
  }
  if (hc.CpuPeriod) c.period = hc.CpuPeriod;
  if (hc.CpuQuota) c.quota = hc.CpuQuota;
  if (hc.CpuRealtimePeriod || hc.CpuRealtimeRuntime) {
    if (daemon.cgroupVersion === 2) {
      warnings.push('CPU real-time period/runtime are not supported with cgroup v2; discarded.');
    } else {
      if (hc.CpuRealtimePeriod) c.realtimePeriod = hc.CpuRealtimePeriod;
      if (hc.CpuRealtimeRuntime) c.realtimeRuntime = hc.CpuRealtimeRuntime;
    }
  }
  if (hc.CpusetCpus) c.cpus = hc.CpusetCpus;
  if (hc.CpusetMems) c.mems = hc.CpusetMems;
  return c;
}

function buildBlockIO(input: SpecInput): OciBlockIO {
  const hc = input.hostConfig;
  const b: OciBlockIO = {};
  const numbers = (path: string | undefined) => {
    const n = path ? input.blkioDevices?.[path] : undefined;
    if (!n) throw invalidParameter(`blkio device ${JSON.stringify(path ?? '')} could not be resolved to a device node`);
    return { major: n.major, minor: n.minor };
  };
  if (hc.BlkioWeight) b.weight = hc.BlkioWeight;
  if (hc.BlkioWeightDevice?.length) b.weightDevice = hc.BlkioWeightDevice.map((d) => ({ ...numbers(d.Path), weight: d.Weight ?? 0 }));
  const throttle = (list: HostConfig['BlkioDeviceReadBps']) => (list ?? []).map((d) => ({ ...numbers(d.Path), rate: d.Rate ?? 0 }));
  if (hc.BlkioDeviceReadBps?.length) b.throttleReadBpsDevice = throttle(hc.BlkioDeviceReadBps);
  if (hc.BlkioDeviceWriteBps?.length) b.throttleWriteBpsDevice = throttle(hc.BlkioDeviceWriteBps);
  if (hc.BlkioDeviceReadIOps?.length) b.throttleReadIOPSDevice = throttle(hc.BlkioDeviceReadIOps);
  if (hc.BlkioDeviceWriteIOps?.length) b.throttleWriteIOPSDevice = throttle(hc.BlkioDeviceWriteIOps);
  return b;
}

function buildSeccomp(
  choice: 'builtin' | 'unconfined' | DockerSeccompProfile,
  privileged: boolean,
  capabilities: string[],
  daemon: DaemonSpecDefaults,
): LinuxSeccomp | undefined {
  if (privileged || choice === 'unconfined') return undefined;
  const context = { capabilities, ...(daemon.kernel ? { kernel: daemon.kernel } : {}), ...(daemon.arch ? { arch: daemon.arch } : {}) };
  if (choice === 'builtin') return defaultSeccompProfile(capabilities, context);
  return seccompFromProfile(choice, context);
}

/** Shared/slave bind mounts need the rootfs itself to propagate (dockerd does the same). */
function rootfsPropagation(mounts: readonly OciMount[]): string | undefined {
  let result: string | undefined;
  for (const m of mounts) {
    const opts = m.options ?? [];
    if (opts.includes('shared') || opts.includes('rshared')) return 'rshared';
    if (opts.includes('slave') || opts.includes('rslave')) result = 'rslave';
  }
  return result;
}
