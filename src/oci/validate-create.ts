// validateCreateBody: POST /containers/create body → a typed, normalized ContainerCreateBody, or an
// invalidParameter error (HTTP 400) whose message names the field, in dockerd's wording where dockerd
// has one. Checks are those dockerd makes at create time (verifyContainerSettings and the mount
// parser), plus the ones runc would otherwise only report at start (sysctls, ulimits, devices).

import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { posix } from 'node:path';
import { EngineError, invalidParameter } from '../errors.ts';
import type { ContainerConfig, ContainerCreateBody, HostConfig, MountSpec, NetworkingConfig } from '../types/container-api.ts';
import { normalizeCapabilities } from './caps.ts';
import { parseDeviceCgroupRule } from './devices.ts';
import { containerRef, validCgroupnsMode, validIpcMode, validPidMode, validUtsMode } from './modes.ts';
import { PROPAGATIONS, cleanPath, tmpfsMountOptions } from './mounts.ts';
import { ULIMIT_RESOURCES } from './rlimits.ts';
import { parseSecurityOpt } from './security-opt.ts';
import { parseSignal } from './signals.ts';
import { validateSysctls } from './sysctls.ts';
import { CONTAINER_CONFIG, HOST_CONFIG, NETWORKING_CONFIG, decodeStruct } from './wire-schema.ts';

export interface ValidateOptions {
  /** CPUs on the host (NanoCpus and CpusetCpus limits); default os.availableParallelism(). */
  numCPU?: number;
  /** Whether a bind source exists (HostConfig.Mounts binds must); default fs.existsSync. */
  bindSourceExists?: (path: string) => boolean;
  /** The daemon's cgroup driver; with 'systemd' a CgroupParent must be a slice. */
  cgroupDriver?: 'cgroupfs' | 'systemd';
  /** Receives warnings (settings accepted but adjusted or ineffective), as dockerd returns them. */
  warnings?: string[];
}

const MIN_MEMORY = 6 * 1024 * 1024;
const MIN_DURATION_NS = 1_000_000;
const LOCAL_VOLUME_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]+$/;

const bad = (msg: string) => invalidParameter(msg);

function findKey(obj: Record<string, unknown>, name: string): string | undefined {
  if (name in obj) return name;
  return Object.keys(obj).find((k) => k.toLowerCase() === name.toLowerCase());
}

export function validateCreateBody(body: unknown, options: ValidateOptions = {}): ContainerCreateBody {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const jt = Array.isArray(body) ? 'array' : typeof body === 'boolean' ? 'bool' : typeof body;
    throw bad(`invalid JSON: json: cannot unmarshal ${jt} into Go value of type container.CreateRequest`);
  }
  const raw = body as Record<string, unknown>;
  const config = decodeStruct(raw, CONTAINER_CONFIG, 'ContainerConfig') as ContainerConfig;
  const hcKey = findKey(raw, 'HostConfig');
  const ncKey = findKey(raw, 'NetworkingConfig');
  const hostConfig = hcKey && raw[hcKey] != null ? (decodeStruct(raw[hcKey], HOST_CONFIG, 'HostConfig') as HostConfig) : undefined;
  const networking =
    ncKey && raw[ncKey] != null ? (decodeStruct(raw[ncKey], NETWORKING_CONFIG, 'NetworkingConfig') as NetworkingConfig) : undefined;

  validateContainerConfig(config);
  if (hostConfig) validateHostConfig(hostConfig, config, options);

  const out: ContainerCreateBody = { ...config };
  if (hostConfig) out.HostConfig = hostConfig;
  if (networking) out.NetworkingConfig = networking;
  return out;
}

// ---------------------------------------------------------------------------------------------
// ContainerConfig

function validateContainerConfig(c: ContainerConfig): void {
  if (c.WorkingDir) {
    if (!c.WorkingDir.startsWith('/')) {
      throw bad(`the working directory '${c.WorkingDir}' is invalid, it needs to be an absolute path`);
    }
    c.WorkingDir = cleanPath(c.WorkingDir);
  }
  if (c.StopSignal) parseSignal(c.StopSignal);
  for (const e of c.Env ?? []) {
    const name = e.includes('=') ? e.slice(0, e.indexOf('=')) : e;
    if (name === '') throw bad(`invalid environment variable: ${e}`);
  }
  const h = c.Healthcheck;
  if (h) {
    const below = (v: number | undefined) => v !== undefined && v !== 0 && v < MIN_DURATION_NS;
    if (below(h.Interval)) throw bad('Interval in Healthcheck cannot be less than 1ms');
    if (below(h.Timeout)) throw bad('Timeout in Healthcheck cannot be less than 1ms');
    if ((h.Retries ?? 0) < 0) throw bad('Retries in Healthcheck cannot be negative');
    if (below(h.StartPeriod)) throw bad('StartPeriod in Healthcheck cannot be less than 1ms');
    if (below(h.StartInterval)) throw bad('StartInterval in Healthcheck cannot be less than 1ms');
  }
}

