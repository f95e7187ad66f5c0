// The IPAM part of a network create request: dockerd's checks (its ValidateIPAM messages) and the
// order inspect shows. One set of rules for both families, over the family's address operations.
import { invalidParameter } from '../../errors.ts';
import { contains, formatCidr, isIPv4, overlaps, parseCidrWithHost, parseIPv4 } from './ip4.ts';
import { contains6, formatCidr6, isIPv6, isV6Text, overlaps6, parseCidr6WithHost, parseIPv6 } from './ip6.ts';
import type { IpamConfigEntry } from '../../types/networks.ts';

interface Prefix<A> {
  base: A;
  bits: number;
}

/** What the checks need of an address family. */
interface Family<A> {
  parseCidrWithHost(text: string): { addr: A; cidr: Prefix<A> };
  formatCidr(c: Prefix<A>): string;
  isAddress(text: string): boolean;
  parseAddress(text: string): A;
  contains(c: Prefix<A>, addr: A): boolean;
  overlaps(a: Prefix<A>, b: Prefix<A>): boolean;
}

const IPV4: Family<number> = { parseCidrWithHost, formatCidr, isAddress: isIPv4, parseAddress: parseIPv4, contains, overlaps };
const IPV6: Family<bigint> = {
  parseCidrWithHost: parseCidr6WithHost,
  formatCidr: formatCidr6,
  isAddress: isIPv6,
  parseAddress: parseIPv6,
  contains: contains6,
  overlaps: overlaps6,
};

/** dockerd's IPAM checks; every problem is listed in one 400. */
export function validateIpam(list: readonly IpamConfigEntry[]): void {
  const errs: string[] = [];
  for (const c of list) {
    if (isV6Text(c.Subnet ?? '')) checkEntry(IPV6, c, errs);
    else checkEntry(IPV4, c, errs);
  }
  for (const c of list) if (!c.Subnet && (c.Gateway || c.IPRange)) errs.push('a gateway or ip-range needs a subnet');
  if (errs.length === 1) throw invalidParameter(`invalid network config:\n${errs[0]}`);
  if (errs.length > 1) throw invalidParameter(`invalid network config:\n* ${errs.join('\n* ')}`);
}

function checkEntry<A>(fam: Family<A>, c: IpamConfigEntry, errs: string[]): void {
  let subnet: Prefix<A>;
  try {
    const parsed = fam.parseCidrWithHost(c.Subnet ?? '');
    subnet = parsed.cidr;
    if (parsed.addr !== subnet.base) errs.push(`invalid subnet ${c.Subnet}: it should be ${fam.formatCidr(subnet)}`);
  } catch {
    errs.push(`invalid subnet ${c.Subnet ?? ''}: invalid CIDR block notation`);
    return;
  }
  if (c.IPRange) {
    try {
      const r = fam.parseCidrWithHost(c.IPRange);
      if (r.cidr.bits < subnet.bits)
        errs.push(`invalid ip-range ${c.IPRange}: CIDR block is bigger than its parent subnet ${fam.formatCidr(subnet)}`);
      if (r.addr !== r.cidr.base) errs.push(`invalid ip-range ${c.IPRange}: it should be ${fam.formatCidr(r.cidr)}`);
      if (!fam.overlaps(subnet, r.cidr))
        errs.push(`invalid ip-range ${c.IPRange}: parent subnet ${fam.formatCidr(subnet)} doesn't contain ip-range`);
    } catch {
      errs.push(`invalid ip-range ${c.IPRange}: invalid CIDR block notation`);
    }
  }
  const checkAddress = (a: string, what: string) => {
    if (!fam.isAddress(a)) errs.push(`${what}: invalid address`);
    else if (!fam.contains(subnet, fam.parseAddress(a)))
      errs.push(`${what}: parent subnet ${fam.formatCidr(subnet)} doesn't contain this address`);
  };
  if (c.Gateway) checkAddress(c.Gateway, `invalid gateway ${c.Gateway}`);
  for (const [k, v] of Object.entries(c.AuxiliaryAddresses ?? {})) checkAddress(v, `invalid auxiliary address ${k}`);
}

/**
 * IPAM entries as dockerd lists them: IPv4 first, then IPv6 (the docker CLI sends them in no
 * fixed order).
 */
export function ipv4First(entries: readonly IpamConfigEntry[]): IpamConfigEntry[] {
  const isV6 = (c: IpamConfigEntry) => isV6Text(c.Subnet || c.Gateway || c.IPRange || '');
  return [...entries.filter((c) => !isV6(c)), ...entries.filter(isV6)];
}
