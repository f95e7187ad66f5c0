// Which volumes a container asks for: named and anonymous volumes from HostConfig.Binds
// ("name:/path[:mode]", "/path"), HostConfig.Mounts of type volume, and the image's VOLUMEs
// (Config.Volumes, merged with the request's) that no other mount covers. Host-path binds, bind
// and tmpfs mounts are the task launcher's; they only take part in the duplicate check here.
import { isAbsolute } from 'node:path';
import { invalidParameter } from '../../errors.ts';
import { cleanPath } from '../../oci/mounts.ts';
import type { ContainerConfig, HostConfig } from '../../types/container-api.ts';

export interface VolumeSpec {
  /** The name the user gave; undefined for an anonymous volume (a fresh one per container). */
  name?: string;
  destination: string;
  readOnly: boolean;
  /** Copy the image's content at the destination into the volume when it is empty (not nocopy). */
  copy: boolean;
  /** Mode as inspect shows it ("z" for a -v volume without one, as dockerd). */
  mode: string;
  /** A directory inside the volume to mount instead of its root (Mounts[].VolumeOptions.Subpath). */
  subpath?: string;
  /** Applied only when the mount creates the volume. */
  labels?: Record<string, string>;
  driver?: string;
  driverOpts?: Record<string, string>;
  origin: 'bind' | 'mount' | 'image';
}

const MODE_WORDS = new Set(['ro', 'rw', 'nocopy', 'z', 'Z', 'private', 'rprivate', 'shared', 'rshared', 'slave', 'rslave']);

/** A Binds entry that names a volume ("name:/dst[:mode]") or asks for an anonymous one ("/dst"). */
export function isVolumeBind(bind: string): boolean {
  const parts = bind.split(':');
  if (parts.length === 1) return parts[0] !== '';
  return (parts.length === 2 || parts.length === 3) && parts[0] !== '' && !isAbsolute(parts[0]!);
}

function mountPath(raw: string, spec: string): string {
  if (!raw || !isAbsolute(raw))
    throw invalidParameter(
      `invalid volume specification: '${spec}': invalid mount config for type "volume": invalid mount path: '${raw}' mount path must be absolute`,
    );
  const dst = cleanPath(raw);
  if (dst === '/')
    throw invalidParameter(`invalid volume specification: '${spec}': invalid mount config for type "volume": destination can't be '/'`);
  return dst;
}

/** The volume mounts of a container, in the order Binds, Mounts, image VOLUMEs. */
export function volumeSpecs(hc: HostConfig, config: Pick<ContainerConfig, 'Volumes'>): VolumeSpec[] {
  const specs: VolumeSpec[] = [];
  const taken = new Set<string>();
  const claim = (dst: string) => {
    if (taken.has(dst)) throw invalidParameter(`Duplicate mount point: ${dst}`);
    taken.add(dst);
  };
  for (const bind of hc.Binds ?? []) {
    const parts = bind.split(':');
    if (!isVolumeBind(bind)) {
      if (parts.length >= 2 && isAbsolute(parts[1]!)) claim(cleanPath(parts[1]!));
      continue;
    }
    const [src, dstRaw, mode] = parts.length === 1 ? [undefined, parts[0]!, ''] : [parts[0]!, parts[1]!, parts[2] ?? ''];
    const destination = mountPath(dstRaw, bind);
    const words = mode ? mode.split(',') : [];
    for (const w of words) if (!MODE_WORDS.has(w)) throw invalidParameter(`invalid mode: ${mode}`);
    if (words.includes('ro') && words.includes('rw')) throw invalidParameter(`invalid mode: ${mode}`);
    claim(destination);
    specs.push({
      ...(src ? { name: src } : {}),
      destination,
      readOnly: words.includes('ro'),
      copy: !words.includes('nocopy'),
      mode: src ? mode || 'z' : mode,
      origin: 'bind',
    });
  }
  for (const m of hc.Mounts ?? []) {
    if (m.Type !== 'volume') {
      if (m.Target && isAbsolute(m.Target)) claim(cleanPath(m.Target));
      continue;
    }
    const what = 'invalid mount config for type "volume"';
    if (!m.Target) throw invalidParameter(`${what}: field Target must not be empty`);
    if (!isAbsolute(m.Target)) throw invalidParameter(`${what}: invalid mount path: '${m.Target}' mount path must be absolute`);
    if (m.BindOptions) throw invalidParameter(`${what}: BindOptions must not be specified`);
    if (m.TmpfsOptions) throw invalidParameter(`${what}: TmpfsOptions must not be specified`);
    const destination = cleanPath(m.Target);
    if (destination === '/') throw invalidParameter(`${what}: destination can't be '/'`);
    const vo = m.VolumeOptions ?? {};
    const subpath = vo.Subpath ? checkSubpath(vo.Subpath) : undefined;
    if (subpath !== undefined && !m.Source) throw invalidParameter(`${what}: cannot use a subpath with an anonymous volume`);
    claim(destination);
    specs.push({
      ...(m.Source ? { name: m.Source } : {}),
      destination,
      readOnly: m.ReadOnly === true,
      copy: vo.NoCopy !== true,
      mode: '',
      ...(subpath ? { subpath } : {}),
      ...(vo.Labels && Object.keys(vo.Labels).length ? { labels: { ...vo.Labels } } : {}),
      ...(vo.DriverConfig?.Name ? { driver: vo.DriverConfig.Name } : {}),
      ...(vo.DriverConfig?.Options && Object.keys(vo.DriverConfig.Options).length ? { driverOpts: { ...vo.DriverConfig.Options } } : {}),
      origin: 'mount',
    });
  }
  for (const dst of Object.keys(hc.Tmpfs ?? {})) if (isAbsolute(dst)) claim(cleanPath(dst));
  for (const raw of Object.keys(config.Volumes ?? {})) {
    const destination = mountPath(raw, raw);
    if (taken.has(destination)) continue; // a mount of the user's replaces the image's volume
    taken.add(destination);
    specs.push({ destination, readOnly: false, copy: true, mode: '', origin: 'image' });
  }
  return specs;
}

/** A relative path inside the volume, without ".." (it must not leave the volume). */
function checkSubpath(p: string): string {
  const parts = p.split('/').filter((x) => x !== '' && x !== '.');
  if (p.startsWith('/') || parts.includes('..'))
    throw invalidParameter(
      `invalid mount config for type "volume": subpath must be a relative path within the volume: ${JSON.stringify(p)}`,
    );
  return parts.join('/');
}
