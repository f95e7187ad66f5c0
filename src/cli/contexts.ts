// Contexts: named daemon endpoints kept in the config directory as the docker CLI keeps them —
// <config>/contexts/meta/<sha256(name)>/meta.json ({Name, Metadata, Endpoints.engine{Host,
// SkipTLSVerify}}) and TLS files under <config>/contexts/tls/<sha256(name)>/engine/. Which one
// applies, as docker decides: --context, else "default" when -H or ENGINE_HOST is given, else
// ENGINE_CONTEXT, else currentContext of config.json, else "default" (ENGINE_HOST or the socket).
// Commands: engine context create/ls/use/rm/inspect/show.
import type * as Crypto from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_SOCKET, type SettingsInput } from '../client/host.ts';
import { ExitError, flagsOf, UsageError } from './args.ts';
import type { CommandSpec, FlagHelp } from './command-spec.ts';
import type { Cli } from './cli.ts';
import type { CliConfig } from './config.ts';
import { byteOrder, printFormatted } from './output.ts';
import { readTextIfExists } from './out.ts';
import { ROW } from './go-types.ts';

export interface ContextMeta {
  Name: string;
  Metadata: { Description?: string };
  Endpoints: { engine: { Host: string; SkipTLSVerify?: boolean } };
}

// node:crypto (a dozen internal modules) loads only when a context is looked up, not per command.
const hash = (name: string) => (process.getBuiltinModule('node:crypto') as typeof Crypto).createHash('sha256').update(name).digest('hex');
const metaDir = (dir: string, name: string) => join(dir, 'contexts', 'meta', hash(name));
const tlsDir = (dir: string, name: string) => join(dir, 'contexts', 'tls', hash(name), 'engine');

export function readContext(configDir: string, name: string): ContextMeta | undefined {
  const f = join(metaDir(configDir, name), 'meta.json');
  const text = readTextIfExists(f);
  return text === undefined ? undefined : (JSON.parse(text) as ContextMeta);
}

export function listContexts(configDir: string): ContextMeta[] {
  const root = join(configDir, 'contexts', 'meta');
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .flatMap((h) => {
      const f = join(root, h, 'meta.json');
      return existsSync(f) ? [JSON.parse(readFileSync(f, 'utf8')) as ContextMeta] : [];
    })
    .sort((a, b) => byteOrder(a.Name, b.Name));
}

/** The context in force: its name, and the settings it gives (undefined for "default"). */
export function resolveContext(
  flag: string | undefined,
  hostGiven: boolean,
  env: NodeJS.ProcessEnv,
  configOf: CliConfig | (() => CliConfig),
): { name: string; settings?: SettingsInput } {
  // The config file is read only when no host was given (a command with -H or ENGINE_HOST skips it).
  const config = () => (typeof configOf === 'function' ? configOf() : configOf);
  if (flag && hostGiven) throw new UsageError('conflicting options: either specify --host or --context, not both');
  const name =
    flag ||
    (hostGiven || env.ENGINE_HOST ? 'default' : env.ENGINE_CONTEXT || (config().data.currentContext as string | undefined) || 'default');
  if (name === 'default') return { name };
  const meta = readContext(config().dir, name);
  if (!meta) throw new UsageError(`context "${name}" does not exist`);
  const ep = meta.Endpoints.engine;
  const tls = tlsDir(config().dir, name);
  return { name, settings: { host: ep.Host, ...(existsSync(tls) ? { certPath: tls, tls: true, tlsVerify: !ep.SkipTLSVerify } : {}) } };
}

const CONTEXT_CREATE_FLAGS: FlagHelp[] = [
  { name: 'description', kind: 'string', description: 'Description of the context' },
  { name: 'docker', kind: 'string', description: 'set the docker endpoint (default [])' },
  { name: 'host', kind: 'string', description: 'Engine endpoint (unix://…, tcp://…, ssh://…)' },
  { name: 'tlsverify', kind: 'bool', description: 'Use TLS and verify the remote' },
  { name: 'tlscacert', kind: 'string', description: 'Trust certs signed only by this CA' },
  { name: 'tlscert', kind: 'string', description: 'Path to TLS certificate file' },
  { name: 'tlskey', kind: 'string', description: 'Path to TLS key file' },
  { name: 'skip-tls-verify', kind: 'bool', description: 'Skip TLS verification of the endpoint' },
];

