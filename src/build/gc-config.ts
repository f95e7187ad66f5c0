// builder.gc of daemon.json (checked at load by config/file.ts) as prune policies: `enabled`
// (default true), `defaultKeepStorage` (a size or a percentage of the data disk; dockerd's default
// is 10%), and `policy` entries ({keepStorage, all, filter: ["unused-for=2200h"]}). Without
// policies, one keeps defaultKeepStorage of cache, least recently used going first.
import { statfsSync } from 'node:fs';
import { parseSize } from '../config/values.ts';
import type { GcPolicy } from './prune.ts';

export interface GcSettings {
  enabled: boolean;
  policies: GcPolicy[];
}

function size(text: unknown, diskPath: string, fallback: number): number {
  if (typeof text !== 'string' || !text.trim()) return fallback;
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(text.trim());
  if (pct) {
    const st = statfsSync(diskPath);
    return Math.floor((Number(pct[1]) / 100) * st.blocks * st.bsize);
  }
  return parseSize(text);
}

function filters(value: unknown): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (k: string, v: string) => {
    // unused-for=D is prune's until=D (cache not used for D).
    const key = k === 'unused-for' || k === 'unused_for' ? 'until' : k;
    out.set(key, [...(out.get(key) ?? []), v]);
  };
  if (Array.isArray(value)) {
    for (const f of value as string[]) {
      const eq = f.indexOf('=');
      if (eq > 0) add(f.slice(0, eq).trim().toLowerCase(), f.slice(eq + 1).trim());
    }
  } else if (value && typeof value === 'object') {
    for (const [k, vs] of Object.entries(value as Record<string, Record<string, boolean>>)) for (const v of Object.keys(vs ?? {})) add(k.toLowerCase(), v);
  }
  return out;
}

export function gcSettings(builder: Record<string, unknown> | undefined, diskPath: string): GcSettings {
  const gc = (builder?.gc ?? {}) as Record<string, unknown>;
  const enabled = gc.enabled !== false;
  const defaultKeep = size(gc.defaultKeepStorage ?? gc.defaultReservedSpace, diskPath, size('10%', diskPath, 20e9));
  const raw = Array.isArray(gc.policy) ? (gc.policy as Array<Record<string, unknown>>) : [];
  const policies = raw.length
    ? raw.map((p) => ({ all: p.all === true, keepStorage: size(p.keepStorage ?? p.reservedSpace, diskPath, defaultKeep), filters: filters(p.filter) }))
    : [{ all: true, keepStorage: defaultKeep, filters: new Map<string, string[]>() }];
  return { enabled, policies };
}
