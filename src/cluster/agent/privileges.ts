// TaskTemplate.ContainerSpec.Privileges: the checks of a spec sent to create or update, and the
// HostConfig.SecurityOpt entries dockerd's executor gives a task's container for them
// (daemon/cluster/executor/container: label=…, seccomp=unconfined|<profile JSON>,
// apparmor=unconfined, no-new-privileges=true, credentialspec=…). Pure.
import { invalidParameter } from '../../errors.ts';
import { parseSeccompProfile } from '../../oci/seccomp.ts';
import type { ClusterObject } from '../../types/cluster.ts';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const obj = (v: unknown): Record<string, unknown> => (isObj(v) ? v : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

const SECCOMP_MODES = ['', 'default', 'unconfined', 'custom'];
const APPARMOR_MODES = ['', 'default', 'disabled'];
const SELINUX_FIELDS = ['User', 'Role', 'Type', 'Level'] as const;

/** The privileges of a container spec (absent or null: none). */
function privilegesOf(cs: Record<string, unknown>): Record<string, unknown> | undefined {
  const p = cs.Privileges;
  if (p === undefined || p === null) return undefined;
  if (!isObj(p)) throw invalidParameter('invalid ContainerSpec.Privileges: must be an object');
  return p;
}

/**
 * Seccomp.Profile is a Go []byte, so JSON carries it base64-encoded; some clients send the profile
 * text itself, which is taken as is (a JSON object never decodes as base64).
 */
export function seccompProfileText(profile: unknown): string {
  if (typeof profile !== 'string' || profile === '') return '';
  if (profile.trimStart().startsWith('{')) return profile;
  return Buffer.from(profile, 'base64').toString('utf8');
}

/**
 * Checks Privileges as dockerd converts them (credential spec: exactly one source, its words), and
 * what dockerd would only find when a task's container is created (an unknown mode, a custom
 * seccomp profile that is not a profile): a 400 here rather than tasks failing on every node.
 */
export function checkPrivileges(cs: Record<string, unknown>): void {
  const p = privilegesOf(cs);
  if (!p) return;
  if (p.NoNewPrivileges !== undefined && p.NoNewPrivileges !== null && typeof p.NoNewPrivileges !== 'boolean')
    throw invalidParameter('invalid Privileges.NoNewPrivileges: must be a boolean');
  if (p.CredentialSpec !== undefined && p.CredentialSpec !== null) {
    const c = obj(p.CredentialSpec);
    const given = (['Config', 'File', 'Registry'] as const).filter((k) => str(c[k]) !== '').map((k) => `"${k.toLowerCase()}"`);
    if (given.length === 0)
      throw invalidParameter('invalid CredentialSpec: must either provide "file", "registry", or "config" for credential spec');
    if (given.length === 2)
      throw invalidParameter(`invalid CredentialSpec: cannot specify both ${given[0]} and ${given[1]} credential specs`);
    if (given.length > 2)
      throw invalidParameter(
        `invalid CredentialSpec: cannot specify both ${given.slice(0, -1).join(', ')}, and ${given.at(-1)} credential specs`,
      );
  }
  if (p.SELinuxContext !== undefined && p.SELinuxContext !== null) {
    const s = p.SELinuxContext;
    if (!isObj(s)) throw invalidParameter('invalid Privileges.SELinuxContext: must be an object');
    for (const k of SELINUX_FIELDS)
      if (s[k] !== undefined && s[k] !== null && typeof s[k] !== 'string')
        throw invalidParameter(`invalid Privileges.SELinuxContext.${k}: must be a string`);
  }
  if (p.Seccomp !== undefined && p.Seccomp !== null) {
    const s = obj(p.Seccomp);
    const mode = s.Mode ?? '';
    if (typeof mode !== 'string' || !SECCOMP_MODES.includes(mode))
      throw invalidParameter(`invalid Privileges.Seccomp.Mode ${JSON.stringify(mode)}: must be "default", "unconfined" or "custom"`);
    if (s.Profile !== undefined && s.Profile !== null && typeof s.Profile !== 'string')
      throw invalidParameter('invalid Privileges.Seccomp.Profile: must be a base64 string');
    if (mode === 'custom') {
      const text = seccompProfileText(s.Profile);
      if (!text) throw invalidParameter('invalid Privileges.Seccomp: mode "custom" needs a Profile');
      parseSeccompProfile(text);
    }
  }
  if (p.AppArmor !== undefined && p.AppArmor !== null) {
    const mode = obj(p.AppArmor).Mode ?? '';
    if (typeof mode !== 'string' || !APPARMOR_MODES.includes(mode))
      throw invalidParameter(`invalid Privileges.AppArmor.Mode ${JSON.stringify(mode)}: must be "default" or "disabled"`);
  }
}

/** The SecurityOpt entries of a task's container, in dockerd's executor's order. */
export function privilegeSecurityOpts(cs: Record<string, unknown>): string[] {
  const p = isObj(cs.Privileges) ? cs.Privileges : undefined;
  if (!p) return [];
  const out: string[] = [];
  const c = obj(p.CredentialSpec);
  // Windows-only: on Linux dockerd's container create refuses the option, so the task fails (as here).
  if (str(c.Config)) out.push(`credentialspec=config://${str(c.Config)}`);
  else if (str(c.File)) out.push(`credentialspec=file://${str(c.File)}`);
  else if (str(c.Registry)) out.push(`credentialspec=registry://${str(c.Registry)}`);
  const se = obj(p.SELinuxContext);
  if (se.Disable === true) out.push('label=disable');
  for (const k of SELINUX_FIELDS) if (str(se[k])) out.push(`label=${k.toLowerCase()}:${str(se[k])}`);
  const sc = obj(p.Seccomp);
  if (sc.Mode === 'unconfined') out.push('seccomp=unconfined');
  else if (sc.Mode === 'custom') out.push(`seccomp=${seccompProfileText(sc.Profile)}`);
  if (obj(p.AppArmor).Mode === 'disabled') out.push('apparmor=unconfined');
  if (p.NoNewPrivileges === true) out.push('no-new-privileges=true');
  return out;
}

/** What of Privileges this engine cannot apply on a Linux node: named in create/update Warnings. */
export function privilegeWarnings(spec: ClusterObject): string[] {
  const p = obj(obj(obj(spec.TaskTemplate).ContainerSpec).Privileges);
  const out: string[] = [];
  const c = obj(p.CredentialSpec);
  if (str(c.Config) || str(c.File) || str(c.Registry))
    out.push('Privileges.CredentialSpec is for Windows containers: tasks on Linux nodes fail to start, as with dockerd');
  const se = obj(p.SELinuxContext);
  const labels = SELINUX_FIELDS.filter((k) => str(se[k]));
  if (labels.length)
    out.push(
      `Privileges.SELinuxContext ${labels.join(', ')} are passed to task containers as label options, but this engine does not apply SELinux labels`,
    );
  return out;
}
