// Creating a container: the request verified (verify.ts), a name chosen or checked and reserved,
// volumes prepared, the writable layer made, the record stored, the networks told.
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { join } from 'node:path';
import { conflict, notFound } from '../../../errors.ts';
import { nowIso } from '../../../util/time.ts';
import type { ContainerServiceDeps } from '../deps.ts';
import type { ContainerRecords } from '../records.ts';
import { argv } from './create-config.ts';
import { generateName, normalizeName } from '../names.ts';
import { initialState, type ContainerRecord } from '../record.ts';
import type { ContainerVerifier, VerifiedCreate } from './verify.ts';
import { prepareRecordText, recordText } from '../record-text.ts';
import { formatPlatformSpec, hostPlatform, platformSatisfies, type PlatformSpec } from '../../../util/platform-spec.ts';
import { familiarIfCanonical } from '../../../util/image-reference.ts';

function imagePlatform(v: VerifiedCreate): PlatformSpec {
  const img = v.image.config as { os?: string; architecture?: string; variant?: string };
  return { os: img.os ?? '', architecture: img.architecture ?? '', ...(img.variant ? { variant: img.variant } : {}) };
}

/** dockerd's warning for an image of another platform than the host's when none was asked for. */
function hostPlatformWarning(v: VerifiedCreate): string | undefined {
  const have = imagePlatform(v);
  if (!have.architecture) return undefined; // an image without a platform in its config
  const host = hostPlatform();
  if (platformSatisfies(host, have)) return undefined;
  return `The requested image's platform (${formatPlatformSpec(have)}) does not match the detected host platform (${formatPlatformSpec(host)}) and no specific platform was requested`;
}

/**
 * A create that asks for a platform the image is not of: dockerd's 404 (its image service does not
 * have the image for that platform), with the image named in its familiar form.
 */
function checkImagePlatform(v: VerifiedCreate, want: PlatformSpec): void {
  const have = imagePlatform(v);
  if (platformSatisfies(want, have)) return;
  throw notFound(
    `image with reference ${familiarIfCanonical(v.request.Image!)} was found but its platform (${formatPlatformSpec(have)}) does not match the specified platform (${formatPlatformSpec(want)})`,
  );
}

export class ContainerCreator {
  constructor(
    private readonly records: Pick<ContainerRecords, 'byId' | 'event' | 'nameHolder' | 'reservedNames'>,
    private readonly d: Pick<
      ContainerServiceDeps,
      'config' | 'containersDir' | 'launcher' | 'log' | 'networks' | 'rootfs' | 'store' | 'volumes'
    >,
    private readonly verifier: ContainerVerifier,
  ) {}

  async create(body: unknown, name: string | undefined, platform?: PlatformSpec): Promise<{ Id: string; Warnings: string[] }> {
    const { records } = this;
    const id = randomBytes(32).toString('hex');
    const verified = await this.verifier.verifyCreate(body, id);
    if (platform) checkImagePlatform(verified, platform);
    else {
      const w = hostPlatformWarning(verified);
      if (w) verified.warnings.push(w);
    }
    // Through the name index, not a scan of every record (creating the 2 000th container).
    const taken = (n: string) => records.nameHolder(n) !== undefined;
    const fullName = name ? normalizeName(name) : generateName(taken);
    const holderId = records.nameHolder(fullName);
    if (holderId)
      throw conflict(
        `Conflict. The container name "${fullName}" is already in use by container "${holderId}". You have to remove (or rename) that container to be able to reuse that name.`,
      );
    // Reserved until the record is stored: concurrent creates must not pick the same name.
    records.reservedNames.set(fullName, id);
    try {
      return await this.createNamed(id, fullName, verified);
    } finally {
      records.reservedNames.delete(fullName);
    }
  }

  private async createNamed(id: string, fullName: string, v: VerifiedCreate): Promise<{ Id: string; Warnings: string[] }> {
    const { records, d } = this;
    const { config, hostConfig } = v;
    // Volumes first: they are created here (anonymous ones too), after every check passed. An
    // image volume at a destination VolumesFrom provides is not made (as dockerd).
    const inheritedAt = new Set(v.inherited.map((m) => m.Destination));
    const ownVolumes = inheritedAt.size
      ? { ...config, Volumes: Object.fromEntries(Object.entries(config.Volumes ?? {}).filter(([dst]) => !inheritedAt.has(dst))) }
      : config;
    const volumeMounts = d.volumes ? await d.volumes.prepare(id, hostConfig, ownVolumes) : [];
    const args = argv(config);
    const dir = join(d.containersDir, id);
    const rec: ContainerRecord = {
      Id: id,
      Name: fullName,
      Created: nowIso(),
      Path: args[0] ?? '',
      Args: args.slice(1),
      State: initialState(),
      Image: v.image.id,
      ImageRef: v.request.Image!,
      ResolvConfPath: join(dir, 'resolv.conf'),
      HostnamePath: join(dir, 'hostname'),
      HostsPath: join(dir, 'hosts'),
      LogPath: hostConfig.LogConfig!.Type === 'json-file' ? join(dir, `${id}-json.log`) : '',
      RestartCount: 0,
      Driver: d.config()['storage-driver'],
      Platform: 'linux',
      MountLabel: '',
      ProcessLabel: '',
      AppArmorProfile: '',
      Config: config,
      HostConfig: hostConfig,
      Mounts: [...v.inherited, ...v.mounts, ...volumeMounts],
      Internal: {
        snapshotKey: id,
        snapshotter: d.rootfs.snapshotter,
        runtime: hostConfig.Runtime!,
        stoppedByUser: false,
        ...(inheritedAt.size ? { inheritedMounts: [...inheritedAt] } : {}),
        chainId: v.image.chainId,
        layerPending: true,
      },
    };
    try {
      await mkdir(dir, { recursive: true, mode: 0o710 });
      // The writable layer is made at first use (fs/writable-layer.ts); its options are checked now.
      d.rootfs.checkStorageOpt(hostConfig.StorageOpt ?? {});
      await prepareRecordText(rec); // a large Config serialised in slices, once
      d.store.put(rec, recordText(rec)); // throws the 409 if a concurrent create took the name
    } catch (err) {
      // Undoing a failed create: its error is the one reported; what cannot be undone is logged.
      await d.rootfs.remove(id).catch((e) => d.log.debug(`undoing a create: writable layer: ${(e as Error).message}`, { id }));
      await rm(dir, { recursive: true, force: true });
      await d.volumes?.release(rec, true).catch((e) => d.log.debug(`undoing a create: volumes: ${(e as Error).message}`, { id }));
      throw err;
    }
    records.byId.set(id, rec);
    d.launcher.created(id);
    d.networks?.containerCreated(id, hostConfig, config, v.request.NetworkingConfig);
    // Storing a large record and the event's copy of its labels are each a long synchronous pass:
    // other requests get a turn between them.
    await nextTurn();
    records.event(rec, 'create');
    d.log.debug('container created', { id, name: fullName });
    return { Id: id, Warnings: v.warnings };
  }
}
