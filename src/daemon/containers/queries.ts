// Reading containers: list (docker ps) with its filters, inspect, sizes of the writable layer, the
// counters of /info and the facts the image service needs (snapshot, users of an image).
import { usesRemap } from '../../oci/userns.ts';
import type { ContainerSnapshot } from '../../images/container-facts.ts';
import type { ContainerServiceDeps } from './deps.ts';
import type { ContainerRecords } from './records.ts';
import { compileFilters } from './filters.ts';
import type { ContainerRecord } from './record.ts';
import { ensureWritableLayer } from './fs/writable-layer.ts';
import type { NetworkView } from '../../network/container-contract.ts';
import { inspectView, summaryJson, summaryView } from './views.ts';
import { mapLimit } from '../../util/map-limit.ts';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { JsonText } from '../../util/json-text.ts';
import type { ContainerInspectView, ContainerSummaryView } from '../../types/container-views.ts';

/** docker ps's options; `objects` asks for views even where the route gets cached JSON text. */
export interface ContainerListOptions {
  all: boolean;
  limit?: number;
  size: boolean;
  filters: Map<string, string[]>;
  objects?: boolean;
}

/** Bytes in the container's writable layer (what `size=1` and prune report). */
export async function rwSize(d: Pick<ContainerServiceDeps, 'client'>, rec: ContainerRecord): Promise<number> {
  if (rec.Internal.layerPending) return 0; // not made yet: empty
  return Number((await d.client.snapshots.usage(rec.Internal.snapshotKey, { snapshotter: rec.Internal.snapshotter })).size);
}

/** How long docker ps builds entries before other requests get a turn. */
const LIST_SLICE_MS = 8;

export class ContainerQueries {
  constructor(
    private readonly records: Pick<ContainerRecords, 'byId' | 'find' | 'unknownState'>,
    private readonly d: Pick<ContainerServiceDeps, 'client' | 'execs' | 'images' | 'log' | 'networks' | 'rootfs'>,
  ) {}

  /**
   * docker ps. Which containers run is known only once containerd has been asked after a daemon
   * restart, so a listing waits for the containers whose state is not known yet (requests on one
   * container wait for that one only); not for the stops at start-up that may follow.
   *
   * The list entries: for the API route (no sizes) as cached JSON bytes (`JsonText`); `objects`
   * asks for the views instead, for callers inside the daemon that read the fields (with sizes
   * they are views too).
   */
  list(opts: ContainerListOptions & { objects: true }): Promise<ContainerSummaryView[]>;
  list(opts: ContainerListOptions & { size: true }): Promise<ContainerSummaryView[]>;
  list(opts: ContainerListOptions): Promise<Array<ContainerSummaryView | JsonText>>;
  async list(opts: ContainerListOptions): Promise<Array<ContainerSummaryView | JsonText>> {
    const { records, d } = this;
    if (records.unknownState.size) await Promise.all(records.unknownState.values());
    const ancestorCache = new Map<string, Set<string>>();
    for (const v of opts.filters.get('ancestor') ?? []) {
      const ids = new Set<string>();
      try {
        ids.add((await d.images.resolve(v)).id);
      } catch {
        // an unknown ancestor matches nothing (as dockerd)
      }
      ancestorCache.set(v, ids);
    }
    const match = compileFilters(opts.filters, {
      resolve: (ref) => records.find(ref),
      ancestorImageIds: (ref) => ancestorCache.get(ref) ?? new Set(),
      networksOf: (r) => (d.networks ? d.networks.networksOf(r) : [r.HostConfig.NetworkMode ?? 'bridge']),
    });
    const showAll = opts.all || opts.filters.has('status') || opts.filters.has('exited') || opts.limit !== undefined;
    let list = [...records.byId.values()]
      .filter((r) => showAll || r.State.Running || r.State.Paused || r.State.Restarting)
      .filter(match)
      .sort((a, b) => (a.Created < b.Created ? 1 : a.Created > b.Created ? -1 : 0));
    if (opts.limit !== undefined) list = list.slice(0, opts.limit);
    // Without sizes (docker ps): each entry's JSON, cached per record while nothing it shows changed.
    if (!opts.size && opts.objects) return list.map((r) => summaryView(r, this.networkView(r)));
    if (!opts.size) {
      // Entries not cached yet (after many creates, or a start-up) cost ~10 µs each: 2 000 of them
      // are made in slices, with turns for other requests between.
      const out: JsonText[] = [];
      let until = performance.now() + LIST_SLICE_MS;
      for (const r of list) {
        out.push(summaryJson(r, this.d.networks?.viewGeneration(r) ?? '', () => this.networkView(r)));
        if (performance.now() > until) {
          await nextTurn();
          until = performance.now() + LIST_SLICE_MS;
        }
      }
      return out;
    }
    // Sizes are a containerd call each: a few at a time, so thousands never go out in one turn.
    const imageSizes = new Map<string, Promise<number>>(); // most containers share a few images
    return mapLimit(list, 16, async (r) => summaryView(r, this.networkView(r), await this.sizes(r, imageSizes)));
  }

