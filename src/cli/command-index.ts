// Which commands file runs a command line, without evaluating any of them: the `engine` CLI starts
// for every command, and the whole table (command-table.ts: every family's flags, help texts,
// compose schema, Go layouts…) costs milliseconds of CPU and megabytes at start-up that `engine ps`
// has no use for. Each file is imported on use (import(); in the CommonJS bundle a module
// initialised on first call), and dispatch.ts resolves the words in its list alone. Anything this
// index does not know (help, completion, an unknown or misspelt word) goes to the full table, so
// the index can only make a command slower, never different (table.test.ts checks every path).
import type { CommandSpec } from './command-spec.ts';

/** One commands file's entries (its `SPECS`), loaded on first use. */
export type Family = () => Promise<readonly CommandSpec[]>;

const RUN: Family = () => import('./commands/run.ts').then((m) => m.SPECS);
const CONTAINERS: Family = () => import('./commands/containers.ts').then((m) => m.SPECS);
const IMAGES: Family = () => import('./commands/images.ts').then((m) => m.SPECS);
const SYSTEM: Family = () => import('./commands/system.ts').then((m) => m.SPECS);
const RESOURCES: Family = () => import('./commands/resources.ts').then((m) => m.SPECS);
const CONTEXTS: Family = () => import('./contexts.ts').then((m) => m.SPECS);
const MANAGEMENT: Family = () => import('./commands/management.ts').then((m) => m.SPECS);
const EXTRA: Family = () => import('./commands/containers-extra.ts').then((m) => [...m.SPECS, ...m.UNDER_MANAGEMENT]);
const PLUGINS: Family = () => import('./commands/plugins.ts').then((m) => m.SPECS);
const BUILDER: Family = () => import('./commands/builder.ts').then((m) => m.SPECS);
const SWARM: Family = () => import('./commands/cluster/swarm.ts').then((m) => m.SPECS);
const NODE: Family = () => import('./commands/cluster/node.ts').then((m) => m.SPECS);
const SERVICE: Family = () => import('./commands/cluster/service.ts').then((m) => m.SPECS);
const SECRETS: Family = () => import('./commands/cluster/secrets.ts').then((m) => m.SPECS);
const STACK: Family = () => import('./commands/cluster/stack.ts').then((m) => m.SPECS);

/** A top-level command → its file (a management command's subcommands live in its own file). */
function topFamily(name: string): Family | undefined {
  switch (name) {
    case 'run':
    case 'create':
    case 'start':
    case 'attach':
    case 'exec':
      return RUN;
    case 'ps':
    case 'rm':
    case 'stop':
    case 'restart':
    case 'kill':
    case 'pause':
    case 'unpause':
    case 'wait':
    case 'rename':
    case 'logs':
    case 'top':
    case 'port':
    case 'inspect':
      return CONTAINERS;
    case 'images':
    case 'pull':
    case 'push':
    case 'build':
    case 'tag':
    case 'rmi':
    case 'history':
    case 'save':
    case 'load':
    case 'login':
    case 'logout':
      return IMAGES;
    case 'version':
    case 'info':
    case 'events':
    case 'stats':
    case 'cp':
      return SYSTEM;
    case 'network':
    case 'volume':
      return RESOURCES;
    case 'context':
      return CONTEXTS;
    case 'system':
      return MANAGEMENT;
    case 'commit':
    case 'diff':
    case 'export':
    case 'import':
    case 'update':
    case 'search':
      return EXTRA;
    case 'plugin':
      return PLUGINS;
    case 'builder':
      return BUILDER;
    case 'swarm':
      return SWARM;
    case 'node':
      return NODE;
    case 'service':
      return SERVICE;
    case 'config':
    case 'secret':
      return SECRETS;
    case 'stack':
      return STACK;
  }
  return undefined;
}

/** `container` and `image` are assembled from two files: management.ts's, and these subcommands of containers-extra.ts. */
const EXTRA_SUBS: Readonly<Record<'container' | 'image', readonly string[]>> = {
  container: ['commit', 'diff', 'export', 'update'],
  image: ['import'],
};

/** The file whose entries run `words` (the command and what follows it), or undefined: the full table's case. */
export function familyOf(words: readonly string[]): Family | undefined {
  const [first = '', second] = words;
  if (first !== 'container' && first !== 'image') return topFamily(first);
  const extra = EXTRA_SUBS[first];
  if (second === undefined || second.startsWith('-')) return undefined;
  return extra.includes(second) ? EXTRA : MANAGEMENT;
}
