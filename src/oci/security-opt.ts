// HostConfig.SecurityOpt parsing (same keys and error wording as dockerd). AppArmor and SELinux
// labels are accepted but this daemon applies neither; the spec builder reports them as warnings.

import { invalidParameter } from '../errors.ts';
import type { DockerSeccompProfile } from './seccomp.ts';
import { parseSeccompProfile } from './seccomp.ts';

export interface SecurityOptions {
  /** undefined: the daemon default applies. */
  noNewPrivileges?: boolean;
  /** undefined: the daemon's profile applies. */
  seccomp?: 'unconfined' | 'builtin' | DockerSeccompProfile;
  apparmor?: string;
  /** `label=…` values and the bare `disable`. */
  labels: string[];
  writableCgroups?: boolean;
}

function parseBool(v: string): boolean | undefined {
  const t = v.toLowerCase();
  if (['1', 't', 'true'].includes(t)) return true;
  if (['0', 'f', 'false'].includes(t)) return false;
  return undefined;
}

export function parseSecurityOpt(opts: readonly string[] | undefined): SecurityOptions {
  const out: SecurityOptions = { labels: [] };
  for (const opt of opts ?? []) {
    if (opt === 'no-new-privileges') {
      out.noNewPrivileges = true;
      continue;
    }
    if (opt === 'disable') {
      out.labels.push('disable');
      continue;
    }
    // "=" is the separator; ":" is the deprecated one (still accepted by dockerd).
    const sep = opt.includes('=') ? '=' : opt.includes(':') ? ':' : '';
    if (!sep) throw invalidParameter(`invalid --security-opt 1: ${JSON.stringify(opt)}`);
    const k = opt.slice(0, opt.indexOf(sep));
    const v = opt.slice(opt.indexOf(sep) + 1);
    switch (k) {
      case 'label':
        out.labels.push(v);
        break;
      case 'apparmor':
        out.apparmor = v;
        break;
      case 'seccomp':
        if (v === 'unconfined' || v === 'builtin') out.seccomp = v;
        else out.seccomp = parseSeccompProfile(v);
        break;
      case 'no-new-privileges': {
        const b = parseBool(v);
        if (b === undefined) throw invalidParameter(`invalid --security-opt 2: ${JSON.stringify(opt)}`);
        out.noNewPrivileges = b;
        break;
      }
      case 'writable-cgroups': {
        const b = parseBool(v);
        if (b === undefined) throw invalidParameter(`invalid --security-opt 2: ${JSON.stringify(opt)}`);
        out.writableCgroups = b;
        break;
      }
      default:
        throw invalidParameter(`invalid --security-opt 2: ${JSON.stringify(opt)}`);
    }
  }
  return out;
}

/** Warnings for options that were accepted but have no effect here. */
export function securityOptWarnings(opts: SecurityOptions): string[] {
  const w: string[] = [];
  if (opts.apparmor && opts.apparmor !== 'unconfined') {
    w.push(`AppArmor profile ${JSON.stringify(opts.apparmor)} was not applied: this daemon does not support AppArmor`);
  }
  const labels = opts.labels.filter((l) => l !== 'disable' && l !== 'label=disable');
  if (labels.length > 0) w.push(`SELinux label options ${JSON.stringify(labels)} were not applied: this daemon does not support SELinux`);
  return w;
}
