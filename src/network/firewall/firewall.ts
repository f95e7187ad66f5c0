// The daemon's iptables rules. All of them live in the daemon's own chains (prefix from naming.ts),
// reached from the built-in chains by one jump each. The chains' contents are a pure function of
// the desired state (networks and published ports), written whole with one `iptables-restore
// --noflush` — which flushes each chain it declares — so a sync is idempotent: after a crash and a
// restart the same rules come back once, never twice, and rules of what no longer exists vanish.
// IPv4 and IPv6 have one Firewall each (iptables / ip6tables), rendered from the same state.
import { runCommand } from '../../util/helper-shell.ts';
import type { Logger } from '../../util/log.ts';

export type Family = 4 | 6;

export interface FwNetwork {
  bridge: string;
  /** IPv4 subnet ('' for none) and IPv6 subnet (absent without IPv6). */
  subnet: string;
  subnet6?: string;
  icc: boolean;
  masquerade: boolean;
  internal: boolean;
}

export interface FwPort {
  bridge: string;
  proto: 'tcp' | 'udp' | 'sctp';
  /** '' or 0.0.0.0 (IPv4) / :: (IPv6) for every address. */
  hostIp: string;
  hostPort: number;
  containerIp: string;
  containerPort: number;
}

/** One published port of the routing mesh and the ingress addresses of its service's tasks. */
export interface FwMeshTarget {
  proto: 'tcp' | 'udp' | 'sctp';
  published: number;
  target: number;
  backends: string[];
}

/** The routing mesh of cluster mode on this node (IPv4): the ingress bridge and this node's address on it. */
export interface FwMesh {
  bridge: string;
  nodeIp: string;
  targets: FwMeshTarget[];
}

export interface FwState {
  networks: FwNetwork[];
  ports: FwPort[];
  mesh?: FwMesh;
}

export interface FwSettings {
  /** Loopback traffic goes through the userland proxy (else DNAT from OUTPUT with route_localnet). */
  userlandProxy: boolean;
  /** Published ports also answer when addressed directly to the container's IP from outside. */
  allowDirectRouting: boolean;
}

export interface Chains {
  /** filter: accepts for published ports, then drops other traffic routed in to containers. nat: DNAT. */
  main: string;
  forward: string;
  user: string;
  iso1: string;
  iso2: string;
  post: string;
  /** nat: the routing mesh's DNAT of published ports to the tasks on `ingress` (IPv4 only). */
  mesh: string;
}

export function chainNames(prefix: string): Chains {
  return {
    main: prefix,
    forward: `${prefix}-FWD`,
    user: `${prefix}-USER`,
    iso1: `${prefix}-ISO1`,
    iso2: `${prefix}-ISO2`,
    post: `${prefix}-POST`,
    mesh: `${prefix}-MESH`,
  };
}

/** The jumps from the built-in chains into ours, exactly as iptables-save / ip6tables-save print them. */
export function jumpRules(c: Chains, s: FwSettings, family: Family = 4): { filter: string[]; nat: string[] } {
  const loopback = family === 4 ? '127.0.0.0/8' : '::1/128';
  // The routing mesh answers on every local address, loopback too (route_localnet on the ingress
  // bridge), whatever the userland proxy setting: its own jumps, as dockerd's DOCKER-INGRESS.
  const mesh =
    family === 4 ? [`-A PREROUTING -m addrtype --dst-type LOCAL -j ${c.mesh}`, `-A OUTPUT -m addrtype --dst-type LOCAL -j ${c.mesh}`] : [];
  return {
    filter: [`-A FORWARD -j ${c.forward}`],
    nat: [
      `-A PREROUTING -m addrtype --dst-type LOCAL -j ${c.main}`,
      s.userlandProxy
        ? `-A OUTPUT ! -d ${loopback} -m addrtype --dst-type LOCAL -j ${c.main}`
        : `-A OUTPUT -m addrtype --dst-type LOCAL -j ${c.main}`,
      `-A POSTROUTING -j ${c.post}`,
      ...mesh,
    ],
  };
}

function ofFamily(ip: string, family: Family): boolean {
  return family === 6 ? ip.includes(':') : ip === '' || /^\d+\.\d+\.\d+\.\d+$/.test(ip);
}

function anyHost(ip: string): boolean {
  return ip === '' || ip === '0.0.0.0' || ip === '::';
}

