// A service's registry credentials and image pinning, as dockerd keeps them: the X-Registry-Auth of
// a create/update is stored in the spec as swarmkit's ContainerSpec.PullOptions.RegistryAuth (so a
// task carries it to its node, whose agent pulls with it) and never shown in a view; an update
// without one keeps the spec's (registryAuthFrom spec) or the previous spec's. Pure.
import { invalidParameter } from '../../errors.ts';
import type { ClusterObject } from '../../types/cluster.ts';
import { familiarString, parseReference } from '../../util/image-reference.ts';

const obj = (v: unknown): ClusterObject => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as ClusterObject) : {});

const containerSpec = (spec: ClusterObject | undefined): ClusterObject | undefined => {
  const cs = obj(obj(spec?.TaskTemplate).ContainerSpec);
  return Object.keys(cs).length ? cs : undefined;
};

/** The stored RegistryAuth of a spec (or of a task's spec, a TaskTemplate). */
export function pullAuthOf(spec: ClusterObject | undefined): string | undefined {
  const a = obj(containerSpec(spec)?.PullOptions).RegistryAuth;
  return typeof a === 'string' && a ? a : undefined;
}

export function taskPullAuth(taskSpec: ClusterObject): string | undefined {
  const a = obj(obj(taskSpec.ContainerSpec).PullOptions).RegistryAuth;
  return typeof a === 'string' && a ? a : undefined;
}

/** Drops PullOptions a client sent (it is not part of the API's ContainerSpec: dockerd ignores it). */
export function dropClientPullOptions(body: ClusterObject): void {
  const cs = containerSpec(body);
  if (cs) delete cs.PullOptions;
}

/** Sets (or clears) the credentials of a checked spec. */
export function setPullAuth(spec: ClusterObject, auth: string | undefined): void {
  const cs = containerSpec(spec);
  if (!cs) return;
  if (auth) cs.PullOptions = { RegistryAuth: auth };
  else delete cs.PullOptions;
}

/**
 * The credentials an update keeps (dockerd's UpdateService): the request's X-Registry-Auth, else
 * those of the current spec (registryAuthFrom "spec" or empty) or of the previous one.
 */
export function updatedPullAuth(
  given: string | undefined,
  from: string | undefined,
  cur: { Spec: ClusterObject; PreviousSpec?: ClusterObject },
): string | undefined {
  if (given) return given;
  if (from === 'previous-spec') {
    if (!cur.PreviousSpec) throw invalidParameter('service does not have a previous spec');
    return pullAuthOf(cur.PreviousSpec);
  }
  return pullAuthOf(cur.Spec);
}

/** A copy of a spec (service spec or TaskTemplate) without the credentials, for the API's views. */
export function withoutPullOptions<T extends ClusterObject | undefined>(spec: T): T {
  if (!spec) return spec;
  const tt = spec.TaskTemplate !== undefined ? obj(spec.TaskTemplate) : spec;
  const cs = obj(tt.ContainerSpec);
  if (cs.PullOptions === undefined) return spec;
  const { PullOptions: _hidden, ...rest } = cs;
  const tt2 = { ...tt, ContainerSpec: rest };
  return (spec.TaskTemplate !== undefined ? { ...spec, TaskTemplate: tt2 } : tt2) as T;
}

/** dockerd's warning when an image could not be pinned to a digest. */
export function digestWarning(image: string): string {
  return `image ${image} could not be accessed on a registry to record\nits digest. Each node will access ${image} independently,\npossibly leading to different nodes running different\nversions of the image.\n`;
}

/**
 * What dockerd's imageWithDigestString gives for a reference and the digest its tag resolves to:
 * the familiar form with the tag kept (`busybox:latest@sha256:…`). A reference that already has a
 * digest is not resolved (null: keep it as given).
 */
export function pinnedReference(image: string): { ref: string; pinned: (digest: string) => string } | null {
  const ref = parseReference(image);
  if (ref.digest) return null;
  return { ref: familiarString(ref), pinned: (digest) => familiarString({ ...ref, digest }) };
}
