// Address management: which subnet a new network gets (from the address pools, avoiding the
// daemon's other networks and the host's routes) and which address each endpoint gets inside it.
import { readFileSync } from 'node:fs';
import { EngineError, forbidden, invalidParameter } from '../../errors.ts';
import { broadcast, contains, formatCidr, formatIPv4, overlaps, parseCidr, size, type Cidr } from './ip4.ts';
import { contains6, formatCidr6, formatIPv6, isV6Text, overlaps6, parseCidr6, size6, type Cidr6 } from './ip6.ts';

export interface AddressPool {
  base: string;
  size: number;
}

/** dockerd's local-scope defaults: 172.17–172.31 in /16s, then 192.168/16 in /20s. */
export const DEFAULT_POOLS: AddressPool[] = [
  { base: '172.17.0.0/16', size: 16 },
  { base: '172.18.0.0/16', size: 16 },
  { base: '172.19.0.0/16', size: 16 },
  { base: '172.20.0.0/14', size: 16 },
  { base: '172.24.0.0/14', size: 16 },
  { base: '172.28.0.0/14', size: 16 },
  { base: '192.168.0.0/16', size: 20 },
];

export function validatePools(pools: AddressPool[]): void {
  for (const p of pools) {
    const v6 = isV6Text(p.base);
    const bits = v6 ? parseCidr6(p.base).bits : parseCidr(p.base).bits;
    const max = v6 ? 128 : 32;
    if (!Number.isInteger(p.size) || p.size < bits || p.size > max) {
      throw invalidParameter(`invalid default address pool ${p.base}: size ${p.size} must be between ${bits} and ${max}`);
    }
  }
}

/** The first IPv4 subnet of the pools that overlaps none of `taken` (IPv6 pools are skipped). */
export function pickSubnet(pools: AddressPool[], taken: Cidr[]): Cidr | undefined {
  for (const pool of pools) {
    if (isV6Text(pool.base)) continue;
    const base = parseCidr(pool.base);
    const step = 2 ** (32 - pool.size);
    const end = base.base + size(base);
    for (let at = base.base; at < end; at += step) {
      const candidate = { base: at >>> 0, bits: pool.size };
      const hit = taken.find((t) => overlaps(t, candidate));
      if (!hit) return candidate;
      // Skip past a taken block larger than one candidate in one go.
      if (hit.bits < pool.size) at = Math.max(at, hit.base + size(hit) - step);
    }
  }
  return undefined;
}

/** The first IPv6 subnet of the pools (IPv4 ones skipped) that overlaps none of `taken`. */
export function pickSubnet6(pools: AddressPool[], taken: Cidr6[]): Cidr6 | undefined {
  for (const pool of pools) {
    if (!isV6Text(pool.base)) continue;
    const base = parseCidr6(pool.base);
    const step = 1n << BigInt(128 - pool.size);
    const end = base.base + size6(base);
    // A pool of /64s in a /48 has 65536 candidates; taken ones are few, so a bounded walk suffices.
    let tries = 0;
    for (let at = base.base; at < end && tries < 1 << 20; at += step, tries++) {
      const candidate = { base: at, bits: pool.size };
      const hit = taken.find((t) => overlaps6(t, candidate));
      if (!hit) return candidate;
      // Skip past a taken block larger than one candidate in one go.
      if (hit.bits < pool.size && hit.base + size6(hit) - step > at) at = hit.base + size6(hit) - step;
    }
  }
  return undefined;
}

/** IPv6 routes of the host (from /proc/net/ipv6_route), but the default and link-local/multicast ones. */
export function hostRoutes6(text = readFileSafe('/proc/net/ipv6_route')): Array<{ dev: string; cidr: Cidr6 }> {
  const out: Array<{ dev: string; cidr: Cidr6 }> = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    const bits = parseInt(f[1]!, 16);
    const base = BigInt(`0x${f[0]}`);
    if (bits === 0 || f[9] === 'lo') continue;
    const top = base >> 112n;
    if (top >= 0xfe80n && top <= 0xfebfn) continue; // link-local
    if (top >= 0xff00n) continue; // multicast
    out.push({ dev: f[9]!, cidr: { base, bits } });
  }
  return out;
}

/** IPv4 routes of the host's main table (from /proc/net/route: no process), with their device. */
export function hostRoutes(text = readFileSafe('/proc/net/route')): Array<{ dev: string; cidr: Cidr }> {
  const out: Array<{ dev: string; cidr: Cidr }> = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 8) continue;
    const dest = swap32(parseInt(f[1]!, 16));
    const mask = swap32(parseInt(f[7]!, 16));
    if (mask === 0) continue; // the default route overlaps everything; it never blocks a subnet
    out.push({ dev: f[0]!, cidr: { base: dest, bits: popcount(mask) } });
  }
  return out;
}

function popcount(n: number): number {
  let c = 0;
  for (let v = n >>> 0; v; v >>>= 1) c += v & 1;
  return c;
}

