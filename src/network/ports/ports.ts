// Port publishing: which container ports are exposed and published (PortBindings, PublishAllPorts
// over ExposedPorts), and which host ports they get (fixed, from a range, or ephemeral), with the
// daemon-wide record of host ports in use so two containers never get the same one.
import { readFileSync } from 'node:fs';
import { invalidParameter } from '../../errors.ts';
import type { HostConfig } from '../../types/container-api.ts';

export type Proto = 'tcp' | 'udp' | 'sctp';

export interface ExposedPort {
  proto: Proto;
  port: number;
}

export interface RequestedBinding extends ExposedPort {
  /** As given ('' when not), normalised: no brackets. */
  hostIp: string;
  /** 0 for an ephemeral port. */
  hostPortLo: number;
  hostPortHi: number;
}

export interface PublishedPort {
  proto: Proto;
  containerPort: number;
  hostIp: string;
  hostPort: number;
}

export function parsePortKey(key: string): ExposedPort {
  const m = /^(\d+)(?:\/(tcp|udp|sctp))?$/i.exec(key);
  const port = m ? Number(m[1]) : 0;
  if (!m || port < 1 || port > 65535) throw invalidParameter(`invalid port specification: ${JSON.stringify(key)}`);
  return { port, proto: (m[2]?.toLowerCase() ?? 'tcp') as Proto };
}

export function portKey(p: ExposedPort): string {
  return `${p.port}/${p.proto}`;
}

/** dockerd's order: by port number, then protocol. */
function byPort(a: ExposedPort, b: ExposedPort): number {
  return a.port - b.port || a.proto.localeCompare(b.proto);
}

/** Exposed ports (ExposedPorts plus every key of PortBindings) and the bindings asked for. */
export function requestedPorts(
  hc: HostConfig,
  exposedPorts: Record<string, unknown> | undefined,
): { exposed: ExposedPort[]; bindings: RequestedBinding[] } {
  const seen = new Map<string, ExposedPort>();
  for (const key of [...Object.keys(exposedPorts ?? {}), ...Object.keys(hc.PortBindings ?? {})]) {
    const p = parsePortKey(key);
    seen.set(portKey(p), p);
  }
  const exposed = [...seen.values()].sort(byPort);
  const bindings: RequestedBinding[] = [];
  const byKey = new Map<string, Array<{ HostIp?: string; HostPort?: string }>>();
  for (const [k, v] of Object.entries(hc.PortBindings ?? {})) {
    const key = portKey(parsePortKey(k));
    byKey.set(key, [...(byKey.get(key) ?? []), ...(v ?? [])]);
  }
  for (const p of exposed) {
    const list = byKey.get(portKey(p)) ?? [];
    for (const b of list) {
      const { lo, hi } = parseHostPort(b.HostPort ?? '');
      bindings.push({ ...p, hostIp: (b.HostIp ?? '').replace(/^\[|\]$/g, ''), hostPortLo: lo, hostPortHi: hi });
    }
    if (hc.PublishAllPorts && list.length === 0) bindings.push({ ...p, hostIp: '', hostPortLo: 0, hostPortHi: 0 });
  }
  return { exposed, bindings };
}

function parseHostPort(text: string): { lo: number; hi: number } {
  if (text === '') return { lo: 0, hi: 0 };
  const m = /^(\d+)(?:-(\d+))?$/.exec(text);
  const lo = m ? Number(m[1]) : -1;
  const hi = m?.[2] !== undefined ? Number(m[2]) : lo;
  if (!m || lo > 65535 || hi > 65535 || hi < lo) throw invalidParameter(`invalid port specification: ${JSON.stringify(text)}`);
  return { lo, hi };
}

export function ephemeralRange(text = readSafe('/proc/sys/net/ipv4/ip_local_port_range')): { lo: number; hi: number } {
  const [lo, hi] = text.trim().split(/\s+/).map(Number);
  return lo && hi && lo <= hi ? { lo, hi } : { lo: 32768, hi: 60999 };
}

function readSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return ''; // unreadable: the caller falls back to the kernel's default range
  }
}

function wildcard(ip: string): boolean {
  return ip === '0.0.0.0' || ip === '::' || ip === '';
}

/** Host ports handed to containers, per protocol: fixed ones checked, ephemeral ones picked in turn. */
export class PortAllocator {
  private readonly held: Array<PublishedPort & { owner: string }> = [];
  private cursor = 0;

  constructor(private readonly range = ephemeralRange()) {}

  private taken(proto: Proto, ip: string, port: number): boolean {
    return this.held.some((h) => h.proto === proto && h.hostPort === port && (h.hostIp === ip || wildcard(h.hostIp) || wildcard(ip)));
  }

  /**
   * Candidate host ports for a binding, in the order to try them: the fixed port, each port of a
   * range, or ephemeral ports starting after the last one handed out. `tryBind` actually binds
   * (the proxy's listener); a port something else on the host holds is skipped for ranges and
   * ephemeral ports, and an error for a fixed port. `avoid` names ports to pass over in a range or
   * the ephemeral scan.
   */
  async allocate<T>(
    owner: string,
    b: { proto: Proto; hostIp: string; lo: number; hi: number; avoid?: (port: number) => boolean },
    tryBind: (port: number) => Promise<T>,
  ): Promise<{ port: number; handle: T }> {
    const fixed = b.lo !== 0 && b.lo === b.hi;
    const ephemeral = b.lo === 0;
    const lo = ephemeral ? this.range.lo : b.lo;
    const hi = ephemeral ? this.range.hi : b.hi;
    const n = hi - lo + 1;
    const start = ephemeral ? this.cursor % n : 0;
    let lastErr: unknown;
    for (let i = 0; i < n; i++) {
      const port = lo + ((start + i) % n);
      if (this.taken(b.proto, b.hostIp, port)) {
        if (fixed) throw allocatedError(b.hostIp, port);
        continue;
      }
      // A port another daemon forwards (live, or dead with its rules left) would be stolen from
      // under our listener by its DNAT: skipped unless asked for by number.
      if (!fixed && b.avoid?.(port)) continue;
      this.held.push({ proto: b.proto, hostIp: b.hostIp, hostPort: port, containerPort: 0, owner });
      try {
        const handle = await tryBind(port);
        if (ephemeral) this.cursor = start + i + 1;
        return { port, handle };
      } catch (err) {
        this.release(owner, b.proto, b.hostIp, port);
        lastErr = err;
        if (fixed) throw err;
      }
    }
    if (fixed || lastErr === undefined) throw allocatedError(b.hostIp, b.lo || lo);
    throw lastErr;
  }

  /** Marks a port held (endpoints that survived a restart). */
  hold(owner: string, p: PublishedPort): void {
    if (!this.taken(p.proto, p.hostIp, p.hostPort)) this.held.push({ ...p, owner });
  }

  release(owner: string, proto: Proto, hostIp: string, port: number): void {
    const i = this.held.findIndex((h) => h.owner === owner && h.proto === proto && h.hostIp === hostIp && h.hostPort === port);
    if (i >= 0) this.held.splice(i, 1);
  }

  releaseOwner(owner: string): void {
    for (let i = this.held.length - 1; i >= 0; i--) if (this.held[i]!.owner === owner) this.held.splice(i, 1);
  }
}

export function allocatedError(hostIp: string, port: number): Error {
  return invalidParameter(
    `Bind for ${hostIp.includes(':') ? `[${hostIp}]` : hostIp || '0.0.0.0'}:${port} failed: port is already allocated`,
  );
}
