// A manager's secrets and configs on the replicated store (`secrets/<id>`, `configs/<id>`): create
// (409 on a taken name), list, inspect, update (labels only, version compare-and-swap), remove
// (refused while a service refers to the object), events of types secret/config with scope swarm,
// the check of a service spec's references, and the data of the objects a node's tasks use (the
// agents' sync). Data is sealed (AES-256-GCM) with the cluster's data key before it is stored.
import type { EventPublisher } from '../../events/bus.ts';
import { conflict } from '../../errors.ts';
import type { ClusterObject } from '../../types/cluster.ts';
import { newId } from '../ids.ts';
import { newDataKey, open, seal } from '../ca/secret-crypto.ts';
import {
  checkCreate,
  checkRefsExist,
  checkUpdate,
  fileObjectView,
  fileRefs,
  filterFileObjects,
  findFileObject,
  inUse,
  type FileKind,
  type FileObjectRecord,
  type FileObjectView,
  type TemplatingDriver,
} from './secret-spec.ts';
import type { TemplatePayloads } from '../agent/task-template.ts';
import type { ServiceRecord } from './service-spec.ts';
import type { ClusterStore, Stored } from '../store/store.ts';
import type { ClusterRecord } from '../ca/swarm-object.ts';
import type { TaskRecord } from './tasks.ts';

/**
 * The data of the secrets and configs a node's tasks use, base64 by object ID, and the Templating
 * of the templated ones (expanded per task on the node: task-template.ts).
 */
export type TaskPayloads = TemplatePayloads;

/** What the services need of the secrets and configs. */
export interface FileObjectHooks {
  /** Refuses a task template naming secrets or configs that do not exist. */
  checkRefs(taskTemplate: ClusterObject): Promise<void>;
  payloads(tasks: TaskRecord[]): Promise<TaskPayloads>;
}

export class FileObjectsApi {
  constructor(
    private readonly kind: FileKind,
    private readonly store: ClusterStore,
    private readonly events: EventPublisher | undefined,
    /** The cluster's data key (base64). */
    private readonly key: () => Promise<string>,
    private readonly services: () => Promise<Stored<ServiceRecord>[]>,
  ) {}

  private keyOf(id: string): string {
    return `${this.kind}/${id}`;
  }

  private all(): Promise<Stored<FileObjectRecord>[]> {
    return this.store.list<FileObjectRecord>(`${this.kind}/`);
  }

  private publish(action: string, rec: FileObjectRecord): void {
    this.events?.publish({
      Type: this.kind === 'secrets' ? 'secret' : 'config',
      Action: action,
      Actor: { ID: rec.ID, Attributes: { name: rec.Spec.Name } },
      scope: 'swarm',
    });
  }

  private async find(ref: string): Promise<Stored<FileObjectRecord>> {
    const all = await this.all();
    const rec = findFileObject(
      this.kind,
      all.map((s) => s.value),
      ref,
    );
    return all.find((s) => s.value.ID === rec.ID)!;
  }

  async create(body: ClusterObject): Promise<{ ID: string }> {
    const { spec, data } = checkCreate(this.kind, body);
    const all = await this.all();
    const what = this.kind === 'secrets' ? 'secret' : 'config';
    if (all.some((o) => o.value.Spec.Name === spec.Name))
      throw conflict(`rpc error: code = AlreadyExists desc = ${what} ${spec.Name} already exists`);
    const id = newId();
    const now = new Date().toISOString();
    const rec: FileObjectRecord = { ID: id, CreatedAt: now, UpdatedAt: now, Spec: spec, Sealed: seal(await this.key(), id, data) };
    // Two managers creating the same name at once: the name key is claimed in the same store, so
    // only one creation of a name can succeed.
    await this.claimName(spec.Name, id, what);
    try {
      await this.store.create(this.keyOf(id), rec);
    } catch (err) {
      await this.store.delete(`${this.kind}-names/${spec.Name}`).catch(() => undefined); // best effort: the create's error is reported; a stale name claim expires after a minute
      throw err;
    }
    this.publish('create', rec);
    return { ID: id };
  }

