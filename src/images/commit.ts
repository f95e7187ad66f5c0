// `docker commit`: the container's writable layer, diffed against the layer it sits on (the image's
// init layer, so runtime mount points stay out), becomes one new uncompressed layer on top of the
// image's (uncompressed, as dockerd's commit; on overlayfs read straight from the upper directory,
// on other snapshotters from a metadata comparison of the two trees, see commit-fast.ts, else by
// containerd's diff service); config = container config + request body
// + changes (under --userns-remap with the owners mapped back to the container's ids). The new layer
// is unpacked right away so the image runs at once. Pausing (the default) freezes the processes
// only for the diff.
import { nowIso } from '../util/time.ts';
import { randomBytes } from 'node:crypto';
import { conflict, notFound } from '../errors.ts';
import type { ContainerConfig } from '../types/container-api.ts';
import { applyChanges, type RuntimeConfig } from './changes.ts';
import { readOnlyMounts } from '../supervisor/mounts.ts';
import type { ContainerFacts } from './container-facts.ts';
import type { ImageDeps } from './import.ts';
import { targetReference } from './import.ts';
import type { OciImageConfig } from './image-store.ts';
import {
  ensureReachable,
  LABEL,
  MT,
  setName,
  sha256Off,
  unpackLayers,
  writeConfig,
  writeManifest,
  type WriteContext,
} from './image-write.ts';
import { referenceString } from '../util/image-reference.ts';
import type { SupervisorClient } from '../supervisor/client.ts';
import type { Descriptor } from '../supervisor/types.ts';
import type { CommitOptions } from '../types/images.ts';
import type { Logger } from '../util/log.ts';
import { commitFromUpper, layerFromTrees, type FastCommit } from './commit-fast.ts';
import { shiftTarOwners, type OwnerMap } from './tar-owner-shift.ts';
import { stringifyJsonSliced } from '../util/json-sliced.ts';

/** `o` when it has a key: stops at the first one (Object.keys of 50 000 labels is a long array). */
const nonEmpty = <T extends object>(o: T | undefined | null): T | undefined => {
  for (const _k in o) return o!;
  return undefined;
};

/** `over` on top of `base`; the one that is empty is not copied (50 000 labels took ~80 ms to spread). */
function overlay<T extends object>(base: T | undefined | null, over: T | undefined | null): T | undefined {
  if (!nonEmpty(over)) return nonEmpty(base);
  if (!nonEmpty(base)) return over!;
  return { ...base, ...over } as T;
}

function envKey(e: string): string {
  const i = e.indexOf('=');
  return i < 0 ? e : e.slice(0, i);
}

/** The runtime config to store: the body's fields over the container's, as dockerd merges them. */
export function commitRuntimeConfig(container: ContainerConfig, body: ContainerConfig | null | undefined): RuntimeConfig {
  const user = body ?? {};
  // A body entry replaces the container's entry of the same name (the first one) or is appended;
  // found through a map, so an Env of 131 072 entries against another is linear, not quadratic.
  // Without a body Env (the usual commit) the container's is kept as it is: indexing 131 072
  // entries for nothing held the event loop ~30 ms.
  const env = (container.Env ?? []).slice();
  const index = new Map<string, number>();
  if (user.Env?.length) for (let i = env.length - 1; i >= 0; i--) index.set(envKey(env[i]!), i);
  for (const e of user.Env ?? []) {
    const key = envKey(e);
    const i = index.get(key);
    if (i !== undefined) env[i] = e;
    else index.set(key, env.push(e) - 1);
  }
  const useUserCmd = !!(user.Cmd?.length || user.Entrypoint?.length);
  const cfg: RuntimeConfig = {
    User: user.User || container.User || '',
    Env: env,
    Cmd: useUserCmd ? (user.Cmd ?? null) : (container.Cmd ?? null),
    Entrypoint: useUserCmd ? (user.Entrypoint ?? null) : (container.Entrypoint ?? null),
    WorkingDir: user.WorkingDir || container.WorkingDir || '',
  };
  const labels = overlay(container.Labels, user.Labels);
  const ports = overlay(container.ExposedPorts, user.ExposedPorts);
  const volumes = overlay(container.Volumes, user.Volumes);
  if (labels) cfg.Labels = labels;
  if (ports) cfg.ExposedPorts = ports;
  if (volumes) cfg.Volumes = volumes;
  const stop = user.StopSignal || container.StopSignal;
  if (stop) cfg.StopSignal = stop;
  const hc = user.Healthcheck ?? container.Healthcheck;
  if (hc) cfg.Healthcheck = hc as Record<string, unknown>;
  const onBuild = user.OnBuild?.length ? user.OnBuild : container.OnBuild;
  if (onBuild?.length) cfg.OnBuild = onBuild;
  const shell = user.Shell?.length ? user.Shell : container.Shell;
  if (shell?.length) cfg.Shell = shell;
  if (!cfg.Entrypoint) delete cfg.Entrypoint;
  return cfg;
}

