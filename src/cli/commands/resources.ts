// engine network * and volume *: ls (tables and --format), create, rm, inspect, prune, and
// network connect/disconnect.
import { filtersOf, flagsOf, keyValues, UsageError } from '../args.ts';
import type { CommandSpec, FlagHelp } from '../command-spec.ts';
import { eachName, type Cli } from '../cli.ts';
import { byteOrder, humanSize, printFormatted, shortId } from '../output.ts';
import { inspect, INSPECT_FLAGS } from './containers.ts';
import { confirm } from './family-output.ts';
import { ROW } from '../go-types.ts';

const LS_FLAGS: FlagHelp[] = [
  { name: 'quiet', short: 'q', kind: 'bool', description: 'Only display network IDs or volume names' },
  { name: 'filter', short: 'f', kind: 'list', description: "Provide filter values (e.g. 'driver=bridge')" },
  { name: 'format', kind: 'string', description: 'Format output using a custom template' },
  { name: 'no-trunc', kind: 'bool', description: "Don't truncate output" },
];
const PRUNE_FLAGS: FlagHelp[] = [
  { name: 'force', short: 'f', kind: 'bool', description: 'Do not prompt for confirmation' },
  { name: 'filter', kind: 'list', description: "Provide filter values (e.g. 'label=<label>')" },
  { name: 'all', short: 'a', kind: 'bool', description: 'Remove all unused volumes, not just anonymous ones (volume prune)' },
];

const NETWORK_CREATE_FLAGS: FlagHelp[] = [
  { name: 'driver', short: 'd', kind: 'string', description: 'Driver to manage the Network (default "bridge")' },
  { name: 'subnet', kind: 'list', description: 'Subnet in CIDR format that represents a network segment' },
  { name: 'gateway', kind: 'list', description: 'IPv4 or IPv6 Gateway for the master subnet' },
  { name: 'ip-range', kind: 'list', description: 'Allocate container ip from a sub-range' },
  { name: 'internal', kind: 'bool', description: 'Restrict external access to the network' },
  { name: 'attachable', kind: 'bool', description: 'Enable manual container attachment' },
  { name: 'ipv6', kind: 'bool', description: 'Enable IPv6 networking' },
  { name: 'label', kind: 'list', description: 'Set metadata on a network' },
  { name: 'opt', short: 'o', kind: 'list', description: 'Set driver specific options (default map[])' },
  { name: 'ipam-driver', kind: 'string', description: 'IP Address Management Driver (default "default")' },
];

const NETWORK_RM_FLAGS: FlagHelp[] = [
  { name: 'force', short: 'f', kind: 'bool', description: 'Force the removal of one or more networks' },
];

const NETWORK_CONNECT_FLAGS: FlagHelp[] = [
  { name: 'alias', kind: 'list', description: 'Add network-scoped alias for the container' },
  { name: 'ip', kind: 'string', description: 'IPv4 address (e.g., 172.30.100.104)' },
  { name: 'ip6', kind: 'string', description: 'IPv6 address (e.g., 2001:db8::33)' },
];

const NETWORK_DISCONNECT_FLAGS: FlagHelp[] = [
  { name: 'force', short: 'f', kind: 'bool', description: 'Force the container to disconnect from a network' },
];

