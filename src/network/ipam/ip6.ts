// IPv6 addresses as 128-bit bigints, and CIDR prefixes over them: parsing (every RFC 4291 text
// form, with an embedded IPv4 tail), RFC 5952 canonical text, the ULA pool derived from the
// daemon's ID, and the MAC-derived host part dockerd gives default-bridge containers.
import { createHash } from 'node:crypto';
import { invalidParameter } from '../../errors.ts';
import { isIPv4, parseIPv4 } from './ip4.ts';

export interface Cidr6 {
  /** The network address (host bits cleared). */
  base: bigint;
  bits: number;
}

const ALL = (1n << 128n) - 1n;

function parseGroups(part: string): number[] | undefined {
  if (part === '') return [];
  const out: number[] = [];
  const pieces = part.split(':');
  for (let i = 0; i < pieces.length; i++) {
    const p = pieces[i]!;
    if (i === pieces.length - 1 && p.includes('.')) {
      if (!isIPv4(p)) return undefined;
      const v = parseIPv4(p);
      out.push(v >>> 16, v & 0xffff);
      continue;
    }
    if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return undefined;
    out.push(parseInt(p, 16));
  }
  return out;
}

function tryParse(text: string): bigint | undefined {
  if (!text.includes(':') || text.includes('%')) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  let groups: number[];
  if (halves.length === 2) {
    const head = parseGroups(halves[0]!);
    const tail = parseGroups(halves[1]!);
    if (!head || !tail || head.length + tail.length > 7) return undefined;
    groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    const g = parseGroups(text);
    if (!g || g.length !== 8) return undefined;
    groups = g;
  }
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

export function isIPv6(text: string): boolean {
  return tryParse(text) !== undefined;
}

export function parseIPv6(text: string): bigint {
  const v = tryParse(text);
  if (v === undefined) throw invalidParameter(`invalid IPv6 address: ${text}`);
  return v;
}

/** RFC 5952: lower case, no leading zeros, the longest run (≥ 2) of zero groups as "::". */
export function formatIPv6(v: bigint): string {
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((v >> BigInt(i * 16)) & 0xffffn));
  let bestAt = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestAt = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (g: number[]) => g.map((x) => x.toString(16)).join(':');
  if (bestAt < 0) return hex(groups);
  return `${hex(groups.slice(0, bestAt))}::${hex(groups.slice(bestAt + bestLen))}`;
}

export function maskOf6(bits: number): bigint {
  return bits === 0 ? 0n : (ALL << BigInt(128 - bits)) & ALL;
}

/** "addr/n" → the address as written and the prefix (with host bits cleared). */
export function parseCidr6WithHost(text: string): { addr: bigint; cidr: Cidr6 } {
  const slash = text.indexOf('/');
  const bitsText = slash < 0 ? '' : text.slice(slash + 1);
  const bits = Number(bitsText);
  const addr = slash < 0 ? undefined : tryParse(text.slice(0, slash));
  if (addr === undefined || !/^\d{1,3}$/.test(bitsText) || bits > 128) throw invalidParameter(`invalid CIDR address: ${text}`);
  return { addr, cidr: { base: addr & maskOf6(bits), bits } };
}

export function parseCidr6(text: string): Cidr6 {
  return parseCidr6WithHost(text).cidr;
}

export function formatCidr6(c: Cidr6): string {
  return `${formatIPv6(c.base)}/${c.bits}`;
}

export function contains6(c: Cidr6, addr: bigint): boolean {
  return (addr & maskOf6(c.bits)) === c.base;
}

export function overlaps6(a: Cidr6, b: Cidr6): boolean {
  const m = maskOf6(Math.min(a.bits, b.bits));
  return (a.base & m) === (b.base & m);
}

export function within6(inner: Cidr6, outer: Cidr6): boolean {
  return inner.bits >= outer.bits && contains6(outer, inner.base);
}

export function size6(c: Cidr6): bigint {
  return 1n << BigInt(128 - c.bits);
}

/** Whether a CIDR text is IPv6 (it has a colon); IPv4 otherwise. */
export function isV6Text(text: string): boolean {
  return text.includes(':');
}

/**
 * The ULA /48 of RFC 4193 with a 40-bit global ID derived from the daemon's stable ID (as
 * dockerd), so every daemon gets its own and keeps it across restarts.
 */
export function ulaBase(daemonId: string): string {
  const gid = createHash('sha256').update(daemonId).digest().subarray(0, 5);
  const v = (0xfdn << 120n) | (BigInt(`0x${gid.toString('hex')}`) << 80n);
  return formatCidr6({ base: v, bits: 48 });
}

/** The subnet's prefix with the MAC address as host part (default bridge, prefixes of /80 or wider). */
export function addressFromMac(subnet: Cidr6, mac: string): bigint | undefined {
  if (subnet.bits > 80) return undefined;
  const m = BigInt(`0x${mac.replace(/[:-]/g, '')}`);
  return subnet.base | m;
}

/** The reverse name's address: "b.a.9.8…ip6.arpa" (32 nibbles) → the address, undefined otherwise. */
export function fromReverseName6(name: string): bigint | undefined {
  const m = /^((?:[0-9a-f]\.){32})ip6\.arpa\.?$/i.exec(name);
  if (!m) return undefined;
  const nibbles = m[1]!.split('.').filter(Boolean).reverse().join('');
  return BigInt(`0x${nibbles}`);
}

/** The 16 bytes of an address (AAAA record data). */
export function bytesOf6(v: bigint): Buffer {
  const b = Buffer.alloc(16);
  for (let i = 0; i < 16; i++) b[15 - i] = Number((v >> BigInt(i * 8)) & 0xffn);
  return b;
}