// ---------------------------------------------------------------------------------------------
// HostConfig

function validateHostConfig(hc: HostConfig, c: ContainerConfig, options: ValidateOptions): void {
  const warnings = options.warnings ?? [];
  const restart = hc.RestartPolicy;
  const restartIsNone = !restart?.Name || restart.Name === 'no';
  if (hc.AutoRemove && !restartIsNone) throw bad("can't create 'AutoRemove' container with restart policy");

  for (const m of hc.Mounts ?? []) validateMount(m, options.bindSourceExists ?? existsSync);
  for (const h of hc.ExtraHosts ?? []) validateExtraHost(h);
  validatePortBindings(hc);
  if (restart) validateRestartPolicy(restart.Name ?? '', restart.MaximumRetryCount ?? 0);
  for (const [field, list] of [
    ['CapAdd', hc.CapAdd],
    ['CapDrop', hc.CapDrop],
  ] as const) {
    try {
      normalizeCapabilities(list ?? []);
    } catch (err) {
      throw bad(`invalid ${field}: ${(err as Error).message}`);
    }
  }
  if (hc.Isolation && hc.Isolation !== 'default') throw bad(`invalid isolation '${hc.Isolation}' on linux`);
  for (const k of Object.keys(hc.Annotations ?? {})) {
    if (k === '') throw bad('invalid Annotations: the empty string is not permitted as an annotation key');
  }

  validateResources(hc, options.numCPU ?? availableParallelism(), warnings);

  if (!validIpcMode(hc.IpcMode ?? '')) throw bad(`invalid IPC mode: ${hc.IpcMode}`);
  if (!validPidMode(hc.PidMode ?? '')) throw bad(`invalid PID mode: ${hc.PidMode}`);
  if ((hc.ShmSize ?? 0) < 0) throw bad('SHM size can not be less than 0');
  if (!validUtsMode(hc.UTSMode ?? '')) throw bad(`invalid UTS mode: ${hc.UTSMode}`);
  const oom = hc.OomScoreAdj ?? 0;
  if (oom < -1000 || oom > 1000) throw bad(`Invalid value ${oom}, range for oom score adj is [-1000, 1000]`);
  if (hc.NetworkMode === 'host' && Object.keys(hc.PortBindings ?? {}).length > 0) {
    warnings.push('Published ports are discarded when using host network mode');
  }
  if (hc.CgroupParent && options.cgroupDriver === 'systemd' && (hc.CgroupParent.length <= 6 || !hc.CgroupParent.endsWith('.slice'))) {
    throw bad('cgroup-parent for systemd cgroup should be a valid slice named as "xxx.slice"');
  }
  for (const dest of Object.keys(hc.Tmpfs ?? {})) validateTarget(dest);
  if (!validCgroupnsMode(hc.CgroupnsMode ?? '')) throw bad(`invalid cgroup namespace mode: ${hc.CgroupnsMode}`);

  validateNetworkMode(hc, c);
  if (hc.UTSMode === 'host' && c.Hostname) throw bad('conflicting options: hostname and the UTS mode');
  // HOST_NAME_MAX: the kernel refuses a longer one at start; dockerd refuses it at create.
  if (c.Hostname && Buffer.byteLength(c.Hostname) > 64) throw bad(`hostname ${JSON.stringify(c.Hostname)} is too long (maximum 64 bytes)`);

  validateBindsAndMountPoints(hc);
  validateDevices(hc);
  validateUlimits(hc);
  validateSysctls(hc.Sysctls, { ipcMode: hc.IpcMode, networkMode: hc.NetworkMode, utsMode: hc.UTSMode });
  parseSecurityOpt(hc.SecurityOpt);
}

