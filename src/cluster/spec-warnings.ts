// What a service spec asks for that this engine accepts but does not apply yet: returned as the
// `Warnings` of service create and update (the docker CLI prints them), never silently ignored.
// (Placement preferences, reservations, generic resources, RestartPolicy.Window and
// MaxFailureRatio are applied by the scheduler and orchestrator, so they are not named here.)
import type { ClusterObject } from '../types/cluster.ts';

const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const set = (v: unknown): boolean =>
  typeof v === 'number'
    ? v !== 0
    : Array.isArray(v)
      ? v.length > 0
      : typeof v === 'object' && v !== null
        ? Object.values(v).some(set)
        : v !== undefined && v !== null && v !== '' && v !== false;

export function notAppliedWarnings(spec: ClusterObject): string[] {
  const cs = obj(obj(spec.TaskTemplate).ContainerSpec);
  const out: string[] = [];
  // Credential specs, SELinux labels, seccomp/AppArmor modes and no-new-privileges of a task.
  if (set(cs.Privileges)) out.push('ContainerSpec.Privileges are accepted but not applied to task containers by this engine yet');
  return out;
}
