// The Dockerfile instructions `docker commit --change` and `docker import --change` accept, applied
// to an image's runtime config: CMD ENTRYPOINT ENV EXPOSE HEALTHCHECK LABEL ONBUILD STOPSIGNAL USER
// VOLUME WORKDIR. Word splitting, quoting and $VAR expansion follow the Dockerfile rules closely
// enough for one-line instructions.
import { posix } from 'node:path';
import { invalidParameter } from '../errors.ts';
import type { OciImageConfig } from './image-store.ts';

export type RuntimeConfig = NonNullable<OciImageConfig['config']>;

const VALID = new Set(['CMD', 'ENTRYPOINT', 'ENV', 'EXPOSE', 'HEALTHCHECK', 'LABEL', 'ONBUILD', 'STOPSIGNAL', 'USER', 'VOLUME', 'WORKDIR']);

function envLookup(env: string[] | undefined, name: string): string {
  for (let i = (env ?? []).length - 1; i >= 0; i--) {
    const e = env![i]!;
    if (e.startsWith(`${name}=`)) return e.slice(name.length + 1);
  }
  return '';
}

/**
 * Splits on unquoted whitespace; removes quotes, honours backslash escapes, and (when env is given)
 * expands $NAME and ${NAME} outside single quotes.
 */
export function splitWords(s: string, env?: string[]): string[] {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
      else cur += c;
      continue;
    }
    if (c === '\\' && i + 1 < s.length) {
      const n = s[i + 1]!;
      if (quote === '"' && !['"', '\\', '$'].includes(n)) cur += c;
      else {
        cur += n;
        i++;
        inWord = true;
        continue;
      }
      inWord = true;
      continue;
    }
    if (c === '$' && env) {
      const m = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/.exec(s.slice(i));
      if (m) {
        cur += envLookup(env, (m[1] ?? m[2])!);
        i += m[0].length - 1;
        inWord = true;
        continue;
      }
    }
    if (quote === '"') {
      if (c === '"') quote = null;
      else cur += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
      continue;
    }
    if (/\s/.test(c)) {
      if (inWord) words.push(cur);
      cur = '';
      inWord = false;
      continue;
    }
    cur += c;
    inWord = true;
  }
  if (quote) throw invalidParameter(`unmatched quote in ${JSON.stringify(s)}`);
  if (inWord) words.push(cur);
  return words;
}

/** JSON exec form (["a","b"]) if it parses as a string array, else null. */
function jsonArray(rest: string): string[] | null {
  if (!rest.startsWith('[')) return null;
  try {
    const v = JSON.parse(rest) as unknown;
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  } catch {
    // not JSON (a SyntaxError): the shell form after all
  }
  return null;
}

function commandForm(rest: string): string[] {
  return jsonArray(rest) ?? ['/bin/sh', '-c', rest];
}

/** key=value pairs, or the legacy "key value" form with a single pair. */
function keyValues(instr: string, rest: string, env: string[] | undefined): Array<[string, string]> {
  const words = splitWords(rest, env);
  if (!words.length) throw invalidParameter(`${instr} requires at least one argument`);
  if (!words[0]!.includes('=')) {
    const m = /^(\S+)\s+([\s\S]*)$/.exec(rest.trim());
    if (!m) throw invalidParameter(`${instr} must have two arguments`);
    return [[m[1]!, splitWords(m[2]!, env).join(' ')]];
  }
  return words.map((w) => {
    const eq = w.indexOf('=');
    if (eq <= 0) throw invalidParameter(`${instr} names can not be blank`);
    return [w.slice(0, eq), w.slice(eq + 1)];
  });
}

function exposedPorts(words: string[]): string[] {
  const out: string[] = [];
  for (const w of words) {
    const m = /^(\d+)(?:-(\d+))?(?:\/(tcp|udp|sctp))?$/i.exec(w);
    if (!m) throw invalidParameter(`invalid containerPort: ${w}`);
    const lo = Number(m[1]);
    const hi = m[2] ? Number(m[2]) : lo;
    if (hi < lo || hi > 65535) throw invalidParameter(`invalid port range: ${w}`);
    for (let p = lo; p <= hi; p++) out.push(`${p}/${(m[3] ?? 'tcp').toLowerCase()}`);
  }
  return out;
}

function durationNs(flag: string, v: string): number {
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g;
  const unit: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
  let total = 0;
  let seen = '';
  let m: RegExpExecArray | null;
  while ((m = re.exec(v))) {
    total += Number(m[1]) * unit[m[2]!]!;
    seen += m[0];
  }
  if (seen !== v || !v) throw invalidParameter(`invalid value for ${flag}: ${JSON.stringify(v)}`);
  return Math.round(total);
}