export function validateRestartPolicy(name: string, maxRetry: number): void {
  switch (name) {
    case 'always':
    case 'unless-stopped':
    case 'no':
      if (maxRetry !== 0) {
        let msg = "invalid restart policy: maximum retry count can only be used with 'on-failure'";
        if (maxRetry < 0) msg += ' and cannot be negative';
        throw bad(msg);
      }
      return;
    case 'on-failure':
      if (maxRetry < 0) throw bad('invalid restart policy: maximum retry count cannot be negative');
      return;
    case '':
      return;
    default:
      throw bad(`invalid restart policy: unknown policy '${name}'; use one of 'no', 'always', 'on-failure', or 'unless-stopped'`);
  }
}

function validateResources(hc: HostConfig, numCPU: number, warnings: string[]): void {
  // Old clients send -1 for "not set".
  if (hc.MemorySwappiness === -1) delete hc.MemorySwappiness;

  const memory = hc.Memory ?? 0;
  const swap = hc.MemorySwap ?? 0;
  const reservation = hc.MemoryReservation ?? 0;
  if (memory !== 0 && memory < MIN_MEMORY) throw bad('Minimum memory limit allowed is 6MB');
  if (memory > 0 && swap > 0 && swap < memory) throw bad('Minimum memoryswap limit should be larger than memory limit, see usage');
  if (memory === 0 && swap > 0) throw bad('You should always set the Memory limit when using Memoryswap limit, see usage');
  if (hc.MemorySwappiness !== undefined && (hc.MemorySwappiness < 0 || hc.MemorySwappiness > 100)) {
    throw bad(`Invalid value: ${hc.MemorySwappiness}, valid memory swappiness range is 0-100`);
  }
  if (reservation > 0 && reservation < MIN_MEMORY) throw bad('Minimum memory reservation allowed is 6MB');
  if (memory > 0 && reservation > 0 && memory < reservation) {
    throw bad('Minimum memory limit can not be less than memory reservation limit, see usage');
  }
  if (hc.OomKillDisable && memory === 0) {
    warnings.push(
      'OOM killer is disabled for the container, but no memory limit is set, this can result in the system running out of resources.',
    );
  }

  const nano = hc.NanoCpus ?? 0;
  if (nano > 0 && (hc.CpuPeriod ?? 0) > 0) throw bad('Conflicting options: Nano CPUs and CPU Period cannot both be set');
  if (nano > 0 && (hc.CpuQuota ?? 0) > 0) throw bad('Conflicting options: Nano CPUs and CPU Quota cannot both be set');
  if (nano < 0 || nano > numCPU * 1e9) {
    throw bad(`Range of CPUs is from 0.01 to ${numCPU}.00, as there are only ${numCPU} CPUs available`);
  }
  if ((hc.CpuShares ?? 0) < 0) throw bad(`Invalid CpuShares ${hc.CpuShares}: CPU shares cannot be negative`);
  const period = hc.CpuPeriod ?? 0;
  if (period !== 0 && (period < 1000 || period > 1000000)) {
    throw bad('CPU cfs period can not be less than 1ms (i.e. 1000) or larger than 1s (i.e. 1000000)');
  }
  const quota = hc.CpuQuota ?? 0;
  if (quota > 0 && quota < 1000) throw bad('CPU cfs quota can not be less than 1ms (i.e. 1000)');
  if ((hc.CpuPercent ?? 0) > 0) {
    warnings.push('linux does not support CPU percent. Percent discarded.');
    delete hc.CpuPercent;
  }

  if (hc.CpusetCpus) {
    const ids = parseIdList(hc.CpusetCpus, 'cpus');
    const missing = ids.filter((id) => id >= numCPU);
    if (missing.length > 0) {
      throw bad(`Requested CPUs are not available - requested ${hc.CpusetCpus}, available: ${numCPU === 1 ? '0' : `0-${numCPU - 1}`}`);
    }
  }
  if (hc.CpusetMems) parseIdList(hc.CpusetMems, 'mems');

  const weight = hc.BlkioWeight ?? 0;
  if (weight > 0 && (weight < 10 || weight > 1000)) throw bad('Range of blkio weight is from 10 to 1000');
  for (const d of hc.BlkioWeightDevice ?? []) {
    if (d.Weight !== undefined && d.Weight !== 0 && (d.Weight < 10 || d.Weight > 1000))
      throw bad('Range of blkio weight is from 10 to 1000');
  }
  if (hc.IOMaximumBandwidth || hc.IOMaximumIOps) {
    throw bad('Invalid QoS settings: linux does not support Maximum IO Bandwidth or Maximum IO IOps');
  }
  for (const list of [
    hc.BlkioWeightDevice,
    hc.BlkioDeviceReadBps,
    hc.BlkioDeviceWriteBps,
    hc.BlkioDeviceReadIOps,
    hc.BlkioDeviceWriteIOps,
  ]) {
    for (const d of list ?? []) {
      if (!d.Path?.startsWith('/')) throw bad(`invalid blkio device path ${JSON.stringify(d.Path ?? '')}: must be an absolute path`);
    }
  }
}

