// Secret and config objects: the record kept in the store (`secrets/<id>`, `configs/<id>`, data
// sealed by secret-crypto.ts), the checks of a spec sent to create or update (swarmkit's messages
// and size limits), the API view (a secret's Data is never shown, a config's is), GET filters
// (id, label, name, names), lookup by ID, name or ID prefix, and the references a service spec
// makes to them (validated against the objects that exist; in-use checks). Pure.
import { timingSafeEqual } from 'node:crypto';
import { invalidParameter, notFound, notImplemented } from '../../errors.ts';
import type { Config } from '../../types/api/index.ts';
import type { ClusterObject } from '../../types/cluster.ts';
import type { GoJson } from '../../types/go-nil.ts';
import { allLabelsMatch, checkFilterNames } from '../../util/filters.ts';

export type FileKind = 'secrets' | 'configs';

export interface FileObjectRecord {
  ID: string;
  CreatedAt: string;
  UpdatedAt: string;
  /** Name, Labels and Templating (Data is kept sealed beside it, never in the spec). */
  Spec: { Name: string; Labels: Record<string, string>; Templating?: TemplatingDriver };
  /** The data, sealed with the cluster's data key. */
  Sealed: string;
}

/** Spec.Templating: `golang` expands the data per task (task-template.ts); others fail the task, as swarmkit. */
export interface TemplatingDriver {
  Name?: string;
  Options?: Record<string, string>;
}

/** swarmkit's limits: secrets < 500 KiB, configs < 1000 KiB. */
export const MAX_SIZE: Record<FileKind, number> = { secrets: 500 * 1024, configs: 1000 * 1024 };

const singular = (k: FileKind) => (k === 'secrets' ? 'secret' : 'config');
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const NAME_RE = /^[a-zA-Z0-9]+(?:[a-zA-Z0-9-_.]*[a-zA-Z0-9])?$/;
const rpc = (msg: string) => invalidParameter(`rpc error: code = InvalidArgument desc = ${msg}`);

function labelsOf(v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObj(v) || Object.values(v).some((x) => typeof x !== 'string')) throw invalidParameter('invalid Labels: must be a map of strings');
  return { ...(v as Record<string, string>) };
}

/** Spec.Templating as dockerd passes it on (any driver name is accepted at create). */
function templatingOf(v: unknown): { Templating?: TemplatingDriver } {
  if (v === undefined || v === null) return {};
  if (!isObj(v)) throw invalidParameter('invalid Templating: must be an object');
  // Go decodes keys case-insensitively: docker-py sends {"name": "golang"}.
  const field = (name: string) => v[Object.keys(v).find((k) => k.toLowerCase() === name.toLowerCase()) ?? name];
  const t: TemplatingDriver = {};
  const name = field('Name');
  if (name !== undefined && name !== null) {
    if (typeof name !== 'string') throw invalidParameter('invalid Templating.Name: must be a string');
    if (name) t.Name = name;
  }
  const options = field('Options');
  if (options !== undefined && options !== null) {
    if (!isObj(options) || Object.values(options).some((x) => typeof x !== 'string'))
      throw invalidParameter('invalid Templating.Options: must be a map of strings');
    if (Object.keys(options).length) t.Options = { ...(options as Record<string, string>) };
  }
  return { Templating: t };
}

