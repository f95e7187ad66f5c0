// The parts of the OCI runtime specification 1.0.2 (config.json) that engined produces. Names and
// shapes follow the specification's JSON exactly, so `serializeSpec(spec)` is the file runc reads.

export interface OciSpec {
  ociVersion: string;
  process: OciProcess;
  root: { path: string; readonly?: boolean };
  hostname?: string;
  domainname?: string;
  mounts: OciMount[];
  annotations?: Record<string, string>;
  /** OCI hooks by phase (prestart, createRuntime, …): CDI devices may bring some. */
  hooks?: Record<string, OciHook[]>;
  linux: OciLinux;
}

export interface OciHook {
  path: string;
  args?: string[];
  env?: string[];
  timeout?: number;
}

export interface OciUser {
  uid: number;
  gid: number;
  umask?: number;
  additionalGids?: number[];
}

export interface OciCapabilities {
  bounding?: string[];
  effective?: string[];
  inheritable?: string[];
  permitted?: string[];
  ambient?: string[];
}

/**
 * rlimit values are uint64 in Go; RLIM_INFINITY (2^64-1) does not fit a JS number, so limits are
 * bigint and serializeSpec writes them as exact integers.
 */
export interface OciRlimit {
  type: string;
  hard: bigint;
  soft: bigint;
}

export interface OciProcess {
  terminal?: boolean;
  consoleSize?: { height: number; width: number };
  user: OciUser;
  args: string[];
  env: string[];
  cwd: string;
  capabilities?: OciCapabilities;
  rlimits?: OciRlimit[];
  noNewPrivileges?: boolean;
  apparmorProfile?: string;
  oomScoreAdj?: number;
  selinuxLabel?: string;
}

export interface OciMount {
  destination: string;
  type?: string;
  source?: string;
  options?: string[];
}

export type OciNamespaceType = 'pid' | 'network' | 'mount' | 'ipc' | 'uts' | 'user' | 'cgroup';

export interface OciNamespace {
  type: OciNamespaceType;
  path?: string;
}

export interface OciDeviceCgroup {
  allow: boolean;
  type?: 'a' | 'c' | 'b';
  major?: number;
  minor?: number;
  access?: string;
}

export interface OciLinuxDevice {
  path: string;
  type: 'c' | 'b' | 'u' | 'p';
  major: number;
  minor: number;
  fileMode?: number;
  uid?: number;
  gid?: number;
}

export interface OciMemory {
  limit?: number;
  reservation?: number;
  swap?: number;
  kernel?: number;
  kernelTCP?: number;
  swappiness?: number;
  disableOOMKiller?: boolean;
}

export interface OciCpu {
  shares?: number;
  quota?: number;
  period?: number;
  realtimeRuntime?: number;
  realtimePeriod?: number;
  cpus?: string;
  mems?: string;
}

export interface OciBlockIODevice {
  major: number;
  minor: number;
}

export interface OciBlockIO {
  weight?: number;
  weightDevice?: (OciBlockIODevice & { weight?: number })[];
  throttleReadBpsDevice?: (OciBlockIODevice & { rate: number })[];
  throttleWriteBpsDevice?: (OciBlockIODevice & { rate: number })[];
  throttleReadIOPSDevice?: (OciBlockIODevice & { rate: number })[];
  throttleWriteIOPSDevice?: (OciBlockIODevice & { rate: number })[];
}

export interface OciResources {
  devices?: OciDeviceCgroup[];
  memory?: OciMemory;
  cpu?: OciCpu;
  pids?: { limit: number };
  blockIO?: OciBlockIO;
}

export interface OciSeccompArg {
  index: number;
  value: number;
  valueTwo?: number;
  op: string;
}

export interface OciSeccompSyscall {
  names: string[];
  action: string;
  errnoRet?: number;
  args?: OciSeccompArg[];
}

export interface LinuxSeccomp {
  defaultAction: string;
  defaultErrnoRet?: number;
  architectures?: string[];
  flags?: string[];
  listenerPath?: string;
  listenerMetadata?: string;
  syscalls?: OciSeccompSyscall[];
}

export interface OciIdMapping {
  containerID: number;
  hostID: number;
  size: number;
}

export interface OciLinux {
  namespaces: OciNamespace[];
  uidMappings?: OciIdMapping[];
  gidMappings?: OciIdMapping[];
  devices?: OciLinuxDevice[];
  cgroupsPath?: string;
  resources?: OciResources;
  sysctl?: Record<string, string>;
  seccomp?: LinuxSeccomp;
  rootfsPropagation?: string;
  maskedPaths?: string[];
  readonlyPaths?: string[];
  mountLabel?: string;
}

/** config.json text; bigints (rlimits) are written as exact integers. */
export function serializeSpec(spec: OciSpec, indent?: number): string {
  const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;
  return JSON.stringify(spec, (_key, value) => (typeof value === 'bigint' ? rawJSON(value.toString()) : value), indent);
}