/** "0-3,5" → [0,1,2,3,5]; dockerd's wording on errors. */
export function parseIdList(spec: string, what: 'cpus' | 'mems'): number[] {
  const out: number[] = [];
  const invalid = () => bad(`Invalid value ${spec} for cpuset ${what}: invalid format: ${spec}`);
  for (const part of spec.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw invalid();
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo) throw invalid();
    for (let i = lo; i <= hi; i++) out.push(i);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Mounts

function mountError(type: string | undefined, msg: string): EngineError {
  return bad(`invalid mount config for type ${JSON.stringify(type ?? '')}: ${msg}`);
}

/** The target rules shared by Mounts, Binds and Tmpfs: absolute and not "/". */
function targetProblem(target: string): string | undefined {
  if (cleanPath(target) === '/') return "invalid specification: destination can't be '/'";
  if (!target.startsWith('/')) return `invalid mount path: '${target}' mount path must be absolute`;
  return undefined;
}

function validateTarget(target: string): void {
  const p = targetProblem(target);
  if (p) throw bad(p);
}

export function validateMount(m: MountSpec, bindSourceExists: (p: string) => boolean): void {
  const t = m.Type;
  if (!m.Target) throw mountError(t, 'field Target must not be empty');
  const tp = targetProblem(m.Target);
  if (tp) throw mountError(t, tp);
  const extra = (...fields: (keyof MountSpec)[]) => {
    for (const f of fields) if (m[f] !== undefined) throw mountError(t, `field ${f} must not be specified`);
  };
  switch (t) {
    case 'bind': {
      if (!m.Source) throw mountError(t, 'field Source must not be empty');
      const prop = m.BindOptions?.Propagation;
      if (prop && !(PROPAGATIONS as readonly string[]).includes(prop)) throw mountError(t, `invalid propagation mode: ${prop}`);
      extra('VolumeOptions', 'ImageOptions', 'TmpfsOptions');
      if (!m.Source.startsWith('/')) throw mountError(t, `invalid mount path: '${m.Source}' mount path must be absolute`);
      if (!m.BindOptions?.CreateMountpoint && !bindSourceExists(m.Source)) {
        throw mountError(t, `bind source path does not exist: ${m.Source}`);
      }
      return;
    }
    case 'volume': {
      extra('BindOptions', 'ImageOptions', 'TmpfsOptions');
      const sub = m.VolumeOptions?.Subpath;
      if (sub) {
        if (!m.Source) throw mountError(t, 'must not set Subpath when using anonymous volumes');
        if (!isLocalPath(sub)) throw mountError(t, 'subpath must be a relative path within the volume');
      }
      if (m.Source) validateVolumeName(m.Source);
      return;
    }
    case 'tmpfs':
      extra('BindOptions', 'VolumeOptions', 'ImageOptions');
      if (m.Source) throw mountError(t, 'field Source must not be specified');
      tmpfsMountOptions(m);
      return;
    case 'image':
    case 'npipe':
    case 'cluster':
      throw mountError(t, 'mount type not supported by this daemon');
    default:
      throw mountError(t, 'mount type unknown');
  }
}

/** filepath.IsLocal: relative, non-empty, and never climbing above its start. */
function isLocalPath(p: string): boolean {
  if (p === '' || p.startsWith('/')) return false;
  const n = posix.normalize(p);
  return n !== '..' && !n.startsWith('../');
}

function validateVolumeName(name: string): void {
  if (!LOCAL_VOLUME_NAME.test(name)) {
    throw bad(
      `create ${name}: ${JSON.stringify(name)} includes invalid characters for a local volume name, only "[a-zA-Z0-9][a-zA-Z0-9_.-]" are allowed. If you intended to pass a host directory, use absolute path`,
    );
  }
}

const RW_MODES = new Set(['rw', 'ro']);
const LABEL_MODES = new Set(['z', 'Z']);
const COPY_MODES = new Set(['nocopy']);
const CONSISTENCY_MODES = new Set(['consistent', 'cached', 'delegated']);

/** A Binds mode string ("ro,rshared,z"): known words, at most one of each kind. */
export function validMountMode(mode: string): boolean {
  if (mode === '') return true;
  const counts = [0, 0, 0, 0, 0];
  for (const o of mode.split(',')) {
    if (RW_MODES.has(o)) counts[0]!++;
    else if (LABEL_MODES.has(o)) counts[1]!++;
    else if ((PROPAGATIONS as readonly string[]).includes(o)) counts[2]!++;
    else if (COPY_MODES.has(o)) counts[3]!++;
    else if (CONSISTENCY_MODES.has(o)) counts[4]!++;
    else return false;
  }
  return counts.every((n) => n <= 1);
}

/**
 * A VolumesFrom entry `container[:mode]` as dockerd parses it: the mode may say ro/rw (and SELinux
 * labels) but neither a propagation nor nocopy. Returns the container reference and whether the
 * inherited mounts stay writable.
 */
export function parseVolumesFrom(spec: string): { ref: string; readWrite: boolean } {
  if (spec === '') throw bad('volumes-from specification cannot be an empty string');
  const i = spec.indexOf(':');
  const ref = i < 0 ? spec : spec.slice(0, i);
  const mode = i < 0 ? '' : spec.slice(i + 1);
  if (mode === '') return { ref, readWrite: true };
  const opts = mode.split(',');
  const propagation = opts.some((o) => (PROPAGATIONS as readonly string[]).includes(o));
  if (!validMountMode(mode) || propagation || opts.some((o) => COPY_MODES.has(o))) throw bad(`invalid mode: ${mode}`);
  return { ref, readWrite: !opts.includes('ro') };
}

export interface ParsedBind {
  source: string;
  destination: string;
  mode: string;
  type: 'bind' | 'volume';
  readOnly: boolean;
  propagation?: string;
}

/** Parses a Binds entry `src:dst[:mode]` (or `dst` for an anonymous volume) like dockerd. */
export function parseBind(raw: string): ParsedBind {
  const invalidSpec = `invalid volume specification: '${raw}'`;
  const parts = raw.split(':');
  const arr = parts.length > 4 ? [...parts.slice(0, 3), parts.slice(3).join(':')] : parts;
  if (arr[0] === '') throw bad(invalidSpec);
  let source = '';
  let destination: string;
  let mode = '';
  switch (arr.length) {
    case 1:
      destination = arr[0]!;
      break;
    case 2:
      if (validMountMode(arr[1]!)) throw bad(invalidSpec);
      source = arr[0]!;
      destination = arr[1]!;
      break;
    case 3:
      source = arr[0]!;
      destination = arr[1]!;
      mode = arr[2]!;
      break;
    default:
      throw bad(invalidSpec);
  }
  if (!validMountMode(mode)) throw bad(`invalid mode: ${mode}`);
  const type = source.startsWith('/') ? 'bind' : 'volume';
  const problem = targetProblem(destination);
  if (problem) throw bad(`${invalidSpec}: invalid mount config for type "${type}": ${problem}`);
  if (type === 'volume' && source !== '') validateVolumeName(source);
  const modes = mode === '' ? [] : mode.split(',');
  return {
    source: type === 'bind' ? cleanPath(source) : source,
    destination: cleanPath(destination),
    mode,
    type,
    readOnly: modes.includes('ro'),
    propagation: modes.find((o) => (PROPAGATIONS as readonly string[]).includes(o)),
  };
}

function validateBindsAndMountPoints(hc: HostConfig): void {
  const seen = new Set<string>();
  const claim = (dest: string) => {
    const d = cleanPath(dest);
    if (seen.has(d)) throw bad(`Duplicate mount point: ${d}`);
    seen.add(d);
  };
  for (const b of hc.Binds ?? []) claim(parseBind(b).destination);
  for (const m of hc.Mounts ?? []) claim(m.Target!);
  for (const t of Object.keys(hc.Tmpfs ?? {})) claim(t);
}

// ---------------------------------------------------------------------------------------------
// Networking

function validateExtraHost(entry: string): void {
  // "host:ip" or "host=ip"; IPv6 may be bracketed.
  let sep = entry.indexOf('=');
  if (sep < 0) sep = entry.indexOf(':');
  if (sep <= 0) throw bad(`bad format for add-host: ${JSON.stringify(entry)}`);
  let ip = entry.slice(sep + 1);
  if (ip.startsWith('[') && ip.endsWith(']')) ip = ip.slice(1, -1);
  if (ip !== 'host-gateway' && isIP(ip) === 0) throw bad(`invalid IP address in add-host: ${JSON.stringify(ip)}`);
}

function validatePortBindings(hc: HostConfig): void {
  for (const [key, bindings] of Object.entries(hc.PortBindings ?? {})) {
    const m = /^(\d+)(?:\/(tcp|udp|sctp))?$/i.exec(key);
    const port = m ? Number(m[1]) : 0;
    if (!m || port < 1 || port > 65535) throw bad(`invalid port specification: ${JSON.stringify(key)}`);
    for (const b of bindings ?? []) {
      const hp = b.HostPort ?? '';
      if (hp === '') continue;
      const r = /^(\d+)(?:-(\d+))?$/.exec(hp);
      const lo = r ? Number(r[1]) : -1;
      const hi = r?.[2] !== undefined ? Number(r[2]) : lo;
      if (!r || lo > 65535 || hi > 65535 || hi < lo) throw bad(`invalid port specification: ${JSON.stringify(hp)}`);
      if (b.HostIp && isIP(b.HostIp.replace(/^\[|\]$/g, '')) === 0) throw bad(`invalid host IP address: ${JSON.stringify(b.HostIp)}`);
    }
  }
}

function validateNetworkMode(hc: HostConfig, c: ContainerConfig): void {
  const mode = hc.NetworkMode ?? '';
  if (mode.startsWith('container:') || mode === 'container') {
    if (!containerRef(mode)) throw bad('Invalid network mode: invalid container format container:<name|id>');
    if (c.Hostname) throw bad('conflicting options: hostname and the network mode');
    if (hc.Links?.length)
      throw bad("conflicting options: container type network can't be used with links. This would result in undefined behavior");
    if (hc.Dns?.length) throw bad('conflicting options: dns and the network mode');
    if (hc.ExtraHosts?.length) throw bad('conflicting options: custom host-to-IP mapping and the network mode');
    if (c.MacAddress) throw bad('conflicting options: mac-address and the network mode');
    if (Object.keys(hc.PortBindings ?? {}).length > 0 || hc.PublishAllPorts) {
      throw bad('conflicting options: port publishing and the container type network mode');
    }
    if (Object.keys(c.ExposedPorts ?? {}).length > 0) throw bad('conflicting options: port exposing and the container type network mode');
  }
  if (mode === 'host') {
    if (hc.Links?.length)
      throw bad("conflicting options: host type networking can't be used with links. This would result in undefined behavior");
    if (c.MacAddress) throw bad('conflicting options: mac-address and the network mode');
  }
}

// ---------------------------------------------------------------------------------------------
// Devices and ulimits

function validateDevices(hc: HostConfig): void {
  for (const d of hc.Devices ?? []) {
    const host = d.PathOnHost ?? '';
    if (!host.startsWith('/')) throw bad(`invalid device mapping: PathOnHost ${JSON.stringify(host)} must be an absolute path`);
    if (d.PathInContainer && !d.PathInContainer.startsWith('/')) {
      throw bad(`invalid device mapping: PathInContainer ${JSON.stringify(d.PathInContainer)} must be an absolute path`);
    }
    const perms = d.CgroupPermissions ?? '';
    if (perms !== '' && (!/^[rwm]{1,3}$/.test(perms) || new Set(perms).size !== perms.length)) {
      throw bad(`invalid device mode: ${perms}`);
    }
  }
  for (const rule of hc.DeviceCgroupRules ?? []) parseDeviceCgroupRule(rule);
}

function validateUlimits(hc: HostConfig): void {
  const inf = (v: number) => (v < 0 ? Number.POSITIVE_INFINITY : v);
  for (const u of hc.Ulimits ?? []) {
    if (!u.Name || !(u.Name in ULIMIT_RESOURCES)) throw bad(`invalid ulimit type: ${u.Name ?? ''}`);
    const soft = u.Soft ?? 0;
    const hard = u.Hard ?? 0;
    if (inf(soft) > inf(hard)) throw bad(`ulimit soft limit must be less than or equal to hard limit: ${soft} > ${hard}`);
  }
}
