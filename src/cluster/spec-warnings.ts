// What a service spec asks for that this engine accepts but does not apply yet: returned as the
// `Warnings` of service create and update (the docker CLI prints them), never silently ignored.
import type { ClusterObject } from '../types/cluster.ts';

const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const set = (v: unknown): boolean => (typeof v === 'number' ? v !== 0 : Array.isArray(v) ? v.length > 0 : v !== undefined && v !== null);

export function notAppliedWarnings(spec: ClusterObject): string[] {
  const tt = obj(spec.TaskTemplate);
  const out: string[] = [];
  if (set(obj(tt.RestartPolicy).Window)) out.push('RestartPolicy.Window is accepted but not applied by this engine yet');
  for (const k of ['UpdateConfig', 'RollbackConfig'] as const) {
    if (set(obj(spec[k]).MaxFailureRatio))
      out.push(`${k}.MaxFailureRatio is accepted but not applied by this engine yet: any task failure triggers the FailureAction`);
  }
  if (set(obj(tt.Placement).Preferences)) out.push('Placement.Preferences (spread) are accepted but not applied by this engine yet');
  const r = obj(obj(tt.Resources).Reservations);
  if (set(r.NanoCPUs) || set(r.MemoryBytes) || set(r.GenericResources))
    out.push('Resources.Reservations are accepted but not scheduled against node capacity by this engine yet');
  return out;
}