/**
 * The changes of a container's writable layer as one uncompressed layer blob: the layer it sits on
 * (its image's init layer, so runtime mount points stay out) is the left side of the diff.
 */
export async function diffContainerLayer(
  client: SupervisorClient,
  snapshotKey: string,
  snapshotter: string,
  lease: string,
  containerId: string,
): Promise<Descriptor> {
  const info = await client.snapshots.stat(snapshotKey, { snapshotter }).catch(() => {
    throw notFound(`the filesystem of container ${containerId} is missing`);
  });
  const viewKey = `commit-view-${randomBytes(6).toString('hex')}`;
  const lower = await client.snapshots.view({ key: viewKey, parent: info.parent, snapshotter }, { lease });
  try {
    const upper = readOnlyMounts(await client.snapshots.mounts(snapshotKey, { snapshotter }));
    return await client.diff.diff(
      { left: lower, right: upper, media_type: MT.ociLayer, ref: `commit-${containerId.slice(0, 12)}-${viewKey.slice(12)}` },
      { lease },
    );
  } finally {
    await client.snapshots.remove(viewKey, { snapshotter, lease }).catch(() => undefined); // NotFound (already gone) or containerd unavailable: the view holds no data of its own, and the commit's lease takes it.
  }
}

/** The layer blob again with its owners mapped back from the remapped range. */
async function unmapLayer(client: SupervisorClient, lease: string, layer: Descriptor, map: OwnerMap, id: string): Promise<Descriptor> {
  const ref = `commit-unmapped-${id.slice(0, 12)}-${randomBytes(6).toString('hex')}`;
  const written = await client.contentWrite(ref, shiftTarOwners(client.contentRead(layer.digest), map), { lease });
  return { media_type: layer.media_type, digest: written.digest, size: written.size };
}

