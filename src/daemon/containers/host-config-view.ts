// Inspect's HostConfig as dockerd writes it: its Go struct marshalled, so every field is present in
// the struct's order with its zero value when unset — null for a list, map or pointer the request
// left out, [] only when it was sent empty (MaskedPaths [] masks nothing, null means the defaults),
// "" and 0 for strings and numbers — and the `omitempty` fields (Annotations, StorageOpt, Tmpfs,
// Sysctls, Runtime, KernelMemory, KernelMemoryTCP, Mounts, Init) only when set. The stored record
// keeps [] and absent apart; this only fills the rest in. Fields the record holds beyond the struct
// (none expected) follow as they are.
import type { HostConfig } from '../../types/container-api.ts';
import type { HostConfigView } from '../../types/container-views.ts';
import type { GoJson } from '../../types/go-nil.ts';

type Zero = null | '' | 0 | false | 'omit' | (() => unknown);

/** Field → zero value ('omit': omitempty, left out when unset), in the order of dockerd's struct. */
const FIELDS: ReadonlyArray<readonly [keyof HostConfig | 'KernelMemory', Zero]> = [
  ['Binds', null],
  ['ContainerIDFile', ''],
  ['LogConfig', () => ({ Type: '', Config: null })],
  ['NetworkMode', ''],
  ['PortBindings', null],
  ['RestartPolicy', () => ({ Name: '', MaximumRetryCount: 0 })],
  ['AutoRemove', false],
  ['VolumeDriver', ''],
  ['VolumesFrom', null],
  ['ConsoleSize', () => [0, 0]],
  ['Annotations', 'omit'],
  ['CapAdd', null],
  ['CapDrop', null],
  ['CgroupnsMode', ''],
  ['Dns', null],
  ['DnsOptions', null],
  ['DnsSearch', null],
  ['ExtraHosts', null],
  ['GroupAdd', null],
  ['IpcMode', ''],
  ['Cgroup', ''],
  ['Links', null],
  ['OomScoreAdj', 0],
  ['PidMode', ''],
  ['Privileged', false],
  ['PublishAllPorts', false],
  ['ReadonlyRootfs', false],
  ['SecurityOpt', null],
  ['StorageOpt', 'omit'],
  ['Tmpfs', 'omit'],
  ['UTSMode', ''],
  ['UsernsMode', ''],
  ['ShmSize', 0],
  ['Sysctls', 'omit'],
  ['Runtime', 'omit'],
  ['Isolation', ''],
  // Resources (embedded)
  ['CpuShares', 0],
  ['Memory', 0],
  ['NanoCpus', 0],
  ['CgroupParent', ''],
  ['BlkioWeight', 0],
  ['BlkioWeightDevice', null],
  ['BlkioDeviceReadBps', null],
  ['BlkioDeviceWriteBps', null],
  ['BlkioDeviceReadIOps', null],
  ['BlkioDeviceWriteIOps', null],
  ['CpuPeriod', 0],
  ['CpuQuota', 0],
  ['CpuRealtimePeriod', 0],
  ['CpuRealtimeRuntime', 0],
  ['CpusetCpus', ''],
  ['CpusetMems', ''],
  ['Devices', null],
  ['DeviceCgroupRules', null],
  ['DeviceRequests', null],
  ['KernelMemory', 'omit'],
  ['KernelMemoryTCP', 'omit'],
  ['MemoryReservation', 0],
  ['MemorySwap', 0],
  ['MemorySwappiness', null],
  ['OomKillDisable', null],
  ['PidsLimit', null],
  ['Ulimits', null],
  ['CpuCount', 0],
  ['CpuPercent', 0],
  ['IOMaximumIOps', 0],
  ['IOMaximumBandwidth', 0],
  // HostConfig again
  ['Mounts', 'omit'],
  ['MaskedPaths', null],
  ['ReadonlyPaths', null],
  ['Init', 'omit'],
];

const KNOWN = new Set<string>(FIELDS.map(([k]) => k));

/** Whether Go's omitempty drops this value: false, 0, "", nil, or an empty slice or map. */
function emptyForGo(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v).length === 0;
}

/** The record's HostConfig (with the Links inspect shows, null when none) as inspect writes it. */
export function hostConfigView(hc: GoJson<HostConfig>): HostConfigView {
  const src = hc as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, zero] of FIELDS) {
    const v = src[key];
    if (zero === 'omit') {
      // Init is a *bool: omitempty drops only nil, so an explicit false is shown.
      if (key === 'Init' ? v !== undefined && v !== null : !emptyForGo(v)) out[key] = v;
      continue;
    }
    out[key] = v !== undefined ? v : typeof zero === 'function' ? zero() : zero;
  }
  for (const [k, v] of Object.entries(src)) if (!KNOWN.has(k) && v !== undefined) out[k] = v;
  // Every value came from hc (its own type) or is its field's zero value.
  return out as HostConfigView;
}
