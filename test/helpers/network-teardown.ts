// Removes what one daemon (identified by its exec-root) left on the host: its bridges and its
// firewall chains. A daemon does this itself at a graceful shutdown without live-restore; this is
// for daemons that died (kill -9 in tests) and never came back.
import { chainNames, removeChains } from '../../src/network/firewall/firewall.ts';
import { chainPrefix, daemonTag, linkAlias } from '../../src/network/naming.ts';
import { deleteLinks, linksWithAlias } from '../../src/network/host/netlink.ts';

export async function removeDaemonNetworking(execRoot: string): Promise<void> {
  const tag = daemonTag(execRoot);
  await deleteLinks(linksWithAlias(linkAlias(tag)));
  await removeChains(chainNames(chainPrefix(tag)));
  await removeChains(chainNames(chainPrefix(tag)), true, 6).catch(() => undefined); // no ip6tables: nothing to remove
}

/** What is left of a daemon on the host (for tests asserting that nothing leaked). */
export function daemonLinks(execRoot: string): string[] {
  return linksWithAlias(linkAlias(daemonTag(execRoot)));
}

/** The daemon's chain of the routing mesh (nat): its DNAT of published ports to the tasks. */
export function meshChain(execRoot: string): string {
  return chainNames(chainPrefix(daemonTag(execRoot))).mesh;
}

/** The prefix every firewall chain of the daemon starts with. */
export function daemonChainPrefix(execRoot: string): string {
  return chainPrefix(daemonTag(execRoot));
}
