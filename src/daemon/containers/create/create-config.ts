// Turning a create request plus its image into the container's effective Config and HostConfig,
// the way dockerd merges them (image defaults under the request's values).
import { setImmediate as nextTurn } from 'node:timers/promises';
import { invalidParameter } from '../../../errors.ts';
import type { OciImageConfig } from '../../../images/image-store.ts';
import type { ContainerConfig, HostConfig } from '../../../types/container-api.ts';

function envKey(e: string): string {
  const i = e.indexOf('=');
  return i < 0 ? e : e.slice(0, i);
}

/**
 * Config.Env as dockerd merges it: the request's entries as sent (a bare `NAME`, the CLI's `-e NAME`
 * for a variable the client does not have, included), then the image's entries whose name the
 * request does not set. The process environment is made from it later (oci/spec.ts), where a bare
 * name unsets the variable and a later entry wins. Linear: an Env of 100 000 entries must not hold
 * the event loop.
 */
export function mergeEnv(image: string[] = [], request: string[] = []): string[] {
  const merge = mergeEnvSteps(image, request);
  for (;;) {
    const r = merge.next();
    if (r.done) return r.value;
  }
}

/**
 * mergeEnv in slices: other requests get a turn every ~10 ms (an Env of 131 072 entries took
 * 60 ms in one piece on a loaded machine).
 */
