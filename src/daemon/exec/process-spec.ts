// The OCI process of an exec: the container's own process spec (as containerd holds it: rlimits,
// seccomp-related noNewPrivileges, oom score, capabilities) with the exec's command, environment,
// working directory, user and terminal put in — the way dockerd derives exec processes.
import { buildEnv, replaceOrAppendEnv } from '../../oci/spec.ts';
import type { OciCapabilities, OciProcess } from '../../oci/spec-types.ts';
import type { ContainerConfig } from '../../types/container-api.ts';

export interface ExecProcessInput {
  args: string[];
  env: string[];
  /** '' → "/". */
  cwd: string;
  tty: boolean;
  consoleSize?: { height: number; width: number } | undefined;
  user: { uid: number; gid: number; additionalGids: number[] };
  privileged: boolean;
  /** What a privileged exec gets: every capability the daemon holds. */
  allCapabilities: string[];
}

/** The exec environment: the container's (PATH, HOSTNAME, TERM with the exec's TTY, its Env), then the exec's Env. */
export function execEnv(container: ContainerConfig, tty: boolean, env: string[]): string[] {
  return replaceOrAppendEnv(buildEnv({ ...container, Tty: tty }), env);
}

export function buildExecProcess(base: OciProcess, x: ExecProcessInput): OciProcess {
  const caps = x.privileged ? x.allCapabilities : (base.capabilities?.bounding ?? []);
  const p: OciProcess = {
    ...structuredClone(base),
    terminal: x.tty,
    args: [...x.args],
    env: [...x.env],
    cwd: x.cwd || '/',
    user: { uid: x.user.uid, gid: x.user.gid, additionalGids: [...x.user.additionalGids] },
    capabilities: capabilitySets(caps, x.user.uid),
  };
  delete p.consoleSize;
  if (x.tty && x.consoleSize && x.consoleSize.height > 0 && x.consoleSize.width > 0) p.consoleSize = { ...x.consoleSize };
  // No AppArmor on this host (the container spec never carries a profile either).
  delete p.apparmorProfile;
  return p;
}

/**
 * The container's process from its config.json text: rlimit values are read as exact bigints
 * (RLIM_INFINITY does not fit a JS number).
 */
export function parseContainerProcess(specJson: string): OciProcess {
  const spec = JSON.parse(specJson, (key, value, ctx?: { source?: string }) =>
    (key === 'hard' || key === 'soft') && typeof value === 'number' && ctx?.source ? BigInt(ctx.source) : value,
  ) as { process?: OciProcess };
  if (!spec.process) throw new Error('the container spec has no process');
  return spec.process;
}

/** The process as JSON for Tasks.Exec, bigints written as exact integers. */
export function serializeProcess(p: OciProcess): string {
  const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;
  return JSON.stringify(p, (_key, value) => (typeof value === 'bigint' ? rawJSON(value.toString()) : value));
}

/** As for the container's own process: root holds the capabilities in every set, others only the bounding set. */
function capabilitySets(caps: string[], uid: number): OciCapabilities {
  if (uid === 0) return { bounding: [...caps], effective: [...caps], permitted: [...caps] };
  return { bounding: [...caps] };
}
