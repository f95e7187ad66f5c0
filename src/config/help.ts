// `engined --help`: every command-line option from the table, sorted by name like dockerd's help,
// with its short form, the kind of value it takes and its default.

import { ENVIRONMENT, type EnvironmentSpec } from './environment.ts';
import { OPTIONS, type OptionSpec, type OptionType } from './options.ts';
import { formatValue } from './values.ts';

const VALUE_NAMES: Record<OptionType, string> = {
  bool: '',
  string: 'string',
  int: 'int',
  list: 'list',
  map: 'map',
  ulimits: 'ulimit',
  runtimes: 'runtime',
  features: 'map',
  'address-pools': 'pool-options',
  'network-opts': 'mapmap',
  object: '',
};

function defaultText(opt: OptionSpec): string {
  if (opt.default === undefined) return '';
  const shown = typeof opt.default === 'string' ? JSON.stringify(opt.default) : formatValue(opt.default);
  return ` (default ${shown})`;
}

export function usageText(): string {
  const rows = OPTIONS.filter((o) => !o.fileOnly)
    .sort((a, b) => (a.flag < b.flag ? -1 : a.flag > b.flag ? 1 : 0))
    .map((o) => {
      const names = o.short ? `-${o.short}, --${o.flag}` : `    --${o.flag}`;
      const value = VALUE_NAMES[o.type];
      return [`  ${names}${value ? ` ${value}` : ''}`, `${o.help}${defaultText(o)}`] as const;
    });
  const envRows = (ENVIRONMENT as readonly EnvironmentSpec[]).map(
    (e) => [`  ${e.name}=${typeof e.values === 'string' ? `<${e.values}>` : e.values.filter(Boolean).join('|')}`, e.help] as const,
  );
  const width = Math.max(...[...rows, ...envRows].map(([left]) => left.length)) + 3;
  const lines = rows.map(([left, right]) => left.padEnd(width) + right);
  const envLines = envRows.map(([left, right]) => left.padEnd(width) + right);
  return [
    'Usage:\tengined [OPTIONS]',
    '',
    'A container engine daemon serving the Docker Engine API.',
    '',
    'Options:',
    ...lines,
    '',
    'Environment:',
    ...envLines,
    '',
  ].join('\n');
}