/** Checks a create body; returns the spec and the decoded data. */
export function checkCreate(kind: FileKind, body: ClusterObject): { spec: FileObjectRecord['Spec']; data: Buffer } {
  const what = singular(kind);
  if (isObj(body.Driver) && Object.entries(body.Driver).some(([k, v]) => k.toLowerCase() === 'name' && v))
    throw notImplemented(`${what} drivers are not built in this engine's cluster mode: the data is kept in the cluster store`);
  const name = body.Name;
  if (typeof name !== 'string' || name === '') throw rpc('name must be provided');
  if (name.length > 64 || !NAME_RE.test(name))
    throw rpc('invalid name, only 64 [a-zA-Z0-9-_.] characters allowed, and the start and end character must be [a-zA-Z0-9]');
  if (body.Data !== undefined && body.Data !== null && typeof body.Data !== 'string')
    throw invalidParameter('invalid Data: must be base64');
  const text = typeof body.Data === 'string' ? body.Data : '';
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) throw invalidParameter('invalid Data: must be base64');
  const data = Buffer.from(text, 'base64');
  if (data.length < 1 || data.length >= MAX_SIZE[kind])
    throw rpc(`${what} data must be larger than 0 and less than ${MAX_SIZE[kind]} bytes`);
  return { spec: { Name: name, Labels: labelsOf(body.Labels), ...templatingOf(body.Templating) }, data };
}

/**
 * An update body: only Labels may change (the name must stay; Data absent or the same). Returns
 * the new spec.
 */
export function checkUpdate(kind: FileKind, cur: FileObjectRecord, data: Buffer, body: ClusterObject): FileObjectRecord['Spec'] {
  const sent = typeof body.Data === 'string' && body.Data !== '' ? Buffer.from(body.Data, 'base64') : undefined;
  const nameChanged = body.Name !== undefined && body.Name !== cur.Spec.Name;
  // swarmkit compares (in constant time): the same data is no change. `docker stack deploy` sends
  // an existing secret back with its data on every deploy.
  const dataChanged = sent !== undefined && (sent.length !== data.length || !timingSafeEqual(sent, data));
  if (nameChanged || dataChanged) throw rpc('only updates to Labels are allowed');
  // Only the labels change: the templating stays as created (swarmkit's update).
  return { ...cur.Spec, Labels: labelsOf(body.Labels) };
}

/**
 * The API's Config, and its Secret (the same fields; a secret's Data is never shown). Templating is
 * as stored: its Name may be absent, where the generated Driver requires one.
 */
export type FileObjectView = Omit<GoJson<Config>, 'Spec'> & { Spec: FileObjectSpecView };
type FileObjectSpecView = Omit<NonNullable<GoJson<Config>['Spec']>, 'Templating'> & { Templating?: TemplatingDriver };

export function fileObjectView(kind: FileKind, rec: FileObjectRecord, version: number, data?: Buffer): FileObjectView {
  const spec: FileObjectSpecView = { Name: rec.Spec.Name, Labels: rec.Spec.Labels };
  if (kind === 'configs' && data) spec.Data = data.toString('base64');
  if (rec.Spec.Templating) spec.Templating = rec.Spec.Templating;
  return { ID: rec.ID, Version: { Index: version }, CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt, Spec: spec };
}

const FILTERS = ['id', 'label', 'name', 'names'] as const;

/** dockerd's list filters: id and name are prefixes, names exact names, label key or key=value. */
export function filterFileObjects(all: FileObjectRecord[], filters: Map<string, string[]>): FileObjectRecord[] {
  checkFilterNames(filters, FILTERS);
  const any = (name: string, test: (v: string) => boolean) => {
    const values = filters.get(name);
    return !values || values.length === 0 || values.some(test);
  };
  return all.filter(
    (o) =>
      any('id', (v) => o.ID.startsWith(v)) &&
      any('name', (v) => o.Spec.Name.startsWith(v)) &&
      any('names', (v) => o.Spec.Name === v) &&
      allLabelsMatch(o.Spec.Labels, filters.get('label') ?? []),
  );
}

/** Full ID, then name, then unique ID prefix; dockerd's 404 otherwise. */
export function findFileObject<T extends FileObjectRecord>(kind: FileKind, all: T[], ref: string): T {
  const hit = all.find((o) => o.ID === ref) ?? all.find((o) => o.Spec.Name === ref);
  if (hit) return hit;
  const byPrefix = ref === '' ? [] : all.filter((o) => o.ID.startsWith(ref));
  if (byPrefix.length === 1) return byPrefix[0]!;
  if (byPrefix.length > 1) throw invalidParameter(`${singular(kind)} ${ref} is ambiguous (${byPrefix.length} matches found)`);
  throw notFound(`${singular(kind)} ${ref} not found`);
}

