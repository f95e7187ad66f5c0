// Driver options of bridge networks. The spec's neutral names (com.engine.network.…) and the ones
// docker clients send (com.docker.network.…) mean the same; Options keep whatever was given.
import { invalidParameter } from '../errors.ts';

const PREFIXES = ['com.engine.network.', 'com.docker.network.'];

export const OPT_BRIDGE_NAME = 'bridge.name';
export const OPT_ICC = 'bridge.enable_icc';
export const OPT_MASQ = 'bridge.enable_ip_masquerade';
export const OPT_HOST_BINDING = 'bridge.host_binding_ipv4';
export const OPT_MTU = 'driver.mtu';
export const OPT_IFACE_PREFIX = 'container_iface_prefix';
export const OPT_DEFAULT_BRIDGE = 'bridge.default_bridge';
export const OPT_ENABLE_IPV6 = 'enable_ipv6';
export const OPT_ENABLE_IPV4 = 'enable_ipv4';

/** The value of a driver option under either prefix. */
export function getOpt(options: Record<string, string>, suffix: string): string | undefined {
  for (const p of PREFIXES) if (Object.hasOwn(options, p + suffix)) return options[p + suffix];
  return undefined;
}

export function engineKey(suffix: string): string {
  return PREFIXES[0] + suffix;
}

export function boolOpt(options: Record<string, string>, suffix: string, dflt: boolean): boolean {
  const v = getOpt(options, suffix);
  if (v === undefined || v === '') return dflt;
  const s = v.toLowerCase();
  if (s === 'true' || s === '1' || s === 't') return true;
  if (s === 'false' || s === '0' || s === 'f') return false;
  throw invalidParameter(`invalid value for option ${suffix}: ${JSON.stringify(v)} is not a boolean`);
}

export function intOpt(options: Record<string, string>, suffix: string, dflt: number, min: number, max: number): number {
  const v = getOpt(options, suffix);
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max)
    throw invalidParameter(`invalid value for option ${suffix}: ${JSON.stringify(v)} (must be an integer from ${min} to ${max})`);
  return n;
}
