// engine network * and volume *: ls (tables and --format), create, rm, inspect, prune, and
// network connect/disconnect.
import { filtersOf, flagsOf, keyValues, UsageError, type FlagSpec } from '../args.ts';
import { eachName, type Cli } from '../cli.ts';
import { humanSize, printFormatted, shortId } from '../output.ts';
import { inspect } from './containers.ts';
import { confirm } from './family-output.ts';

const LS_FLAGS: FlagSpec[] = [
  { name: 'quiet', short: 'q', kind: 'bool' },
  { name: 'filter', short: 'f', kind: 'list' },
  { name: 'format', kind: 'string' },
  { name: 'no-trunc', kind: 'bool' },
];
const PRUNE_FLAGS: FlagSpec[] = [
  { name: 'force', short: 'f', kind: 'bool' },
  { name: 'filter', kind: 'list' },
  { name: 'all', short: 'a', kind: 'bool' },
];

async function networkCmd(cli: Cli, sub: string, argv: string[]): Promise<number> {
  const api = cli.api.networks;
  switch (sub) {
    case 'ls':
    case 'list': {
      const f = flagsOf('network ls', argv, LS_FLAGS, { max: 0 });
      const list = await api.list({ filters: filtersOf(f.list('filter')) });
      list.sort((a, b) => String(a.Name).localeCompare(String(b.Name)));
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
        );
      return 0;
    }
    case 'create': {
      const f = flagsOf(
        'network create',
        argv,
        [
          { name: 'driver', short: 'd', kind: 'string' },
          { name: 'subnet', kind: 'list' },
          { name: 'gateway', kind: 'list' },
          { name: 'ip-range', kind: 'list' },
          { name: 'internal', kind: 'bool' },
          { name: 'attachable', kind: 'bool' },
          { name: 'ipv6', kind: 'bool' },
          { name: 'label', kind: 'list' },
          { name: 'opt', short: 'o', kind: 'list' },
          { name: 'ipam-driver', kind: 'string' },
        ],
        { min: 1, max: 1 },
      );
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
      const f = flagsOf('network rm', argv, [{ name: 'force', short: 'f', kind: 'bool' }], { min: 1 });
      return eachName(cli, f.args, (n) => api.remove(n));
    }
    case 'inspect':
      return inspect(cli, argv, 'network');
    case 'connect': {
      const f = flagsOf(
        'network connect',
        argv,
        [
          { name: 'alias', kind: 'list' },
          { name: 'ip', kind: 'string' },
          { name: 'ip6', kind: 'string' },
        ],
        { min: 2, max: 2 },
      );
      await api.connect(f.args[0]!, f.args[1]!, {
        Aliases: f.list('alias'),
        ...(f.str('ip') || f.str('ip6') ? { IPAMConfig: { IPv4Address: f.str('ip'), IPv6Address: f.str('ip6') } } : {}),
      });
      return 0;
    }
    case 'disconnect': {
      const f = flagsOf('network disconnect', argv, [{ name: 'force', short: 'f', kind: 'bool' }], { min: 2, max: 2 });
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

async function volumeCmd(cli: Cli, sub: string, argv: string[]): Promise<number> {
  const api = cli.api.volumes;
  switch (sub) {
    case 'ls':
    case 'list': {
      const f = flagsOf('volume ls', argv, LS_FLAGS, { max: 0 });
      const r = await api.list({ filters: filtersOf(f.list('filter')) });
      const rows = (r.Volumes ?? [])
        .sort((a, b) => a.Name.localeCompare(b.Name))
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
        );
      return 0;
    }
    case 'create': {
      const f = flagsOf(
        'volume create',
        argv,
        [
          { name: 'driver', short: 'd', kind: 'string' },
          { name: 'label', kind: 'list' },
          { name: 'opt', short: 'o', kind: 'list' },
          { name: 'name', kind: 'string' },
        ],
        { max: 1 },
      );
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
      const f = flagsOf('volume rm', argv, [{ name: 'force', short: 'f', kind: 'bool' }], { min: 1 });
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

export const network = (cli: Cli, argv: string[]) => networkCmd(cli, argv[0] ?? '', argv.slice(1));
export const volume = (cli: Cli, argv: string[]) => volumeCmd(cli, argv[0] ?? '', argv.slice(1));
