// swarmkit's templating, evaluated on the task's node before the container is made (its
// template package): the context {{.Service.ID/Name/Labels}}, {{.Node.ID/Hostname/Platform}},
// {{.Task.ID/Name/Slot}}; a ContainerSpec's Env values, Hostname and mounts' Source/Target
// (and volume labels and driver options) are expanded with it; the data of a secret or config
// with Templating {Name: "golang"} is expanded per task with, in addition, {{env "X"}} (the task
// spec's Env, unexpanded), {{secret "t"}} and {{config "t"}} (the data of the task's secret or
// config whose File.Name is t). Missing map keys are errors (missingkey=error). Pure.
import { parseGoTemplate, type TemplateFunc } from '../../wire/go-template.ts';
import type { ClusterObject } from '../../types/cluster.ts';
import { fileRefs, type FileKind, type FileRef, type TemplatingDriver } from '../manager/secret-spec.ts';
import { containerName, type TaskRecord } from '../manager/tasks.ts';

/** What a template sees of the node (its NodeDescription). */
export interface NodeFacts {
  hostname: string;
  os: string;
  architecture: string;
}

/** The data of the task's secrets and configs (base64 by object ID) and their Templating. */
export interface TemplatePayloads {
  secrets: Record<string, string>;
  configs: Record<string, string>;
  templating?: { secrets: Record<string, TemplatingDriver>; configs: Record<string, TemplatingDriver> };
}

const obj = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** swarmkit's template.Context: labels are a map (a missing key is an error), the rest are fields. */
export function templateContext(t: TaskRecord, node: NodeFacts): object {
  return {
    Service: { ID: t.ServiceID, Name: t.ServiceName, Labels: new Map(Object.entries(t.ServiceLabels ?? {})) },
    Node: { ID: t.NodeID ?? '', Hostname: node.hostname, Platform: { Architecture: node.architecture, OS: node.os } },
    // No slot (a global task): the node ID, as swarmkit.
    Task: { ID: t.ID, Name: containerName(t), Slot: t.Slot ? String(t.Slot) : (t.NodeID ?? '') },
  };
}

/** swarmkit's one extra function of every template: join(sep, s…). */
const join: TemplateFunc = (sep, ...s) => s.map(String).join(String(sep));

function expand(text: string, ctx: object, funcs: Record<string, TemplateFunc> = {}): string {
  return parseGoTemplate('expansion', text, { join, ...funcs }).execute(ctx);
}

/** ExpandContainerSpec: the task's ContainerSpec with Env values, Hostname and mounts expanded. */
export function expandContainerSpec(t: TaskRecord, node: NodeFacts): ClusterObject {
  const cs = structuredClone(obj(t.Spec.ContainerSpec));
  const ctx = templateContext(t, node);
  const step = <T>(what: string, fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      throw new Error(`${what}: ${(err as Error).message}`);
    }
  };
  if (Array.isArray(cs.Env))
    cs.Env = step('expanding env failed', () =>
      (cs.Env as unknown[]).map((e) => {
        const s = String(e);
        const i = s.indexOf('=');
        return i < 0 ? s : `${s.slice(0, i)}=${expand(s.slice(i + 1), ctx)}`;
      }),
    );
  if (Array.isArray(cs.Mounts))
    cs.Mounts = step('expanding mounts failed', () =>
      (cs.Mounts as unknown[]).map((m) => {
        const mount = { ...obj(m) };
        for (const k of ['Source', 'Target'] as const) if (typeof mount[k] === 'string') mount[k] = expand(mount[k], ctx);
        const vo = obj(mount.VolumeOptions);
        if (mount.VolumeOptions !== undefined) {
          const copy = { ...vo };
          if (vo.Labels) copy.Labels = expandMap(obj(vo.Labels), ctx);
          const dc = obj(vo.DriverConfig);
          if (vo.DriverConfig && dc.Options) copy.DriverConfig = { ...dc, Options: expandMap(obj(dc.Options), ctx) };
          mount.VolumeOptions = copy;
        }
        return mount;
      }),
    );
  if (typeof cs.Hostname === 'string') cs.Hostname = step('expanding hostname failed', () => expand(cs.Hostname as string, ctx));
  return cs;
}

function expandMap(m: Record<string, unknown>, ctx: object): Record<string, string> {
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, expand(String(v), ctx)]));
}

/**
 * The data of one secret or config file of the task: as stored, or expanded when its Templating
 * asks for it (the secret or config a template reads is taken as stored).
 */
export function fileData(kind: FileKind, ref: FileRef, data: Buffer, t: TaskRecord, node: NodeFacts, payloads: TemplatePayloads): Buffer {
  const driver = payloads.templating?.[kind][ref.id];
  if (!driver) return data;
  const what = kind === 'secrets' ? 'secret' : 'config';
  if (driver.Name !== 'golang') throw new Error(`failed to expand templated ${what} ${ref.id}: unrecognized template type`);
  const cs = obj(t.Spec.ContainerSpec);
  const getter = (k: FileKind) => (target: unknown) => {
    const r = fileRefs(k, t.Spec).find((x) => x.file === String(target));
    if (!r) throw new Error(`${k === 'secrets' ? 'secret' : 'config'} target ${String(target)} not found`);
    const raw = payloads[k][r.id];
    if (raw === undefined) throw new Error(`${k === 'secrets' ? 'secret' : 'config'} ${r.name} not found`);
    return Buffer.from(raw, 'base64').toString('utf8');
  };
  const env = (name: unknown) => {
    for (const e of Array.isArray(cs.Env) ? cs.Env : []) {
      const s = String(e);
      const i = s.indexOf('=');
      if (i > 0 && s.slice(0, i) === String(name)) return s.slice(i + 1);
    }
    return '';
  };
  try {
    return Buffer.from(
      expand(data.toString('utf8'), templateContext(t, node), { secret: getter('secrets'), config: getter('configs'), env }),
    );
  } catch (err) {
    throw new Error(`failed to expand templated ${what} ${ref.id}: ${(err as Error).message}`);
  }
}