  /**
   * Claims `<kind>-names/<name>`; a claim left by an object that no longer exists (a manager that
   * stopped between the two deletes of a removal) is taken over once it is a minute old (a younger
   * one may belong to a creation under way on another manager).
   */
  private async claimName(name: string, id: string, what: string): Promise<void> {
    const key = `${this.kind}-names/${name}`;
    const taken = () => conflict(`rpc error: code = AlreadyExists desc = ${what} ${name} already exists`);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.store.create(key, { id, at: Date.now() });
        return;
      } catch (err) {
        if ((err as { code?: string }).code !== 'CONFLICT') throw err;
      }
      const claim = await this.store.get<{ id: string; at: number }>(key);
      if (claim && (Date.now() - claim.value.at < 60_000 || (await this.store.get(this.keyOf(claim.value.id))))) throw taken();
      if (claim) await this.store.delete(key, claim.version).catch(() => undefined); // another claimer removed or renewed it meanwhile: the retry below decides
    }
    throw taken();
  }

  async list(filters: Map<string, string[]>): Promise<FileObjectView[]> {
    const all = await this.all();
    const keep = new Set(
      filterFileObjects(
        all.map((s) => s.value),
        filters,
      ).map((o) => o.ID),
    );
    const key = this.kind === 'configs' ? await this.key() : '';
    return all
      .filter((s) => keep.has(s.value.ID))
      .map((s) => fileObjectView(this.kind, s.value, s.version, key ? open(key, s.value.ID, s.value.Sealed) : undefined));
  }

  async inspect(ref: string): Promise<FileObjectView> {
    const s = await this.find(ref);
    const data = this.kind === 'configs' ? open(await this.key(), s.value.ID, s.value.Sealed) : undefined;
    return fileObjectView(this.kind, s.value, s.version, data);
  }

  async update(ref: string, body: ClusterObject, version: number): Promise<void> {
    const s = await this.find(ref);
    const spec = checkUpdate(this.kind, s.value, open(await this.key(), s.value.ID, s.value.Sealed), body);
    const next: FileObjectRecord = { ...s.value, Spec: spec, UpdatedAt: new Date().toISOString() };
    await this.store.update(this.keyOf(s.value.ID), next, version);
    this.publish('update', next);
  }

  async remove(ref: string): Promise<void> {
    const s = await this.find(ref);
    const users = (await this.services())
      .filter((svc) => fileRefs(this.kind, (svc.value.Spec.TaskTemplate ?? {}) as ClusterObject).some((r) => r.id === s.value.ID))
      .map((svc) => String(svc.value.Spec.Name));
    if (users.length) throw inUse(this.kind, s.value.Spec.Name, users);
    await this.store.delete(this.keyOf(s.value.ID));
    await this.store.delete(`${this.kind}-names/${s.value.Spec.Name}`);
    this.publish('remove', s.value);
  }

  /** Service create/update: every reference of the task template names an object that exists. */
  async checkRefs(taskTemplate: ClusterObject): Promise<void> {
    const refs = fileRefs(this.kind, taskTemplate);
    if (!refs.length) return;
    checkRefsExist(
      this.kind,
      refs,
      (await this.all()).map((s) => s.value),
    );
  }

  /** The opened data (base64) of the objects these tasks refer to, and their Templating: what a node is sent. */
  async payloads(tasks: TaskRecord[]): Promise<{ data: Record<string, string>; templating: Record<string, TemplatingDriver> }> {
    const ids = new Set(tasks.flatMap((t) => fileRefs(this.kind, t.Spec).map((r) => r.id)));
    const data: Record<string, string> = {};
    const templating: Record<string, TemplatingDriver> = {};
    if (!ids.size) return { data, templating };
    const key = await this.key();
    for (const id of ids) {
      const s = await this.store.get<FileObjectRecord>(this.keyOf(id));
      if (!s) continue;
      data[id] = open(key, id, s.value.Sealed).toString('base64');
      if (s.value.Spec.Templating) templating[id] = s.value.Spec.Templating;
    }
    return { data, templating };
  }
}

/**
 * The cluster's data key, read from the cluster record and added to it (compare-and-swap: two
 * managers doing so at once agree on the one written first) when the cluster has none yet.
 */
export function clusterDataKey(store: ClusterStore, opened: (rec: ClusterRecord) => string | undefined): () => Promise<string> {
  let cached: string | undefined;
  return async () => {
    for (let attempt = 0; !cached && attempt < 5; attempt++) {
      const c = await store.get<ClusterRecord>('cluster');
      if (!c) throw new Error('the cluster store holds no cluster object');
      const k = opened(c.value); // sealed by autolock: opened with the key this manager holds
      if (k) cached = k;
      else {
        const key = newDataKey();
        await store.update('cluster', { ...c.value, dataKey: key }, c.version).then(
          () => (cached = key),
          (err: Error & { code?: string }) => {
            if (err.code !== 'CONFLICT') throw err;
          },
        );
      }
    }
    if (!cached) throw conflict('cannot settle the cluster data key (the cluster object keeps changing)');
    return cached;
  };
}

/** The hooks the services use: reference checks and the payloads of a node's tasks. */
export function fileObjectHooks(secrets: FileObjectsApi, configs: FileObjectsApi): FileObjectHooks {
  return {
    async checkRefs(tt) {
      await secrets.checkRefs(tt);
      await configs.checkRefs(tt);
    },
    async payloads(tasks) {
      const s = await secrets.payloads(tasks);
      const c = await configs.payloads(tasks);
      const templated = Object.keys(s.templating).length || Object.keys(c.templating).length;
      return { secrets: s.data, configs: c.data, ...(templated ? { templating: { secrets: s.templating, configs: c.templating } } : {}) };
    },
  };
}
