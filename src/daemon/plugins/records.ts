// The managed plugins' records in memory: lookup by id, id prefix or name, saved to the plugin
// store after every change; the blobs no record refers to any more dropped; plugin events.
import { invalidParameter, notFound } from '../../errors.ts';
import type { EventPublisher } from '../../events/bus.ts';
import type { PluginView } from '../../types/plugins.ts';
import { familiarString, parseReference } from '../../util/image-reference.ts';
import type { Logger } from '../../util/log.ts';
import type { PluginFiles, PluginRecord } from './store.ts';

/** The API's view of a record (the store's fields left out). */
export const pluginView = (r: PluginRecord): PluginView => ({
  Id: r.Id,
  Name: r.Name,
  Enabled: r.Enabled,
  Settings: r.Settings,
  PluginReference: r.PluginReference,
  Config: r.Config,
});

/** A plugin's local name: the familiar reference with its tag (`vol:latest`, `localhost:5000/x:1`). */
export function localName(name: string): string {
  const ref = parseReference(name);
  if (ref.digest) throw invalidParameter(`invalid plugin name ${JSON.stringify(name)}: a digest cannot name a plugin`);
  return familiarString(ref);
}

export class PluginRecords {
  private records: PluginRecord[] = [];

  constructor(
    private readonly files: PluginFiles,
    private readonly log: Pick<Logger, 'warn'>,
    private readonly events?: EventPublisher,
  ) {}

  /** Reads the records from the store (at start-up). */
  async load(): Promise<void> {
    this.records = await this.files.load();
  }

  all(): readonly PluginRecord[] {
    return this.records;
  }

  /** Whether `r` is still one of the records (not removed, not replaced by an upgrade). */
  has(r: PluginRecord): boolean {
    return this.records.includes(r);
  }

  hasName(name: string): boolean {
    return this.records.some((r) => r.Name === name);
  }

  /** A new record, or the one of the same id replaced (an upgrade). */
  put(rec: PluginRecord): void {
    this.records = [...this.records.filter((r) => r.Id !== rec.Id), rec];
  }

  delete(id: string): void {
    this.records = this.records.filter((x) => x.Id !== id);
  }

  /** By full id, unique id prefix, or name (`x` means `x:latest`). */
  lookup(nameOrId: string): PluginRecord {
    if (!nameOrId) throw invalidParameter('plugin name cannot be empty');
    const byId = this.records.find((r) => r.Id === nameOrId);
    if (byId) return byId;
    let name: string | undefined;
    try {
      name = localName(nameOrId);
    } catch {
      name = undefined; // not a reference: only an id prefix can match
    }
    const byName = name ? this.records.find((r) => r.Name === name) : undefined;
    if (byName) return byName;
    if (/^[a-f0-9]+$/.test(nameOrId)) {
      const hits = this.records.filter((r) => r.Id.startsWith(nameOrId));
      if (hits.length === 1) return hits[0]!;
      if (hits.length > 1)
        throw invalidParameter(`multiple plugins found for ${JSON.stringify(nameOrId)}: use a longer prefix or the name`);
    }
    throw notFound(`plugin ${JSON.stringify(nameOrId)} not found`);
  }

  async save(): Promise<void> {
    await this.files.save(this.records);
  }

  event(r: PluginRecord, action: string): void {
    this.events?.publish({ Type: 'plugin', Action: action, Actor: { ID: r.Id, Attributes: { name: r.Name } } });
  }

  /** Drops blobs no plugin refers to (after a remove or an upgrade). */
  async collectBlobs(): Promise<void> {
    const keep = new Set(this.records.flatMap((r) => [r.configDigest, ...r.layers.map((l) => l.digest)]));
    await this.files.dropBlobsExcept(keep).catch((err) => this.log.warn('plugin blob clean-up failed', { error: (err as Error).message }));
  }
}