async function networkCmd(cli: Cli, sub: string, argv: string[]): Promise<number> {
  const api = cli.api.networks;
  switch (sub) {
    case 'ls':
    case 'list': {
      const f = flagsOf('network ls', argv, LS_FLAGS, { max: 0 });
      const list = await api.list({ filters: filtersOf(f.list('filter')) });
      list.sort((a, b) => byteOrder(String(a.Name), String(b.Name)));
      const rows = list.map((n) => ({
        ID: f.bool('no-trunc') ? n.Id : shortId(n.Id),
        Name: n.Name,
        Driver: n.Driver,
        Scope: n.Scope,
        IPv6: String(!!n.EnableIPv6),
        Internal: String(!!n.Internal),
        Labels: Object.entries(n.Labels ?? {})
          .map(([k, v]) => `${k}=${v}`)
          .join(','),
      }));
      if (f.bool('quiet')) cli.out(rows.map((r) => `${r.ID}\n`).join(''));
      else
        printFormatted(
          rows,
          f.str('format') ?? 'table {{.ID}}\t{{.Name}}\t{{.Driver}}\t{{.Scope}}',
          { ID: 'NETWORK ID', Name: 'NAME', Driver: 'DRIVER', Scope: 'SCOPE', IPv6: 'IPV6', Internal: 'INTERNAL', Labels: 'LABELS' },
          (s) => cli.out(s),
          cli.tableFit(f.bool('no-trunc')),
          { type: ROW.network },
        );
      return 0;
    }
    case 'create': {
      const f = flagsOf('network create', argv, NETWORK_CREATE_FLAGS, { min: 1, max: 1 });
      const subnets = f.list('subnet');
      const config = subnets.map((s, i) => ({
        Subnet: s,
        ...(f.list('gateway')[i] ? { Gateway: f.list('gateway')[i] } : {}),
        ...(f.list('ip-range')[i] ? { IPRange: f.list('ip-range')[i] } : {}),
      }));
      const r = await api.create({
        Name: f.args[0]!,
        Driver: f.str('driver') ?? 'bridge',
        Internal: f.bool('internal'),
        Attachable: f.bool('attachable'),
        ...(f.has('ipv6') ? { EnableIPv6: f.bool('ipv6') } : {}),
        Labels: keyValues(f.list('label')),
        Options: keyValues(f.list('opt')),
        IPAM: { Driver: f.str('ipam-driver') ?? 'default', Config: config },
      });
      cli.out(`${r.Id}\n`);
      return 0;
    }
    case 'rm':
    case 'remove': {
      const f = flagsOf('network rm', argv, NETWORK_RM_FLAGS, { min: 1 });
      return eachName(cli, f.args, (n) => api.remove(n));
    }
    case 'inspect':
      return inspect(cli, argv, 'network');
    case 'connect': {
      const f = flagsOf('network connect', argv, NETWORK_CONNECT_FLAGS, { min: 2, max: 2 });
      await api.connect(f.args[0]!, f.args[1]!, {
        Aliases: f.list('alias'),
        ...(f.str('ip') || f.str('ip6') ? { IPAMConfig: { IPv4Address: f.str('ip'), IPv6Address: f.str('ip6') } } : {}),
      });
      return 0;
    }
    case 'disconnect': {
      const f = flagsOf('network disconnect', argv, NETWORK_DISCONNECT_FLAGS, { min: 2, max: 2 });
      await api.disconnect(f.args[0]!, f.args[1]!, { force: f.bool('force') });
      return 0;
    }
    case 'prune': {
      const f = flagsOf('network prune', argv, PRUNE_FLAGS, { max: 0 });
      const warning =
        'WARNING! This will remove all custom networks not used by at least one container.\nAre you sure you want to continue?';
      // Declined: nothing done, exit 0, as the docker CLI's cancelled prune.
      if (!f.bool('force') && !(await confirm(cli, warning))) return 0;
      const r = await api.prune({ filters: filtersOf(f.list('filter')) });
      if (r.NetworksDeleted?.length) cli.out(`Deleted Networks:\n${r.NetworksDeleted.join('\n')}\n\n`);
      return 0;
    }
  }
  throw new UsageError(`engine network: unknown command "${sub}"`);
}

const VOLUME_CREATE_FLAGS: FlagHelp[] = [
  { name: 'driver', short: 'd', kind: 'string', description: 'Specify volume driver name (default "local")' },
  { name: 'label', kind: 'list', description: 'Set metadata for a volume' },
  { name: 'opt', short: 'o', kind: 'list', description: 'Set driver specific options (default map[])' },
  { name: 'name', kind: 'string', description: 'Specify volume name' },
];

const VOLUME_RM_FLAGS: FlagHelp[] = [{ name: 'force', short: 'f', kind: 'bool', description: 'Force the removal of one or more volumes' }];

