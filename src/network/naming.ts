// Names of the host-side things the daemon creates: firewall chains, bridges, veths. Everything a
// daemon creates carries its tag (derived from its exec-root), so two daemons on one host never
// touch each other's chains or links, and a clean-up can find exactly one daemon's leftovers.
import { createHash, randomBytes } from 'node:crypto';

export const DEFAULT_EXEC_ROOT = '/var/run/engine';
export const DEFAULT_BRIDGE = 'engine0';

/** '' for the default exec-root, else 6 hex characters of its hash. */
export function daemonTag(execRoot: string): string {
  const clean = execRoot.replace(/\/+$/, '');
  if (clean === DEFAULT_EXEC_ROOT) return '';
  return createHash('sha256').update(clean).digest('hex').slice(0, 6);
}

/** Chain-name prefix: ENGINE, or ENGINE-<tag> for a daemon on another exec-root (≤ 28 chars with suffixes). */
export function chainPrefix(tag: string): string {
  return tag ? `ENGINE-${tag}` : 'ENGINE';
}

/** The ifalias set on bridges the daemon created (so clean-up finds them). */
export function linkAlias(tag: string): string {
  return `engine:${tag || 'default'}`;
}

/**
 * The default bridge's name: engine0, or ENGINE_DEFAULT_BRIDGE — meant for test daemons, which run
 * side by side on one host and must not share a bridge (and so its addresses).
 */
export function defaultBridgeName(env: NodeJS.ProcessEnv = process.env): string {
  const v = env.ENGINE_DEFAULT_BRIDGE?.trim();
  return v ? v : DEFAULT_BRIDGE;
}

export function userBridgeName(networkId: string): string {
  return `br-${networkId.slice(0, 12)}`;
}

/** Host end of a container's veth pair. */
export function vethName(): string {
  return `veth${randomBytes(4).toString('hex').slice(0, 7)}`;
}

export function newId(): string {
  return randomBytes(32).toString('hex');
}

/** Linux interface names: 1–15 characters, no slash, colon or whitespace. */
export function validInterfaceName(name: string): boolean {
  return /^[^\s/:]{1,15}$/.test(name) && name !== '.' && name !== '..';
}
