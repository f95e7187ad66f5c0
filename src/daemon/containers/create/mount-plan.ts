// The host-path binds, bind mounts and tmpfs mounts of a HostConfig, as the OCI spec wants them
// (resolveMounts: checked at create, used again at each start) and as inspect's Mounts lists them.
// Named and anonymous volumes are the volume service's (src/daemon/volumes) when it is present.
import { isAbsolute } from 'node:path';
import { invalidParameter } from '../../../errors.ts';
import { tmpfsFromMap, tmpfsMountOptions, type ResolvedMount } from '../../../oci/mounts.ts';
import type { HostConfig } from '../../../types/container-api.ts';
import { parseVolumesFrom } from '../../../oci/validate-create.ts';
import { isVolumeBind } from '../../volumes/specs.ts';
import type { MountPoint } from '../record.ts';

/** withVolumes: a volume service handles named/anonymous volumes (otherwise they are refused). */
export function resolveMounts(hc: HostConfig, withVolumes: boolean): ResolvedMount[] {
  const out: ResolvedMount[] = [];
  for (const bind of hc.Binds ?? []) {
    if (withVolumes && isVolumeBind(bind)) continue; // a named or anonymous volume
    const parts = bind.split(':');
    if (parts.length < 2 || parts.length > 3) throw invalidParameter(`invalid volume specification: '${bind}'`);
    const [src, dst, mode = ''] = parts as [string, string, string?];
    if (!isAbsolute(src))
      throw invalidParameter(`invalid volume specification: '${bind}': named volumes are not built yet (interactive and data APIs issue)`);
    if (!isAbsolute(dst)) throw invalidParameter(`invalid volume specification: '${bind}': mount path must be absolute`);
    const opts = mode ? mode.split(',').filter((o) => o !== 'z' && o !== 'Z' && o !== 'nocopy') : [];
    out.push({ type: 'bind', source: src, destination: dst, options: opts.length ? opts : ['rw'] });
  }
  for (const m of hc.Mounts ?? []) {
    if (m.Type === 'bind') {
      if (!m.Source || !isAbsolute(m.Source))
        throw invalidParameter(`invalid mount config for type "bind": invalid mount path: '${m.Source ?? ''}' mount path must be absolute`);
      out.push({
        type: 'bind',
        source: m.Source,
        destination: m.Target!,
        options: [m.ReadOnly ? 'ro' : 'rw', ...(m.BindOptions?.Propagation ? [m.BindOptions.Propagation] : [])],
      });
    } else if (m.Type === 'tmpfs') {
      out.push({ type: 'tmpfs', source: 'tmpfs', destination: m.Target!, options: tmpfsMountOptions(m) });
    } else if (m.Type === 'volume' && withVolumes) {
      continue; // the volume service's
    } else {
      throw invalidParameter(`mount type "${m.Type}" is not built yet`);
    }
  }
  for (const [dst, opts] of Object.entries(hc.Tmpfs ?? {})) {
    const t = tmpfsFromMap(dst, opts);
    out.push({ type: 'tmpfs', source: 'tmpfs', destination: t.destination, options: t.options ?? [] });
  }
  return out;
}

/** The Mounts list inspect shows for binds and mounts (volumes: the volume service's). */
export function mountPoints(hc: HostConfig, withVolumes: boolean): MountPoint[] {
  // As in dockerd: HostConfig.Tmpfs mounts are not listed, and a bind's Mode is the mode text
  // it was given ("" when none). Host-path binds come first in resolveMounts' order.
  const binds = (hc.Binds ?? []).filter((b) => !isVolumeBind(b));
  return resolveMounts({ ...hc, Tmpfs: {} }, withVolumes).map((m, i) => ({
    Type: m.type,
    Source: m.type === 'bind' ? m.source : '',
    Destination: m.destination,
    Mode: i < binds.length ? (binds[i]!.split(':')[2] ?? '') : '',
    RW: !m.options.includes('ro'),
    Propagation: m.options.find((o) => /^r?(private|shared|slave)$/.test(o)) ?? (m.type === 'bind' ? 'rprivate' : ''),
  }));
}

/**
 * The mount points a create inherits through VolumesFrom (dockerd's registerMountPoints): each
 * named container's mounts, read-only where the entry says `ro`, a later container's replacing an
 * earlier one's at the same destination; the container's own mounts (`own`) win over them all.
 */
export function inheritedMountPoints(
  volumesFrom: readonly string[],
  find: (ref: string) => { Mounts: MountPoint[] },
  own: ReadonlyArray<Pick<MountPoint, 'Destination'>>,
): MountPoint[] {
  const byDestination = new Map<string, MountPoint>();
  for (const entry of volumesFrom) {
    const { ref, readWrite } = parseVolumesFrom(entry);
    let donor: { Mounts: MountPoint[] };
    try {
      donor = find(ref);
    } catch (err) {
      // dockerd answers a missing donor with a 400, not the lookup's 404.
      throw invalidParameter((err as Error).message);
    }
    for (const m of donor.Mounts) {
      byDestination.set(m.Destination, { ...m, Mode: '', RW: m.RW && readWrite });
    }
  }
  const taken = new Set(own.map((m) => m.Destination));
  return [...byDestination.values()].filter((m) => !taken.has(m.Destination));
}

/** The bind mounts of a run that came through VolumesFrom (what resolveMounts does not make). */
export function inheritedBinds(mounts: readonly MountPoint[], resolved: readonly ResolvedMount[]): ResolvedMount[] {
  const made = new Set(resolved.map((m) => m.destination));
  return mounts
    .filter((m) => m.Type === 'bind' && !made.has(m.Destination))
    .map((m) => ({
      type: 'bind' as const,
      source: m.Source,
      destination: m.Destination,
      options: [m.RW ? 'rw' : 'ro', ...(m.Propagation ? [m.Propagation] : [])],
    }));
}