const CONTEXT_LS_FLAGS: FlagHelp[] = [
  { name: 'quiet', short: 'q', kind: 'bool', description: 'Only show context names' },
  { name: 'format', kind: 'string', description: 'Pretty-print contexts using a Go template' },
];

const CONTEXT_RM_FLAGS: FlagHelp[] = [{ name: 'force', short: 'f', kind: 'bool', description: 'Force the removal of a context in use' }];

const CONTEXT_INSPECT_FLAGS: FlagHelp[] = [
  { name: 'format', short: 'f', kind: 'string', description: 'Format the output using the given Go template' },
];

export async function context(cli: Cli, argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const dir = cli.config.dir;
  switch (sub) {
    case 'create': {
      const f = flagsOf('context create', rest, CONTEXT_CREATE_FLAGS, { min: 1, max: 1 });
      const name = f.args[0]!;
      if (name === 'default' || !/^[a-zA-Z0-9][a-zA-Z0-9_.+-]*$/.test(name)) throw new UsageError(`context name "${name}" is invalid`);
      if (readContext(dir, name)) throw new UsageError(`context "${name}" already exists`);
      // --docker host=…,skip-tls-verify=… as docker takes it, or --host directly.
      const kv = Object.fromEntries(
        (f.str('docker') ?? '')
          .split(',')
          .filter(Boolean)
          .map((p) => p.split('=') as [string, string]),
      );
      const host = f.str('host') ?? kv.host ?? `unix://${DEFAULT_SOCKET}`;
      const meta: ContextMeta = {
        Name: name,
        Metadata: { Description: f.str('description') ?? '' },
        Endpoints: { engine: { Host: host, SkipTLSVerify: f.bool('skip-tls-verify') || kv['skip-tls-verify'] === 'true' } },
      };
      mkdirSync(metaDir(dir, name), { recursive: true, mode: 0o700 });
      writeFileSync(join(metaDir(dir, name), 'meta.json'), JSON.stringify(meta));
      const files: [string | undefined, string][] = [
        [f.str('tlscacert') ?? kv.ca, 'ca.pem'],
        [f.str('tlscert') ?? kv.cert, 'cert.pem'],
        [f.str('tlskey') ?? kv.key, 'key.pem'],
      ];
      if (files.some(([src]) => src)) {
        mkdirSync(tlsDir(dir, name), { recursive: true, mode: 0o700 });
        for (const [src, dst] of files) if (src) copyFileSync(src, join(tlsDir(dir, name), dst));
      }
      cli.out(`${name}\n`);
      cli.err(`Successfully created context "${name}"\n`);
      return 0;
    }
    case 'ls':
    case 'list': {
      const f = flagsOf('context ls', rest, CONTEXT_LS_FLAGS, { max: 0 });
      const current = cli.contextName;
      const rows = [
        {
          Name: 'default',
          Description: 'Current ENGINE_HOST based configuration',
          EngineEndpoint: cli.env.ENGINE_HOST || `unix://${DEFAULT_SOCKET}`,
        },
        ...listContexts(dir).map((m) => ({
          Name: m.Name,
          Description: m.Metadata.Description ?? '',
          EngineEndpoint: m.Endpoints.engine.Host,
        })),
      ].map((r) => ({ ...r, Current: r.Name === current, Name: r.Name === current && !f.str('format') ? `${r.Name} *` : r.Name }));
      if (f.bool('quiet')) cli.out(rows.map((r) => `${r.Name.replace(/ \*$/, '')}\n`).join(''));
      else
        printFormatted(
          rows,
          f.str('format') ?? 'table {{.Name}}\t{{.Description}}\t{{.EngineEndpoint}}',
          { Name: 'NAME', Description: 'DESCRIPTION', EngineEndpoint: 'ENGINE ENDPOINT' },
          (s) => cli.out(s),
          undefined,
          { type: ROW.context },
        );
      return 0;
    }
    case 'use': {
      const f = flagsOf('context use', rest, [], { min: 1, max: 1 });
      const name = f.args[0]!;
      if (name !== 'default' && !readContext(dir, name)) throw new UsageError(`context "${name}" does not exist`);
      if (name === 'default') delete cli.config.data.currentContext;
      else cli.config.data.currentContext = name;
      cli.config.save();
      cli.out(`${name}\n`);
      cli.err(`Current context is now "${name}"\n`);
      return 0;
    }
    case 'rm':
    case 'remove': {
      const f = flagsOf('context rm', rest, CONTEXT_RM_FLAGS, { min: 1 });
      for (const name of f.args) {
        if (!readContext(dir, name)) throw new UsageError(`context "${name}" does not exist`);
        if (cli.config.data.currentContext === name && !f.bool('force'))
          throw new UsageError(`context "${name}" is in use, set -f flag to force remove`);
        rmSync(metaDir(dir, name), { recursive: true, force: true });
        rmSync(join(dir, 'contexts', 'tls', hash(name)), { recursive: true, force: true });
        if (cli.config.data.currentContext === name) {
          delete cli.config.data.currentContext;
          cli.config.save();
        }
        cli.out(`${name}\n`);
      }
      return 0;
    }
    case 'inspect': {
      const f = flagsOf('context inspect', rest, CONTEXT_INSPECT_FLAGS);
      const names = f.args.length ? f.args : [cli.contextName];
      const { printTyped, Refusal, goJsonIndented, typed } = await import('./commands/go-struct.ts');
      // Each context as the docker CLI lists it (contextWithTLSListing), a missing one in its words.
      const items = names.map((n) => {
        const meta =
          readContext(dir, n) ??
          (n === 'default'
            ? { Name: 'default', Metadata: {}, Endpoints: { engine: { Host: cli.env.ENGINE_HOST || `unix://${DEFAULT_SOCKET}` } } }
            : undefined);
        return meta
          ? listing(dir, meta)
          : new Refusal(`context "${n}": context not found: open ${join(metaDir(dir, n), 'meta.json')}: no such file or directory`);
      });
      const format = f.str('format');
      const errors = format
        ? printTyped(cli, items, format, 'context.contextWithTLSListing')
        : items.flatMap((it) => (it instanceof Refusal ? [it.message] : []));
      if (!format) {
        const found = items.filter((it) => !(it instanceof Refusal)).map((it) => typed(it, 'context.contextWithTLSListing'));
        cli.out(`${found.length ? goJsonIndented(found) : '[]'}\n`);
      }
      if (errors.length) throw new ExitError(1, errors.join('\n'));
      return 0;
    }
    case 'show':
      flagsOf('context show', rest, [], { max: 0 });
      cli.out(`${cli.contextName}\n`);
      return 0;
  }
  throw new UsageError(`engine context: '${sub ?? ''}' is not an engine context command.`);
}