function healthcheck(rest: string): Record<string, unknown> {
  let s = rest.trim();
  if (/^NONE$/i.test(s)) return { Test: ['NONE'] };
  const hc: Record<string, unknown> = {};
  for (;;) {
    const m = /^--(interval|timeout|start-period|start-interval|retries)=(\S+)\s+/.exec(s);
    if (!m) break;
    if (m[1] === 'retries') {
      const n = Number(m[2]);
      if (!Number.isInteger(n) || n < 0) throw invalidParameter(`invalid value for --retries: ${m[2]}`);
      hc.Retries = n;
    } else {
      const key = { interval: 'Interval', timeout: 'Timeout', 'start-period': 'StartPeriod', 'start-interval': 'StartInterval' }[m[1]!]!;
      hc[key] = durationNs(`--${m[1]}`, m[2]!);
    }
    s = s.slice(m[0].length);
  }
  const cmd = /^CMD\s+([\s\S]+)$/i.exec(s);
  if (!cmd) throw invalidParameter('Unknown type for HEALTHCHECK: expected CMD or NONE');
  const exec = jsonArray(cmd[1]!.trim());
  hc.Test = exec ? ['CMD', ...exec] : ['CMD-SHELL', cmd[1]!.trim()];
  return hc;
}

/** Applies the instructions in order to a copy of `base` (`base` itself when there are none). Unknown instructions are a 400. */
export function applyChanges(base: RuntimeConfig, changes: string[]): RuntimeConfig {
  // Nothing to apply, nothing to copy: a clone of a config with 50 000 labels took ~80 ms.
  if (changes.length === 0) return base;
  const cfg: RuntimeConfig = structuredClone(base);
  let cmdSet = false;
  for (const raw of changes) {
    const line = raw.replace(/\\\r?\n/g, ' ').trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^(\S+)\s*([\s\S]*)$/.exec(line)!;
    const instr = m[1]!.toUpperCase();
    const rest = m[2]!.trim();
    if (!VALID.has(instr)) throw invalidParameter(`${m[1]!.toLowerCase()} is not a valid change command`);
    switch (instr) {
      case 'CMD':
        cfg.Cmd = commandForm(rest);
        cmdSet = true;
        break;
      case 'ENTRYPOINT':
        cfg.Entrypoint = jsonArray(rest) ?? (rest === '' ? [] : ['/bin/sh', '-c', rest]);
        if (!cmdSet) cfg.Cmd = null; // an ENTRYPOINT discards an inherited CMD, as in a Dockerfile
        break;
      case 'ENV': {
        const env = [...(cfg.Env ?? [])];
        for (const [k, v] of keyValues(instr, rest, env)) {
          const i = env.findIndex((e) => e === k || e.startsWith(`${k}=`));
          if (i >= 0) env[i] = `${k}=${v}`;
          else env.push(`${k}=${v}`);
        }
        cfg.Env = env;
        break;
      }
      case 'LABEL':
        cfg.Labels = { ...(cfg.Labels ?? {}) };
        for (const [k, v] of keyValues(instr, rest, cfg.Env)) cfg.Labels[k] = v;
        break;
      case 'EXPOSE': {
        const ports = exposedPorts(splitWords(rest, cfg.Env));
        cfg.ExposedPorts = { ...(cfg.ExposedPorts ?? {}) };
        for (const p of ports) cfg.ExposedPorts[p] = {};
        break;
      }
      case 'USER':
        if (!rest) throw invalidParameter('USER requires exactly one argument');
        cfg.User = splitWords(rest, cfg.Env).join(' ');
        break;
      case 'WORKDIR': {
        const dir = splitWords(rest, cfg.Env).join(' ');
        if (!dir) throw invalidParameter('WORKDIR requires exactly one argument');
        cfg.WorkingDir = posix.normalize(posix.isAbsolute(dir) ? dir : posix.join('/', cfg.WorkingDir || '/', dir));
        break;
      }
      case 'VOLUME': {
        const vols = jsonArray(rest) ?? splitWords(rest, cfg.Env);
        if (!vols.length || vols.some((v) => !v.trim())) throw invalidParameter('VOLUME specified can not be an empty string');
        cfg.Volumes = { ...(cfg.Volumes ?? {}) };
        for (const v of vols) cfg.Volumes[v] = {};
        break;
      }
      case 'STOPSIGNAL':
        if (!rest) throw invalidParameter('STOPSIGNAL requires exactly one argument');
        cfg.StopSignal = splitWords(rest, cfg.Env).join(' ');
        break;
      case 'ONBUILD': {
        const trigger = /^(\S+)\s*([\s\S]*)$/.exec(rest);
        if (!trigger) throw invalidParameter('ONBUILD requires at least one argument');
        const t = trigger[1]!.toUpperCase();
        if (t === 'ONBUILD') throw invalidParameter("Chaining ONBUILD via `ONBUILD ONBUILD` isn't allowed");
        if (t === 'MAINTAINER' || t === 'FROM') throw invalidParameter(`${t} isn't allowed as an ONBUILD trigger`);
        cfg.OnBuild = [...(cfg.OnBuild ?? []), `${t} ${trigger[2]}`.trim()];
        break;
      }
      case 'HEALTHCHECK':
        cfg.Healthcheck = healthcheck(rest);
        break;
    }
  }
  return cfg;
}