/** One reference of a ContainerSpec to a secret or config, file target resolved. */
export interface FileRef {
  id: string;
  name: string;
  /** The reference's File.Name (the object's name when unset): what a template's {{secret}} names. */
  file: string;
  /** Absolute path in the container. */
  target: string;
  uid: number;
  gid: number;
  mode: number;
}

function refsOf(kind: FileKind, spec: ClusterObject): unknown[] {
  const cs = (spec.ContainerSpec ?? {}) as Record<string, unknown>;
  const v = cs[kind === 'secrets' ? 'Secrets' : 'Configs'];
  return Array.isArray(v) ? v : [];
}

function idNum(v: unknown, what: string): number {
  if (v === undefined || v === null || v === '') return 0;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw rpc(`invalid ${what} ${JSON.stringify(v)}: a numeric ID is expected`);
  return n;
}

/**
 * The references a task spec (TaskTemplate) makes to secrets or configs, checked as swarmkit
 * does (malformed references, conflicting targets). Secrets go under /run/secrets unless given an
 * absolute target; configs at their target (relative to /).
 */
export function fileRefs(kind: FileKind, taskSpec: ClusterObject): FileRef[] {
  const what = singular(kind);
  const out: FileRef[] = [];
  for (const r of refsOf(kind, taskSpec)) {
    if (!isObj(r)) throw rpc(`malformed ${what} reference`);
    const id = r[kind === 'secrets' ? 'SecretID' : 'ConfigID'];
    const name = r[kind === 'secrets' ? 'SecretName' : 'ConfigName'];
    if (typeof id !== 'string' || !id || typeof name !== 'string' || !name) throw rpc(`malformed ${what} reference`);
    if (r.Runtime !== undefined && r.Runtime !== null)
      throw notImplemented(`${what}s of target Runtime are not built in this engine's cluster mode: use a file target`);
    const f = r.File;
    if (!isObj(f)) throw rpc(`malformed file ${what} reference`);
    const file = typeof f.Name === 'string' && f.Name ? f.Name : name;
    const target = file.startsWith('/') ? file : kind === 'secrets' ? `/run/secrets/${file}` : `/${file}`;
    if (target.split('/').includes('..')) throw rpc(`invalid ${what} target ${JSON.stringify(file)}`);
    const mode = f.Mode === undefined || f.Mode === null ? 0o444 : Number(f.Mode);
    if (!Number.isInteger(mode) || mode < 0 || mode > 0o7777) throw rpc(`invalid ${what} file mode ${JSON.stringify(f.Mode)}`);
    const clash = out.find((o) => o.target === target);
    if (clash) throw rpc(`${what} references '${clash.name}' and '${name}' have a conflicting target: '${file}'`);
    out.push({ id, name, file, target, uid: idNum(f.UID, 'UID'), gid: idNum(f.GID, 'GID'), mode });
  }
  return out;
}

/** Checks that every reference names an object that exists under that ID and name (swarmkit's error). */
export function checkRefsExist(kind: FileKind, refs: FileRef[], all: FileObjectRecord[]): void {
  const missing = refs.filter((r) => !all.some((o) => o.ID === r.id && o.Spec.Name === r.name)).map((r) => r.name);
  if (missing.length) throw rpc(`${singular(kind)}${missing.length > 1 ? 's' : ''} not found: ${missing.join(', ')}`);
}

/** The refusal to remove an object that services use, as swarmkit words it. */
export function inUse(kind: FileKind, name: string, services: string[]): Error {
  return rpc(`${singular(kind)} '${name}' is in use by the following service${services.length > 1 ? 's' : ''}: ${services.join(', ')}`);
}
