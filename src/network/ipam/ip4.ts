// IPv4 addresses as unsigned 32-bit numbers, and CIDR prefixes over them. Small and exact: every
// address the network layer handles goes through here (subnets, gateways, ranges, MACs, PTR names).
import { invalidParameter } from '../../errors.ts';

export interface Cidr {
  /** The network address (host bits cleared). */
  base: number;
  bits: number;
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

export function isIPv4(text: string): boolean {
  const m = IPV4.exec(text);
  return m !== null && m.slice(1).every((o) => Number(o) <= 255 && (o.length === 1 || !o.startsWith('0')));
}

export function parseIPv4(text: string): number {
  if (!isIPv4(text)) throw invalidParameter(`invalid IPv4 address: ${text}`);
  const [a, b, c, d] = text.split('.').map(Number) as [number, number, number, number];
  return ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
}

export function formatIPv4(n: number): string {
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

export function maskOf(bits: number): number {
  return bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
}

export function size(c: Cidr): number {
  return 2 ** (32 - c.bits);
}

/** "a.b.c.d/n" → the address as written and the prefix (with host bits cleared). */
export function parseCidrWithHost(text: string): { addr: number; cidr: Cidr } {
  const slash = text.indexOf('/');
  const bits = slash < 0 ? NaN : Number(text.slice(slash + 1));
  if (slash < 0 || !/^\d{1,2}$/.test(text.slice(slash + 1)) || bits > 32 || !isIPv4(text.slice(0, slash))) {
    throw invalidParameter(`invalid CIDR address: ${text}`);
  }
  const addr = parseIPv4(text.slice(0, slash));
  return { addr, cidr: { base: (addr & maskOf(bits)) >>> 0, bits } };
}

/** A prefix, accepting host bits (they are cleared). */
export function parseCidr(text: string): Cidr {
  return parseCidrWithHost(text).cidr;
}

export function formatCidr(c: Cidr): string {
  return `${formatIPv4(c.base)}/${c.bits}`;
}

export function contains(c: Cidr, addr: number): boolean {
  return (addr & maskOf(c.bits)) >>> 0 === c.base;
}

export function overlaps(a: Cidr, b: Cidr): boolean {
  const bits = Math.min(a.bits, b.bits);
  return (a.base & maskOf(bits)) >>> 0 === (b.base & maskOf(bits)) >>> 0;
}

/** Whether inner lies entirely within outer. */
export function within(inner: Cidr, outer: Cidr): boolean {
  return inner.bits >= outer.bits && contains(outer, inner.base);
}

export function broadcast(c: Cidr): number {
  return (c.base + size(c) - 1) >>> 0;
}

/** The locally administered MAC dockerd derives from an IPv4 address: 02:42 then the four octets. */
export function macFromIPv4(addr: number): string {
  const hex = (v: number) => v.toString(16).padStart(2, '0');
  return ['02', '42', hex((addr >>> 24) & 255), hex((addr >>> 16) & 255), hex((addr >>> 8) & 255), hex(addr & 255)].join(':');
}

/** "4.3.2.1.in-addr.arpa" → 1.2.3.4 (undefined for anything else). */
export function fromReverseName(name: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.in-addr\.arpa\.?$/i.exec(name);
  if (!m) return undefined;
  const text = `${m[4]}.${m[3]}.${m[2]}.${m[1]}`;
  return isIPv4(text) ? parseIPv4(text) : undefined;
}