export async function mergeEnvInSlices(image: string[] = [], request: string[] = []): Promise<string[]> {
  const merge = mergeEnvSteps(image, request);
  let sliceStart = performance.now();
  for (;;) {
    const r = merge.next();
    if (r.done) return r.value;
    if (performance.now() - sliceStart > 10) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
}

/** The merge, pausing every 4 096 request entries. */
function* mergeEnvSteps(image: string[], request: string[]): Generator<void, string[]> {
  if (request.length === 0) return [...image];
  const names = new Set<string>();
  let n = 0;
  for (const e of request) {
    if (++n % 4096 === 0) yield;
    names.add(envKey(e));
  }
  return [...request, ...image.filter((e) => !names.has(envKey(e)))];
}

/** `env`: the merged Env when the caller merged it already (mergeEnvInSlices). */
export function mergeConfig(req: ContainerConfig, image: ImageConfigPart, id: string, env?: string[]): ContainerConfig {
  const ic = image.config ?? {};
  // The create body carries HostConfig and NetworkingConfig beside the Config fields; they are not part of Config.
  const {
    HostConfig: _hc,
    NetworkingConfig: _nc,
    ...configFields
  } = req as ContainerConfig & { HostConfig?: unknown; NetworkingConfig?: unknown };
  const cfg: ContainerConfig = { ...configFields };
  cfg.Hostname = req.Hostname || id.slice(0, 12);
  cfg.Domainname = req.Domainname ?? '';
  cfg.User = req.User || ic.User || '';
  cfg.Env = env ?? mergeEnv(ic.Env ?? [], req.Env ?? []);
  // dockerd's merge: an entrypoint of the request's own replaces the image's entrypoint and Cmd;
  // without one (unset or []) the image's Cmd fills an empty Cmd, and only an unset (null) one
  // takes the image's entrypoint ([] keeps none). Then [""] (the CLI's `--entrypoint ""`) is reset
  // to unset.
  if (req.Entrypoint?.length) {
    cfg.Entrypoint = req.Entrypoint;
    cfg.Cmd = req.Cmd ?? [];
  } else {
    cfg.Entrypoint = req.Entrypoint ?? ic.Entrypoint ?? undefined;
    cfg.Cmd = req.Cmd && req.Cmd.length ? req.Cmd : (ic.Cmd ?? []);
  }
  if (cfg.Entrypoint?.length === 1 && cfg.Entrypoint[0] === '') delete cfg.Entrypoint;
  cfg.WorkingDir = req.WorkingDir || ic.WorkingDir || '';
  // Without image labels the request's own (freshly parsed) object is taken, not copied: a copy of
  // a hostile 200 000-label object holds the event loop for hundreds of milliseconds.
  cfg.Labels = ic.Labels && Object.keys(ic.Labels).length ? { ...ic.Labels, ...(req.Labels ?? {}) } : (req.Labels ?? {});
  cfg.ExposedPorts = { ...(ic.ExposedPorts ?? {}), ...(req.ExposedPorts ?? {}) } as ContainerConfig['ExposedPorts'];
  cfg.Volumes = { ...(ic.Volumes ?? {}), ...(req.Volumes ?? {}) } as ContainerConfig['Volumes'];
  if (!req.StopSignal && ic.StopSignal) cfg.StopSignal = ic.StopSignal;
  if (ic.Healthcheck) cfg.Healthcheck = mergeHealthcheck(req.Healthcheck, ic.Healthcheck as NonNullable<ContainerConfig['Healthcheck']>);
  cfg.Tty = req.Tty === true;
  cfg.OpenStdin = req.OpenStdin === true;
  cfg.StdinOnce = req.StdinOnce === true;
  cfg.AttachStdin = req.AttachStdin === true;
  cfg.AttachStdout = req.AttachStdout !== false;
  cfg.AttachStderr = req.AttachStderr !== false;
  // dockerd writes these two as null when unset (no omitempty on them).
  cfg.Entrypoint ??= null as unknown as string[];
  cfg.OnBuild ??= null as unknown as string[];
  if (!cfg.Entrypoint?.length && !cfg.Cmd?.length) throw invalidParameter('no command specified');
  return cfg;
}

/**
 * As dockerd's merge: the image's healthcheck fills in what the request leaves empty, field by
 * field (`--health-interval` alone keeps the image's test).
 */
function mergeHealthcheck(
  req: ContainerConfig['Healthcheck'] | undefined,
  img: NonNullable<ContainerConfig['Healthcheck']>,
): ContainerConfig['Healthcheck'] {
  if (!req) return img;
  const out = { ...req };
  if (!out.Test?.length && img.Test) out.Test = img.Test;
  for (const k of ['Interval', 'Timeout', 'StartPeriod', 'StartInterval', 'Retries'] as const) {
    if (!out[k] && img[k]) out[k] = img[k];
  }
  return out;
}

export type ImageConfigPart = Pick<OciImageConfig, 'config'>;

export function argv(cfg: ContainerConfig): string[] {
  return [...(cfg.Entrypoint ?? []), ...(cfg.Cmd ?? [])];
}

export interface HostDefaults {
  logDriver: string;
  logOpts: Record<string, string>;
  runtime: string;
  shmSize: number;
  cgroupnsMode: 'host' | 'private';
  ipcMode: 'shareable' | 'private';
  /** The default masked and read-only paths, stored for an unprivileged container that sets none. */
  maskedPaths: readonly string[];
  readonlyPaths: readonly string[];
  /** The host can disable the OOM killer (cgroup v1): an unset OomKillDisable is stored as false. */
  oomKillDisable: boolean;
}

export function withHostDefaults(hc: HostConfig | undefined, d: HostDefaults): HostConfig {
  const out: HostConfig = { ...(hc ?? {}) };
  if (!out.NetworkMode || out.NetworkMode === 'default') out.NetworkMode = 'bridge';
  if (!out.LogConfig?.Type) out.LogConfig = { Type: d.logDriver, Config: { ...d.logOpts, ...(out.LogConfig?.Config ?? {}) } };
  else out.LogConfig = { Type: out.LogConfig.Type, Config: out.LogConfig.Config ?? {} };
  out.RestartPolicy = { Name: out.RestartPolicy?.Name || 'no', MaximumRetryCount: out.RestartPolicy?.MaximumRetryCount ?? 0 };
  out.Runtime = out.Runtime || d.runtime;
  out.ShmSize = out.ShmSize || d.shmSize;
  out.CgroupnsMode = out.CgroupnsMode || d.cgroupnsMode;
  out.IpcMode = out.IpcMode || d.ipcMode;
  out.Binds ??= null as unknown as string[];
  out.AutoRemove = out.AutoRemove === true;
  out.Privileged = out.Privileged === true;
  out.ReadonlyRootfs = out.ReadonlyRootfs === true;
  // As dockerd's create: unset (null) paths become the defaults, but only for an unprivileged
  // container; an empty list is kept and masks nothing.
  if (!out.Privileged) {
    out.MaskedPaths ??= [...d.maskedPaths];
    out.ReadonlyPaths ??= [...d.readonlyPaths];
  }
  // dockerd's adaptContainerSettings: swap defaults to twice the memory limit, OomKillDisable to false.
  if ((out.Memory ?? 0) > 0 && !out.MemorySwap) out.MemorySwap = out.Memory! * 2;
  if (d.oomKillDisable) out.OomKillDisable ??= false;
  // dockerd's create route: 0 or -1 (unlimited, as the docker CLI sends by default) is stored as unset.
  if (out.PidsLimit !== undefined && out.PidsLimit <= 0) delete out.PidsLimit;
  return out;
}