/** Contents of our chains in both tables (without the table headers / COMMIT), for one family. */
export function renderChains(c: Chains, fullState: FwState, s: FwSettings, family: Family = 4): { filter: string[]; nat: string[] } {
  const filter: string[] = [`:${c.main} - [0:0]`, `:${c.forward} - [0:0]`, `:${c.iso1} - [0:0]`, `:${c.iso2} - [0:0]`];
  const nat: string[] = [`:${c.main} - [0:0]`, `:${c.post} - [0:0]`, ...(family === 4 ? [`:${c.mesh} - [0:0]`] : [])];
  // One family's view: its subnet per network (networks without one take no part), its ports.
  const state: FwState = {
    networks: fullState.networks.flatMap((n) => {
      const subnet = family === 4 ? n.subnet : n.subnet6;
      return subnet ? [{ ...n, subnet }] : [];
    }),
    ports: fullState.ports,
  };
  const host = family === 4 ? '/32' : '/128';
  const dnatTo = (ip: string, port: number) => (family === 4 ? `${ip}:${port}` : `[${ip}]:${port}`);
  const ports = state.ports.filter((p) => ofFamily(p.hostIp, family) && ofFamily(p.containerIp, family) && p.containerIp !== '');

  filter.push(`-A ${c.forward} -j ${c.user}`);
  // The routing mesh before isolation (as dockerd's DOCKER-INGRESS): connections DNATed to the
  // tasks on `ingress`, from anywhere, and their replies.
  const mesh = family === 4 && fullState.mesh?.targets.length ? fullState.mesh : undefined;
  if (mesh)
    filter.push(
      `-A ${c.forward} -o ${mesh.bridge} -m conntrack --ctstate DNAT -j ACCEPT`,
      `-A ${c.forward} -i ${mesh.bridge} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
    );
  filter.push(`-A ${c.forward} -j ${c.iso1}`);
  for (const n of state.networks) {
    filter.push(`-A ${c.forward} -o ${n.bridge} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`);
    filter.push(`-A ${c.forward} -o ${n.bridge} -j ${c.main}`);
    if (!n.internal) filter.push(`-A ${c.forward} -i ${n.bridge} ! -o ${n.bridge} -j ACCEPT`);
    filter.push(`-A ${c.forward} -i ${n.bridge} -o ${n.bridge} -j ${n.icc ? 'ACCEPT' : 'DROP'}`);
    if (n.internal) {
      filter.push(`-A ${c.iso1} -i ${n.bridge} ! -d ${n.subnet} -j DROP`);
      filter.push(`-A ${c.iso1} -o ${n.bridge} ! -s ${n.subnet} -j DROP`);
    } else {
      filter.push(`-A ${c.iso1} -i ${n.bridge} ! -o ${n.bridge} -j ${c.iso2}`);
    }
    filter.push(`-A ${c.iso2} -o ${n.bridge} -j DROP`);
  }
  for (const p of ports) {
    const ct = s.allowDirectRouting ? '' : ' -m conntrack --ctstate DNAT';
    filter.push(
      `-A ${c.main} -d ${p.containerIp}${host} ! -i ${p.bridge} -o ${p.bridge} -p ${p.proto} -m ${p.proto} --dport ${p.containerPort}${ct} -j ACCEPT`,
    );
  }
  // Nothing else reaches a container from outside its bridge: unpublished ports stay closed even
  // when the FORWARD policy accepts.
  for (const n of state.networks) filter.push(`-A ${c.main} ! -i ${n.bridge} -o ${n.bridge} -j DROP`);

  if (mesh) {
    // Each new connection to a published port goes to one task (statistic nth: an even share each),
    // and leaves through the ingress bridge from this node's address so the reply comes back here.
    for (const t of mesh.targets) {
      const k = t.backends.length;
      t.backends.forEach((ip, i) => {
        const nth = i < k - 1 ? ` -m statistic --mode nth --every ${k - i} --packet 0` : '';
        nat.push(`-A ${c.mesh} -p ${t.proto} -m ${t.proto} --dport ${t.published}${nth} -j DNAT --to-destination ${ip}:${t.target}`);
      });
    }
    nat.push(`-A ${c.post} -o ${mesh.bridge} -m conntrack --ctstate DNAT -j SNAT --to-source ${mesh.nodeIp}`);
  }
  for (const n of state.networks) {
    if (n.masquerade && !n.internal) nat.push(`-A ${c.post} -s ${n.subnet} ! -o ${n.bridge} -j MASQUERADE`);
    if (!s.userlandProxy) nat.push(`-A ${c.post} -o ${n.bridge} -m addrtype --src-type LOCAL -j MASQUERADE`);
    // With the proxy, traffic from a container to a published port of its own bridge goes through
    // the proxy (hairpin without NAT); without it, DNAT applies to it too.
    if (s.userlandProxy) nat.push(`-A ${c.main} -i ${n.bridge} -j RETURN`);
  }
  for (const p of ports) {
    if (!s.userlandProxy)
      nat.push(
        `-A ${c.post} -s ${p.containerIp}${host} -d ${p.containerIp}${host} -p ${p.proto} -m ${p.proto} --dport ${p.containerPort} -j MASQUERADE`,
      );
    const dst = anyHost(p.hostIp) ? '' : ` -d ${p.hostIp}${host}`;
    const notIn = s.userlandProxy ? ` ! -i ${p.bridge}` : '';
    nat.push(
      `-A ${c.main}${dst}${notIn} -p ${p.proto} -m ${p.proto} --dport ${p.hostPort} -j DNAT --to-destination ${dnatTo(p.containerIp, p.containerPort)}`,
    );
  }
  return { filter, nat };
}

/** The restore script: our chains rewritten, plus jump changes (only at start-up and teardown). */
export function restoreScript(
  tables: { filter: string[]; nat: string[] },
  extra: { filter: string[]; nat: string[] } = { filter: [], nat: [] },
): string {
  // Chain declarations first: rules further down may jump to them.
  const decl = (l: string[]) => l.filter((x) => x.startsWith(':'));
  const rest = (l: string[]) => l.filter((x) => !x.startsWith(':'));
  return [
    '*filter',
    ...decl(extra.filter),
    ...tables.filter,
    ...rest(extra.filter),
    'COMMIT',
    '*nat',
    ...decl(extra.nat),
    ...tables.nat,
    ...rest(extra.nat),
    'COMMIT',
    '',
  ].join('\n');
}

interface SavedTable {
  chains: Set<string>;
  rules: string[];
}

export function parseSave(text: string): Record<string, SavedTable> {
  const out: Record<string, SavedTable> = {};
  let cur: SavedTable | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('*')) {
      cur = { chains: new Set(), rules: [] };
      out[line.slice(1).trim()] = cur;
    } else if (!cur || line.startsWith('#')) {
      continue;
    } else if (line.startsWith(':')) {
      cur.chains.add(line.slice(1).split(' ')[0]!);
    } else if (line.startsWith('-A ')) {
      cur.rules.push(line.trim());
    }
  }
  return out;
}

/**
 * "proto/port" of every DNAT in the nat table outside our own chains: other daemons' published
 * ports (their rules outlive a daemon killed with -9), which a port of ours must not shadow.
 */
export function foreignDnatPorts(saved: Record<string, SavedTable>, own: Chains): Set<string> {
  const out = new Set<string>();
  const ours = [own.main, own.post];
  for (const rule of saved['nat']?.rules ?? []) {
    const chain = rule.split(' ')[1] ?? '';
    if (ours.includes(chain) || target(rule) !== 'DNAT') continue;
    const proto = / -p (tcp|udp|sctp)\b/.exec(rule)?.[1];
    const port = / --dport (\d+)\b/.exec(rule)?.[1];
    if (proto && port) out.add(`${proto}/${port}`);
  }
  return out;
}

/** foreignDnatPorts read from the host's IPv4 nat table now (also when we write no rules ourselves). */
export async function readForeignDnatPorts(own: Chains): Promise<Set<string>> {
  return foreignDnatPorts(parseSave(await runCommand('iptables-save', ['-t', 'nat'])), own);
}

/** The jump target of a rule ("-j X" at the end or anywhere). */
function target(rule: string): string | undefined {
  return /(?:^| )-j (\S+)/.exec(rule)?.[1];
}

const BUILTIN = new Set(['INPUT', 'FORWARD', 'OUTPUT', 'PREROUTING', 'POSTROUTING']);

/**
 * Start-up (and a change of networks): what to add and remove so each built-in chain jumps into
 * ours exactly once with the current settings (a changed --userland-proxy swaps the OUTPUT jump;
 * duplicates left by anything go; FORWARD's jump is its first rule), and whether the user chain
 * has to be created (it is never flushed: it belongs to the admin).
 */
export function jumpChanges(
  saved: Record<string, SavedTable>,
  c: Chains,
  s: FwSettings,
  family: Family = 4,
): { filter: string[]; nat: string[] } {
  const ours = new Set(Object.values(c));
  const want = jumpRules(c, s, family);
  const out = { filter: [] as string[], nat: [] as string[] };
  for (const table of ['filter', 'nat'] as const) {
    const t = saved[table] ?? { chains: new Set<string>(), rules: [] };
    const seen = new Set<string>();
    // FORWARD's jump must be its first rule, once: another firewall's rules inserted above it since
    // (a DROP of everything forwarded) would shadow the containers' traffic. Otherwise every copy
    // goes (a delete by its text takes the first copy) and one is inserted at the top.
    const forward = t.rules.filter((r) => r.startsWith('-A FORWARD '));
    const jumps = forward.filter((r) => ours.has(target(r) ?? ''));
    const forwardOk = jumps.length === 1 && forward[0] === jumps[0] && want[table].includes(jumps[0]!);
    for (const rule of t.rules) {
      const chain = rule.split(' ')[1]!;
      const tgt = target(rule);
      if (!BUILTIN.has(chain) || !tgt || !ours.has(tgt)) continue;
      if (want[table].includes(rule) && !seen.has(rule) && (chain !== 'FORWARD' || forwardOk)) {
        seen.add(rule);
        continue;
      }
      out[table].push(rule.replace(/^-A /, '-D '));
    }
    for (const rule of want[table]) {
      if (seen.has(rule)) continue;
      out[table].push(rule.startsWith('-A FORWARD ') ? rule.replace(/^-A FORWARD /, '-I FORWARD 1 ') : rule);
    }
    if (table === 'filter' && !t.chains.has(c.user)) out.filter.unshift(`:${c.user} - [0:0]`);
  }
  return out;
}

/**
 * Teardown: every jump into our chains and the chains themselves. The user chain goes only when
 * it is empty or `all` is set: rules an administrator put there survive a daemon restart.
 */
export function teardownScript(saved: Record<string, SavedTable>, c: Chains, all = false): string | undefined {
  const userRules = (saved.filter?.rules ?? []).some((r) => r.startsWith(`-A ${c.user} `));
  const ours = Object.values(c).filter((ch) => all || ch !== c.user || !userRules);
  const out = { filter: [] as string[], nat: [] as string[] };
  let any = false;
  for (const table of ['filter', 'nat'] as const) {
    const t = saved[table];
    if (!t) continue;
    for (const rule of t.rules) {
      const chain = rule.split(' ')[1]!;
      const tgt = target(rule);
      if (!ours.includes(chain) && tgt && ours.includes(tgt)) out[table].push(rule.replace(/^-A /, '-D '));
    }
    const present = ours.filter((ch) => t.chains.has(ch));
    for (const ch of present) out[table].push(`:${ch} - [0:0]`);
    for (const ch of present) out[table].push(`-X ${ch}`);
    if (out[table].length) any = true;
  }
  return any ? restoreScript({ filter: [], nat: [] }, out) : undefined;
}

/** The save/restore commands of a family. */
function tools(family: Family): { save: string; restore: string } {
  return family === 4 ? { save: 'iptables-save', restore: 'iptables-restore' } : { save: 'ip6tables-save', restore: 'ip6tables-restore' };
}

export class Firewall {
  readonly chains: Chains;
  private running: Promise<void> = Promise.resolve();
  private queued: Promise<void> | null = null;
  private installed = false;
  /** The networks' bridges at the last write (a change has the jumps checked again). */
  private bridges = '';

  constructor(
    prefix: string,
    private readonly settings: () => FwSettings,
    private readonly desired: () => FwState,
    private readonly log: Logger,
    readonly family: Family = 4,
  ) {
    this.chains = chainNames(prefix);
  }

  /**
   * Writes our chains from the current desired state. Concurrent callers share one run: a sync
   * requested while another runs waits for it and then writes the state as it is by then.
   */
  sync(): Promise<void> {
    if (this.queued) return this.queued;
    // The previous run's failure went to its own callers; this run starts afresh either way.
    const next = this.running
      .catch(() => undefined) // the previous run's failure went to its own callers
      .then(() => {
        this.queued = null;
        return this.apply();
      });
    this.queued = next;
    this.running = next;
    return next;
  }

  private async apply(): Promise<void> {
    const s = this.settings();
    const desired = this.desired();
    const tables = renderChains(this.chains, desired, s, this.family);
    let extra = { filter: [] as string[], nat: [] as string[] };
    const { save, restore } = tools(this.family);
    // The jumps are checked at the first write and whenever the networks change (as dockerd puts
    // its DOCKER-USER jump back on top at each network's creation): one iptables-save then.
    const bridges = desired.networks.map((n) => n.bridge).join(' ');
    if (!this.installed || bridges !== this.bridges) {
      const saved = parseSave(await runCommand(save, []));
      extra = jumpChanges(saved, this.chains, s, this.family);
    }
    await runCommand(restore, ['-w', '--noflush'], { input: restoreScript(tables, extra) });
    this.installed = true;
    this.bridges = bridges;
  }

  /** Removes our jumps and chains (the daemon has no bridge networks left, or shuts down). */
  async teardown(): Promise<void> {
    await this.running.catch(() => undefined); // its failure went to its callers: the chains go regardless
    await removeChains(this.chains, false, this.family);
    this.installed = false;
  }

  get isInstalled(): boolean {
    return this.installed;
  }

  warnOnFailure(what: string): (err: unknown) => void {
    return (err) => this.log.warn(`firewall${this.family === 6 ? ' (IPv6)' : ''} ${what}: ${(err as Error).message}`);
  }
}

export async function removeChains(c: Chains, all = true, family: Family = 4): Promise<void> {
  const { save, restore } = tools(family);
  const saved = parseSave(await runCommand(save, []));
  const script = teardownScript(saved, c, all);
  if (script) await runCommand(restore, ['-w', '--noflush'], { input: script });
}