/** A context as the docker CLI inspects it: its metadata, the TLS files of each endpoint, where it is stored. */
function listing(dir: string, meta: ContextMeta): unknown {
  const { Description, ...AdditionalFields } = meta.Metadata ?? {};
  const stored = readContext(dir, meta.Name) !== undefined;
  const tls = join(dir, 'contexts', 'tls', hash(meta.Name));
  const TLSMaterial = Object.fromEntries(
    stored && existsSync(tls) ? readdirSync(tls).map((ep) => [ep, readdirSync(join(tls, ep)).sort(byteOrder)]) : [],
  );
  return {
    Name: meta.Name,
    Metadata: { Description, AdditionalFields },
    Endpoints: meta.Endpoints,
    TLSMaterial,
    Storage: stored ? { MetadataPath: metaDir(dir, meta.Name), TLSPath: tls } : { MetadataPath: '<IN MEMORY>', TLSPath: '<IN MEMORY>' },
  };
}

const sub = (name: string, description: string, usage?: string, flags?: FlagHelp[], aliases?: string[]): CommandSpec => ({
  name,
  aliases,
  description,
  usage,
  flags,
  run: (cli, argv) => context(cli, [name, ...argv]),
});

export const SPECS: CommandSpec[] = [
  {
    name: 'context',
    group: 'management',
    description: 'Manage contexts',
    subcommands: [
      sub('create', 'Create a context', '[OPTIONS] CONTEXT', CONTEXT_CREATE_FLAGS),
      sub('inspect', 'Display detailed information on one or more contexts', '[OPTIONS] [CONTEXT] [CONTEXT...]', CONTEXT_INSPECT_FLAGS),
      sub('ls', 'List contexts', undefined, CONTEXT_LS_FLAGS, ['list']),
      sub('rm', 'Remove one or more contexts', '[OPTIONS] CONTEXT [CONTEXT...]', CONTEXT_RM_FLAGS, ['remove']),
      sub('show', 'Print the name of the current context'),
      sub('use', 'Set the current engine context', 'CONTEXT'),
    ],
  },
];
