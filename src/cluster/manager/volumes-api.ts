// A manager's cluster (CSI) volumes on the replicated store (`volumes/<id>`), as swarmkit's control
// API and dockerd's cluster backend answer for them: create (spec checks, secrets that exist, one
// volume per name case-insensitively), list, get by ID, name or unique ID prefix, update (only the
// availability, version compare-and-swap, addressed by ID as dockerd sends it), and remove (force
// deletes at once; otherwise the volume is marked for deletion by its CSI plugin — this engine
// runs no CSI plugins, so, as swarmkit without the plugin, it stays listed until removed by force).
import { conflict, invalidParameter, isNotFound, notFound } from '../../errors.ts';
import { newId } from '../ids.ts';
import type { ClusterStore, Stored } from '../store/store.ts';
import { volumeRecord, volumeView, type ClusterVolumeView, type VolumeRecord } from './volume-spec.ts';

const PREFIX = 'volumes/';
const NAMES = 'volumes-names/';
const AVAILABILITIES = new Set(['active', 'pause', 'drain']);

export class ClusterVolumesApi {
  constructor(private readonly store: ClusterStore) {}

  private all(): Promise<Stored<VolumeRecord>[]> {
    return this.store.list<VolumeRecord>(PREFIX);
  }

  /** dockerd's getVolume: the full ID, else the name, else a unique ID prefix. */
  private async find(ref: string): Promise<Stored<VolumeRecord>> {
    const all = await this.all();
    const byId = all.find((s) => s.value.ID === ref);
    if (byId) return byId;
    let hits = all.filter((s) => s.value.Name === ref);
    if (!hits.length) hits = ref === '' ? [] : all.filter((s) => s.value.ID.startsWith(ref));
    if (!hits.length) throw notFound(`volume ${ref} not found`);
    if (hits.length > 1) throw invalidParameter(`volume ${ref} is ambiguous (${hits.length} matches found)`);
    return hits[0]!;
  }

  async create(req: Record<string, unknown>): Promise<ClusterVolumeView> {
    const id = newId();
    const rec = volumeRecord(id, req, new Date().toISOString());
    const missing: string[] = [];
    for (const s of rec.Spec.Secrets ?? []) if (!(await this.store.get(`secrets/${s.Secret}`))) missing.push(s.Secret);
    if (missing.length)
      throw invalidParameter(
        `rpc error: code = InvalidArgument desc = ${missing.length === 1 ? 'secret' : 'secrets'} not found: ${missing.join(', ')}`,
      );
    // swarmkit's store answers a taken name (any case) so; the name key makes two managers agree.
    const taken = () => conflict('rpc error: code = Unknown desc = name conflicts with an existing object');
    const nameKey = NAMES + rec.Name.toLowerCase();
    try {
      await this.store.create(nameKey, { id });
    } catch (err) {
      if ((err as { code?: string }).code === 'CONFLICT') throw taken();
      throw err;
    }
    try {
      const version = await this.store.create(PREFIX + id, rec);
      return volumeView(rec, version);
    } catch (err) {
      await this.store.delete(nameKey).catch(() => undefined); // the create's error is what the caller sees; a name key left behind only blocks the name
      throw err;
    }
  }

  async list(): Promise<ClusterVolumeView[]> {
    return (await this.all()).map((s) => volumeView(s.value, s.version));
  }

  async get(ref: string): Promise<ClusterVolumeView> {
    const s = await this.find(ref);
    return volumeView(s.value, s.version);
  }

  /** PUT /volumes/{id}?version=N: only Spec.Availability changes; the volume is addressed by its ID. */
  async update(ref: string, version: number, body: Record<string, unknown>): Promise<void> {
    const found = await this.find(ref);
    const wanted = (body.Spec as { Availability?: unknown } | null | undefined)?.Availability;
    // dockerd resolves the name but then hands swarmkit what the client sent as the volume's ID.
    if (found.value.ID !== ref) throw notFound(`rpc error: code = NotFound desc = volume ${ref} not found`);
    const next: VolumeRecord = {
      ...found.value,
      // An empty or unknown availability changes nothing (dockerd's UpdateVolume).
      Spec: {
        ...found.value.Spec,
        ...(AVAILABILITIES.has(wanted as string) ? { Availability: wanted as VolumeRecord['Spec']['Availability'] } : {}),
      },
      UpdatedAt: new Date().toISOString(),
    };
    await this.store.update(PREFIX + found.value.ID, next, version);
  }

  async remove(ref: string, force: boolean): Promise<void> {
    let s: Stored<VolumeRecord>;
    try {
      s = await this.find(ref);
    } catch (err) {
      if (force && isNotFound(err)) return;
      throw err;
    }
    if (!force) {
      // No node has it published (no CSI plugin publishes here): marked for its plugin to delete.
      await this.store.update(PREFIX + s.value.ID, { ...s.value, PendingDelete: true }, s.version);
      return;
    }
    await this.store.delete(PREFIX + s.value.ID);
    await this.store.delete(NAMES + s.value.Name.toLowerCase());
  }
}
