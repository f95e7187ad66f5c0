// What a service spec asks for that this engine accepts but does not apply: returned as the
// `Warnings` of service create and update (the docker CLI prints them), never silently ignored.
// (Placement preferences, reservations, generic resources, RestartPolicy.Window and
// MaxFailureRatio are applied by the scheduler and orchestrator; Privileges by container-body.ts
// through privileges.ts, which names the parts a Linux node of this engine cannot apply.)
import type { ClusterObject } from '../../types/cluster.ts';
import { privilegeWarnings } from '../agent/privileges.ts';

export function notAppliedWarnings(spec: ClusterObject): string[] {
  return privilegeWarnings(spec);
}
