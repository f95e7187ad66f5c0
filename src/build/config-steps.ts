// The instructions that only change the image config (ENV, LABEL, EXPOSE, USER, VOLUME, CMD,
// ENTRYPOINT, SHELL, STOPSIGNAL, HEALTHCHECK, ONBUILD, MAINTAINER, ARG), applied to a runtime config,
// with the history comment the classic builder records for each (`#(nop)  ENV a=b`; Go's %q form
// for CMD/ENTRYPOINT/VOLUME). Instructions arrive already expanded.
import { invalidParameter } from '../errors.ts';
import type { Instruction } from './dockerfile/types.ts';
import type { RuntimeConfig } from './image-writer.ts';

export const DEFAULT_SHELL = ['/bin/sh', '-c'];

/** Go's %q of a []string: `["a" "b"]`. */
export function goQuoteList(list: readonly string[]): string {
  return `[${list.map((s) => JSON.stringify(s)).join(' ')}]`;
}

/** The history text of a config-only step (`/bin/sh -c #(nop)  CMD ["sh"]`). */
export function nopCreatedBy(shell: readonly string[], comment: string): string {
  return [...shell, '#(nop) ', comment].join(' ');
}

const envName = (kv: string) => (kv.includes('=') ? kv.slice(0, kv.indexOf('=')) : kv);

export function setEnv(env: string[], name: string, value: string): string[] {
  const out = [...env];
  const i = out.findIndex((e) => envName(e) === name);
  if (i >= 0) out[i] = `${name}=${value}`;
  else out.push(`${name}=${value}`);
  return out;
}

/** Shell form → SHELL + text; exec form as given. */
export function commandOf(cmd: { shellForm: boolean; command: string[] }, shell: readonly string[]): string[] {
  return cmd.shellForm ? [...shell, cmd.command.join(' ')] : [...cmd.command];
}

/** EXPOSE values as dockerd stores them: `80/tcp`, ranges expanded. */
export function exposedPorts(ports: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of ports) {
    const m = /^(?:(?:\[[^\]]*\]|[^:]*):)?(\d+)(?:-(\d+))?(?:\/(tcp|udp|sctp))?$/i.exec(raw.trim());
    if (!m) throw invalidParameter(`invalid containerPort: ${raw}`);
    const start = Number(m[1]);
    const end = m[2] ? Number(m[2]) : start;
    if (start < 1 || end > 65535 || end < start) throw invalidParameter(`invalid containerPort: ${raw}`);
    const proto = (m[3] ?? 'tcp').toLowerCase();
    for (let p = start; p <= end; p++) out.push(`${p}/${proto}`);
  }
  return out;
}

/**
 * Applies a config-only instruction to `cfg` (mutated) and returns the comment for the history,
 * or null when the instruction is not a config-only one.
 */
export function applyConfigStep(cfg: RuntimeConfig, inst: Instruction): string | null {
  const shell = cfg.Shell?.length ? cfg.Shell : DEFAULT_SHELL;
  switch (inst.kind) {
    case 'ENV': {
      let env = cfg.Env ?? [];
      for (const [k, v] of inst.pairs) env = setEnv(env, k, v);
      cfg.Env = env;
      return `ENV ${inst.pairs.map(([k, v]) => `${k}=${v}`).join(' ')}`;
    }
    case 'LABEL': {
      cfg.Labels = { ...(cfg.Labels ?? {}) };
      for (const [k, v] of inst.pairs) cfg.Labels[k] = v;
      return `LABEL ${inst.pairs.map(([k, v]) => `${k}=${v}`).join(' ')}`;
    }
    case 'MAINTAINER':
      return `MAINTAINER ${inst.maintainer}`;
    case 'EXPOSE': {
      const ports = exposedPorts(inst.ports).sort(); // dockerd sorts the list it records
      cfg.ExposedPorts = { ...(cfg.ExposedPorts ?? {}) };
      for (const p of ports) cfg.ExposedPorts[p] = {};
      return `EXPOSE ${ports.join(' ')}`;
    }
    case 'USER':
      cfg.User = inst.user;
      return `USER ${inst.user}`;
    case 'VOLUME': {
      cfg.Volumes = { ...(cfg.Volumes ?? {}) };
      for (const v of inst.paths) {
        if (!v.trim()) throw invalidParameter('VOLUME specified can not be an empty string');
        cfg.Volumes[v] = {};
      }
      return `VOLUME ${goQuoteList(inst.paths)}`;
    }
    case 'CMD':
      cfg.Cmd = commandOf(inst, shell);
      return `CMD ${goQuoteList(cfg.Cmd)}`;
    case 'ENTRYPOINT':
      cfg.Entrypoint = commandOf(inst, shell);
      // dockerd: an ENTRYPOINT resets a CMD inherited from the base image (not one set in this stage).
      return `ENTRYPOINT ${goQuoteList(cfg.Entrypoint)}`;
    case 'SHELL':
      cfg.Shell = [...inst.shell];
      return `SHELL ${goQuoteList(inst.shell)}`;
    case 'STOPSIGNAL':
      cfg.StopSignal = inst.signal;
      return `STOPSIGNAL ${inst.signal}`;
    case 'HEALTHCHECK': {
      const h = inst.health;
      if (h.Test?.[0] === 'NONE') cfg.Healthcheck = { Test: ['NONE'] };
      else {
        const old = (cfg.Healthcheck ?? {}) as Record<string, unknown>;
        const merged: Record<string, unknown> = { Test: h.Test };
        for (const k of ['Interval', 'Timeout', 'StartPeriod', 'StartInterval', 'Retries'] as const) {
          const v = h[k] || (old.Test && (old.Test as string[])[0] !== 'NONE' ? old[k] : undefined);
          if (v) merged[k] = v;
        }
        cfg.Healthcheck = merged;
      }
      return `HEALTHCHECK ${healthText(cfg.Healthcheck as Record<string, unknown>)}`;
    }
    case 'ONBUILD':
      cfg.OnBuild = [...(cfg.OnBuild ?? []), inst.trigger];
      return `ONBUILD ${inst.trigger}`;
    default:
      return null;
  }
}

/** Roughly Go's %q of the health config: `&{["CMD-SHELL" "true"] "30s" "0s" "0s" "0s" '\x00'}`. */
function healthText(h: Record<string, unknown>): string {
  const d = (ns: unknown) => `"${Number(ns ?? 0) / 1e9}s"`;
  return `&{${goQuoteList((h.Test as string[]) ?? [])} ${d(h.Interval)} ${d(h.Timeout)} ${d(h.StartPeriod)} ${d(h.StartInterval)} '\\x${Number(h.Retries ?? 0).toString(16).padStart(2, '0')}'}`;
}