/** /proc/net/route prints addresses in host (little-endian) byte order. */
function swap32(n: number): number {
  return (((n & 0xff) << 24) | ((n & 0xff00) << 8) | ((n >>> 8) & 0xff00) | ((n >>> 24) & 0xff)) >>> 0;
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return ''; // no such table (no IPv6 in this kernel): no routes to avoid
  }
}

/**
 * One network's IPv4 addresses: allocation inside the range (the whole subnet unless an IPRange /
 * --fixed-cidr narrows it), never the network, broadcast or reserved (gateway, auxiliary)
 * addresses. Allocation is serial — the next free address after the last one handed out — so a
 * released address is not reused at once (stale ARP entries and DNS answers point nowhere).
 */
export class AddressSpace {
  private readonly used = new Set<number>();
  private readonly reserved: Set<number>;
  private last: number;

  constructor(
    readonly subnet: Cidr,
    readonly range: Cidr,
    reserved: number[],
  ) {
    this.reserved = new Set(reserved);
    this.last = range.base;
  }

  private usable(addr: number): boolean {
    if (!contains(this.subnet, addr)) return false;
    if (this.subnet.bits <= 30 && (addr === this.subnet.base || addr === broadcast(this.subnet))) return false;
    return !this.reserved.has(addr);
  }

  /** A static address (any in the subnet, as dockerd) or the next free one in the range. */
  allocate(preferred?: number): number {
    if (preferred !== undefined) {
      if (!contains(this.subnet, preferred))
        throw invalidParameter(`no configured subnet or ip-range contain the IP address ${formatIPv4(preferred)}`);
      if (this.used.has(preferred) || this.reserved.has(preferred)) throw conflictAddress(preferred);
      if (!this.usable(preferred)) throw invalidParameter(`invalid address ${formatIPv4(preferred)} for subnet ${formatCidr(this.subnet)}`);
      this.used.add(preferred);
      return preferred;
    }
    const n = size(this.range);
    const start = contains(this.range, this.last) ? this.last - this.range.base : 0;
    for (let i = 1; i <= n; i++) {
      const addr = (this.range.base + ((start + i) % n)) >>> 0;
      if (this.used.has(addr) || !this.usable(addr)) continue;
      this.used.add(addr);
      this.last = addr;
      return addr;
    }
    throw new EngineError('UNAVAILABLE', `no available IPv4 addresses on this network's address pools: ${formatCidr(this.range)}`);
  }

  /** Marks an address taken (endpoints that survived a daemon restart). */
  reserve(addr: number): void {
    this.used.add(addr);
  }

  release(addr: number): void {
    this.used.delete(addr);
  }

  inUse(addr: number): boolean {
    return this.used.has(addr) || this.reserved.has(addr);
  }
}

/** dockerd answers 403 for a static address another endpoint holds. */
function conflictAddress(addr: number): EngineError {
  return forbidden(`Address already in use: ${formatIPv4(addr)}`);
}

/**
 * One network's IPv6 addresses: as AddressSpace, over 128-bit addresses. The subnet's first
 * address (the subnet-router anycast address) and reserved ones are never handed out.
 */
export class AddressSpace6 {
  private readonly used = new Set<bigint>();
  private readonly reserved: Set<bigint>;
  private last: bigint;

  constructor(
    readonly subnet: Cidr6,
    readonly range: Cidr6,
    reserved: bigint[],
  ) {
    this.reserved = new Set(reserved);
    this.last = range.base;
  }

  private usable(addr: bigint): boolean {
    return contains6(this.subnet, addr) && addr !== this.subnet.base && !this.reserved.has(addr);
  }

  allocate(preferred?: bigint): bigint {
    if (preferred !== undefined) {
      if (!contains6(this.subnet, preferred))
        throw invalidParameter(`no configured subnet or ip-range contain the IP address ${formatIPv6(preferred)}`);
      if (this.used.has(preferred) || this.reserved.has(preferred)) throw forbidden(`Address already in use: ${formatIPv6(preferred)}`);
      if (!this.usable(preferred))
        throw invalidParameter(`invalid address ${formatIPv6(preferred)} for subnet ${formatCidr6(this.subnet)}`);
      this.used.add(preferred);
      return preferred;
    }
    const n = size6(this.range);
    const start = contains6(this.range, this.last) ? this.last - this.range.base : 0n;
    // Serial from the last one handed out; a bounded scan (a /64 is never exhausted in practice).
    const limit = n < 1n << 20n ? n : 1n << 20n;
    for (let i = 1n; i <= limit; i++) {
      const addr = this.range.base + ((start + i) % n);
      if (this.used.has(addr) || !this.usable(addr)) continue;
      this.used.add(addr);
      this.last = addr;
      return addr;
    }
    throw new EngineError('UNAVAILABLE', `no available IPv6 addresses on this network's address pools: ${formatCidr6(this.range)}`);
  }

  reserve(addr: bigint): void {
    this.used.add(addr);
  }

  inUse(addr: bigint): boolean {
    return this.used.has(addr) || this.reserved.has(addr);
  }

  release(addr: bigint): void {
    this.used.delete(addr);
  }
}