  async inspect(rec: ContainerRecord, size: boolean): Promise<ContainerInspectView> {
    return inspectView(rec, this.networkView(rec), this.d.execs?.idsOf(rec.Id) ?? [], size ? await this.sizes(rec) : undefined);
  }

  counts(): { total: number; running: number; paused: number; stopped: number } {
    let running = 0;
    let paused = 0;
    for (const r of this.records.byId.values()) {
      if (r.State.Paused) paused++;
      else if (r.State.Running) running++;
    }
    return { total: this.records.byId.size, running, paused, stopped: this.records.byId.size - running - paused };
  }

  /** What commit and export need of a container, its writable layer made if create left it for later. */
  async snapshotOf(rec: ContainerRecord): Promise<ContainerSnapshot> {
    await ensureWritableLayer(this.d.rootfs, rec);
    const map = usesRemap(rec.HostConfig.UsernsMode, this.d.rootfs.remapping) ? this.d.rootfs.remap : undefined;
    return {
      id: rec.Id,
      imageId: rec.Image,
      snapshotKey: rec.Internal.snapshotKey,
      snapshotter: rec.Internal.snapshotter,
      running: rec.State.Running,
      paused: rec.State.Paused,
      config: rec.Config,
      ...(map ? { remap: { uid: (id: number) => map.toContainerUid(id), gid: (id: number) => map.toContainerGid(id) } } : {}),
    };
  }

  /** Makes the writable layers not made yet of the containers created from `imageId` (before a forced rmi). */
  async keepLayersOf(imageId: string): Promise<void> {
    for (const rec of this.records.byId.values())
      if (rec.Image === imageId && !rec.Internal.removing) await ensureWritableLayer(this.d.rootfs, rec);
  }

  imageUsers(): Array<{ id: string; image: string; running: boolean }> {
    return [...this.records.byId.values()].map((r) => ({ id: r.Id, image: r.Image, running: r.State.Running || r.State.Restarting }));
  }

  /** SizeRw and SizeRootFs (writable layer plus the image) for inspect and list with size=1. */
  private async sizes(rec: ContainerRecord, imageSizes = new Map<string, Promise<number>>()): Promise<{ rw: number; rootFs: number }> {
    const { d } = this;
    const rw = await rwSize(this.d, rec).catch((err) => {
      d.log.debug(`size of the writable layer: ${(err as Error).message}`, { id: rec.Id });
      return 0;
    });
    // The image may have been removed (rmi -f) since: the writable layer alone then.
    let imageSize = imageSizes.get(rec.Image);
    if (!imageSize) {
      imageSize = d.images.resolve(rec.Image).then(
        (image) => image.size ?? 0,
        () => 0,
      );
      imageSizes.set(rec.Image, imageSize);
    }
    return { rw, rootFs: rw + (await imageSize) };
  }

  private networkView(rec: ContainerRecord): NetworkView {
    if (this.d.networks) return this.d.networks.containerView(rec);
    return standInNetworkView(rec);
  }
}

/** NetworkSettings without the network layer: an own namespace with loopback only. */
export function standInNetworkView(rec: ContainerRecord): NetworkView {
  const mode = rec.HostConfig.NetworkMode ?? 'bridge';
  const endpoint = {
    IPAMConfig: null,
    Links: null,
    Aliases: null,
    MacAddress: '',
    DriverOpts: null,
    GwPriority: 0,
    NetworkID: '',
    EndpointID: '',
    Gateway: '',
    IPAddress: '',
    IPPrefixLen: 0,
    IPv6Gateway: '',
    GlobalIPv6Address: '',
    GlobalIPv6PrefixLen: 0,
    DNSNames: null,
  };
  const networks = mode.startsWith('container:') ? {} : { [mode]: endpoint };
  return {
    settings: {
      Bridge: '',
      SandboxID: '',
      SandboxKey: rec.Internal.netnsPath ?? '',
      HairpinMode: false,
      LinkLocalIPv6Address: '',
      LinkLocalIPv6PrefixLen: 0,
      Ports: {},
      SecondaryIPAddresses: null,
      SecondaryIPv6Addresses: null,
      EndpointID: '',
      Gateway: '',
      GlobalIPv6Address: '',
      GlobalIPv6PrefixLen: 0,
      IPAddress: '',
      IPPrefixLen: 0,
      IPv6Gateway: '',
      MacAddress: '',
      Networks: networks,
    },
    summaryNetworks: networks,
    ports: [],
  };
}