export async function commitContainer(
  deps: ImageDeps & { log?: Logger; tmpDir?: string },
  containers: ContainerFacts,
  opts: CommitOptions,
): Promise<{ id: string }> {
  const c = await containers.snapshotOf(opts.container);
  const ref = targetReference(opts.repo, opts.tag);
  const runtime = applyChanges(commitRuntimeConfig(c.config, opts.config), opts.changes);
  const parent = (await deps.images.list()).find((i) => i.id === c.imageId);
  if (!parent) throw conflict(`cannot commit container ${c.id.slice(0, 12)}: its image ${c.imageId} no longer exists`);
  const { client } = deps;
  return client.withLease(async (lease) => {
    const w: WriteContext = { client, snapshotter: deps.snapshotter, lease, log: deps.log };
    const parentDiffIds = parent.config.rootfs?.diff_ids ?? [];
    // The fast path reads the upper directory twice (tar and copy): only while nothing writes to
    // it, or blob and snapshot could differ; a running container committed without pausing goes
    // through the diff service, whose one read is applied as is.
    // Under --userns-remap the upper directory holds remapped owners and the snapshot tree is the
    // remapped one: the diff service's layer, mapped back, is the correct one there.
    const quiet = !c.running || c.paused || opts.pause;
    const fast = async (): Promise<FastCommit | null> =>
      !quiet || c.remap
        ? null
        : commitFromUpper(w, deps.contentRoot, c, parentDiffIds).catch((err: unknown) => {
            // e.g. an unreadable entry or a failed copy: the diff service is the reference
            deps.log?.debug(`commit of ${c.id.slice(0, 12)}: fast path failed, using the diff service: ${(err as Error).message}`);
            return null;
          });
    const done = opts.pause ? await containers.frozen(c.id, fast) : await fast();
    // Snapshotters without an upper directory (btrfs): the two trees compared by metadata, as
    // dockerd does, unless that is not exact; then (and on overlayfs) containerd's diff service.
    const tmpDir = deps.tmpDir;
    const viaTrees =
      quiet && !c.remap && deps.contentRoot && tmpDir && c.snapshotter !== 'overlayfs'
        ? () =>
            layerFromTrees({ ...w, contentRoot: deps.contentRoot! }, tmpDir, c).catch((err: unknown) => {
              deps.log?.debug(
                `commit of ${c.id.slice(0, 12)}: the tree comparison failed, using the diff service: ${(err as Error).message}`,
              );
              return null;
            })
        : async () => null;
    const diff = async () => (await viaTrees()) ?? (await diffContainerLayer(client, c.snapshotKey, c.snapshotter, lease, c.id));
    const slow = async (): Promise<Descriptor> => {
      const changes = opts.pause ? await containers.frozen(c.id, diff) : await diff();
      // --userns-remap: the diff holds the remapped host ids of the files on disk; the image layer
      // holds the ids the container sees (images are stored unmapped, as dockerd does).
      return c.remap ? unmapLayer(client, lease, changes, c.remap, c.id) : changes;
    };
    const layer = done?.layer ?? (await slow());
    const diffId = layer.digest; // uncompressed: the blob digest is the diff ID

    const layers = [...parent.manifest.layers, { media_type: MT.ociLayer, digest: layer.digest, size: layer.size }];
    const top = done?.top ?? (await unpackLayers(w, layers, [...parentDiffIds, diffId]));
    const created = nowIso();
    // A shallow copy: its config, rootfs and history are replaced below, the rest is only serialised
    // (a deep clone of a config with 50 000 labels held the event loop for tens of ms).
    const base = { ...parent.config } as OciImageConfig & Record<string, unknown>;
    for (const legacy of ['container', 'container_config', 'docker_version', 'parent', 'id']) delete base[legacy];
    const config: OciImageConfig & Record<string, unknown> = {
      ...base,
      created,
      ...(opts.author ? { author: opts.author } : { author: undefined }),
      config: runtime,
      rootfs: { type: 'layers', diff_ids: [...parentDiffIds, diffId] },
      history: [
        ...(parent.config.history ?? []),
        {
          created,
          created_by: (c.config.Cmd ?? []).join(' '),
          ...(opts.author ? { author: opts.author } : {}),
          ...(opts.comment ? { comment: opts.comment } : {}),
        },
      ],
    };
    if (!opts.author) delete config.author;
    // Config and manifest written at once: the manifest only needs the config's digest.
    const configBytes = Buffer.from((await stringifyJsonSliced(config))!); // 50 000 labels: in slices
    const configDigest = await sha256Off(configBytes);
    const [configDesc, manifest] = await Promise.all([
      writeConfig(w, configBytes, top, MT.ociConfig, configDigest),
      writeManifest(w, { config: { media_type: MT.ociConfig, digest: configDigest, size: configBytes.length }, layers }),
    ]);
    const labels = { [LABEL.parent]: parent.id };
    if (ref) await setName(client, deps.images, referenceString(ref), manifest, labels);
    else await ensureReachable(client, deps.images, manifest, labels, configDesc.digest);
    // Refreshes the /info count in the background: not worth the commit's latency.
    void deps.images.list().catch((err: Error) => deps.log?.debug(`image count refresh after a commit: ${err.message}`));
    return { id: configDesc.digest };
  });
}