async function volumeCmd(cli: Cli, sub: string, argv: string[]): Promise<number> {
  const api = cli.api.volumes;
  switch (sub) {
    case 'ls':
    case 'list': {
      const f = flagsOf('volume ls', argv, LS_FLAGS, { max: 0 });
      const r = await api.list({ filters: filtersOf(f.list('filter')) });
      const rows = (r.Volumes ?? [])
        .sort((a, b) => byteOrder(a.Name, b.Name))
        .map((v) => ({
          Driver: v.Driver,
          Name: v.Name,
          Mountpoint: v.Mountpoint,
          Scope: v.Scope,
          Labels: Object.entries(v.Labels ?? {})
            .map(([k, x]) => `${k}=${x}`)
            .join(','),
        }));
      if (f.bool('quiet')) cli.out(rows.map((x) => `${x.Name}\n`).join(''));
      else
        printFormatted(
          rows,
          f.str('format') ?? 'table {{.Driver}}\t{{.Name}}',
          { Driver: 'DRIVER', Name: 'VOLUME NAME', Mountpoint: 'MOUNTPOINT', Scope: 'SCOPE', Labels: 'LABELS' },
          (s) => cli.out(s),
          cli.tableFit(f.bool('no-trunc')),
          { type: ROW.volume },
        );
      return 0;
    }
    case 'create': {
      const f = flagsOf('volume create', argv, VOLUME_CREATE_FLAGS, { max: 1 });
      const v = await api.create({
        Name: f.args[0] ?? f.str('name') ?? '',
        Driver: f.str('driver') ?? 'local',
        Labels: keyValues(f.list('label')),
        DriverOpts: keyValues(f.list('opt')),
      });
      cli.out(`${v.Name}\n`);
      return 0;
    }
    case 'rm':
    case 'remove': {
      const f = flagsOf('volume rm', argv, VOLUME_RM_FLAGS, { min: 1 });
      return eachName(cli, f.args, (n) => api.remove(n, { force: f.bool('force') }));
    }
    case 'inspect':
      return inspect(cli, argv, 'volume');
    case 'prune': {
      const f = flagsOf('volume prune', argv, PRUNE_FLAGS, { max: 0 });
      const which = f.bool('all') ? 'all local volumes' : 'anonymous local volumes';
      const warning = `WARNING! This will remove ${which} not used by at least one container.\nAre you sure you want to continue?`;
      if (!f.bool('force') && !(await confirm(cli, warning))) return 0;
      const filters = filtersOf(f.list('filter')) ?? {};
      if (f.bool('all')) filters.all = ['true'];
      const r = await api.prune({ filters });
      if (r.VolumesDeleted?.length) cli.out(`Deleted Volumes:\n${r.VolumesDeleted.join('\n')}\n\n`);
      cli.out(`Total reclaimed space: ${humanSize(r.SpaceReclaimed ?? 0)}\n`);
      return 0;
    }
  }
  throw new UsageError(`engine volume: unknown command "${sub}"`);
}

type Sub = [name: string, description: string, usage: string | undefined, flags: FlagHelp[] | undefined, aliases?: string[]];
const family = (name: string, description: string, cmd: typeof networkCmd, subs: Sub[]): CommandSpec => ({
  name,
  group: 'management',
  description,
  subcommands: subs.map(([sub, desc, usage, flags, aliases]) => ({
    name: sub,
    aliases,
    description: desc,
    usage,
    flags,
    run: (cli: Cli, argv: string[]) => cmd(cli, sub, argv),
  })),
});
const INSPECT_ONE = INSPECT_FLAGS.filter((f) => f.name !== 'type');

export const SPECS: CommandSpec[] = [
  family('network', 'Manage networks', networkCmd, [
    ['connect', 'Connect a container to a network', '[OPTIONS] NETWORK CONTAINER', NETWORK_CONNECT_FLAGS],
    ['create', 'Create a network', '[OPTIONS] NETWORK', NETWORK_CREATE_FLAGS],
    ['disconnect', 'Disconnect a container from a network', '[OPTIONS] NETWORK CONTAINER', NETWORK_DISCONNECT_FLAGS],
    ['inspect', 'Display detailed information on one or more networks', '[OPTIONS] NETWORK [NETWORK...]', INSPECT_ONE],
    ['ls', 'List networks', undefined, LS_FLAGS, ['list']],
    ['prune', 'Remove all unused networks', undefined, PRUNE_FLAGS],
    ['rm', 'Remove one or more networks', '[OPTIONS] NETWORK [NETWORK...]', NETWORK_RM_FLAGS, ['remove']],
  ]),
  family('volume', 'Manage volumes', volumeCmd, [
    ['create', 'Create a volume', '[OPTIONS] [VOLUME]', VOLUME_CREATE_FLAGS],
    ['inspect', 'Display detailed information on one or more volumes', '[OPTIONS] VOLUME [VOLUME...]', INSPECT_ONE],
    ['ls', 'List volumes', undefined, LS_FLAGS, ['list']],
    ['prune', 'Remove unused local volumes', undefined, PRUNE_FLAGS],
    ['rm', 'Remove one or more volumes', '[OPTIONS] VOLUME [VOLUME...]', VOLUME_RM_FLAGS, ['remove']],
  ]),
];
