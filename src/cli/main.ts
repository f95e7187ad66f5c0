// Entry point of `engine`, the command-line client: global options (-H/--host, --tls, --tlsverify,
// --tlscacert/--tlscert/--tlskey, --config, -v), then a docker-compatible command, also under its
// management-command name (engine container ls = engine ps). Commands return the exit status;
// errors are printed and mapped by Cli.report. bin/engine runs the bundle of this file.
import { flagsOf, UsageError, type FlagSpec } from './args.ts';
import { Cli, type Command } from './cli.ts';
import * as c from './commands/containers.ts';
import * as img from './commands/images.ts';
import * as pr from './commands/prune.ts';
import { network, volume } from './commands/resources.ts';
import * as r from './commands/run.ts';
import * as sys from './commands/system.ts';
import { ENGINE_VERSION } from '../version.ts';
import { context, resolveContext } from './contexts.ts';
import { findFamily, runSpec } from './commands/families.ts';

const COMMANDS: Record<string, Command> = {
  run: r.run,
  create: r.create,
  start: r.start,
  attach: r.attach,
  exec: r.exec,
  ps: c.ps,
  rm: c.rm,
  stop: c.stop,
  restart: c.restart,
  kill: c.kill,
  pause: c.pause,
  unpause: c.unpause,
  rename: c.rename,
  wait: c.wait,
  logs: c.logs,
  top: c.top,
  port: c.port,
  inspect: (cli, a) => c.inspect(cli, a),
  images: img.images,
  pull: img.pull,
  push: img.push,
  tag: img.tag,
  rmi: img.rmi,
  history: img.history,
  save: img.save,
  load: img.load,
  build: img.build,
  login: img.login,
  logout: img.logout,
  network,
  volume,
  context,
  version: sys.version,
  info: sys.info,
  events: sys.events,
  stats: sys.stats,
  cp: sys.cp,
};

/** Management commands: `engine container ls` → ps, and the subcommands that exist only there. */
const GROUPS: Record<string, Record<string, Command>> = {
  container: {
    ls: c.ps,
    list: c.ps,
    ps: c.ps,
    run: r.run,
    create: r.create,
    start: r.start,
    attach: r.attach,
    exec: r.exec,
    rm: c.rm,
    remove: c.rm,
    stop: c.stop,
    restart: c.restart,
    kill: c.kill,
    pause: c.pause,
    unpause: c.unpause,
    rename: c.rename,
    wait: c.wait,
    logs: c.logs,
    top: c.top,
    port: c.port,
    stats: sys.stats,
    cp: sys.cp,
    prune: pr.containerPrune,
    inspect: (cli, a) => c.inspect(cli, a, 'container'),
  },
  image: {
    ls: img.images,
    list: img.images,
    pull: img.pull,
    push: img.push,
    tag: img.tag,
    rm: img.rmi,
    remove: img.rmi,
    history: img.history,
    save: img.save,
    load: img.load,
    build: img.build,
    prune: pr.imagePrune,
    inspect: (cli, a) => c.inspect(cli, a, 'image'),
  },
  system: { df: pr.df, prune: pr.systemPrune, info: sys.info, events: sys.events, 'dial-stdio': sys.dialStdio },
};

const GLOBAL: FlagSpec[] = [
  { name: 'host', short: 'H', kind: 'list' },
  { name: 'tls', kind: 'bool' },
  { name: 'tlsverify', kind: 'bool' },
  { name: 'tlscacert', kind: 'string' },
  { name: 'tlscert', kind: 'string' },
  { name: 'tlskey', kind: 'string' },
  { name: 'config', kind: 'string' },
  { name: 'debug', short: 'D', kind: 'bool' },
  { name: 'log-level', short: 'l', kind: 'string' },
  { name: 'version', short: 'v', kind: 'bool' },
  { name: 'help', kind: 'bool' },
  { name: 'context', short: 'c', kind: 'string' },
];

const USAGE = `Usage:  engine [OPTIONS] COMMAND

A docker-compatible client of the engine daemon (ENGINE_HOST, ENGINE_TLS_VERIFY, ENGINE_CERT_PATH, ENGINE_API_VERSION).

Commands:
  ${Object.keys(COMMANDS).sort().join(' ')}
Management commands:
  container image network volume system

Global options: -H/--host, --tls, --tlsverify, --tlscacert, --tlscert, --tlskey, --config, -v/--version
`;

export async function main(argv: string[]): Promise<number> {
  let cli: Cli | undefined;
  let name = '';
  try {
    const g = flagsOf('', argv, GLOBAL, { interspersed: false });
    if (g.bool('version')) {
      process.stdout.write(`Engine version ${ENGINE_VERSION}\n`);
      return 0;
    }
    const hosts = g.list('host');
    if (hosts.length > 1) throw new UsageError('Specify only one -H');
    const flagSettings = {
      host: hosts[0],
      tls: g.bool('tls') || undefined,
      tlsVerify: g.bool('tlsverify') || undefined,
      tlsCaCert: g.str('tlscacert'),
      tlsCert: g.str('tlscert'),
      tlsKey: g.str('tlskey'),
    };
    cli = new Cli(flagSettings, g.str('config'));
    const ctx = resolveContext(g.str('context'), hosts.length > 0, process.env, () => cli!.config);
    if (ctx.settings) cli = new Cli({ ...ctx.settings }, g.str('config'));
    cli.contextName = ctx.name;
    const [cmd, ...rest] = g.args;
    name = cmd ?? '';
    if (!cmd || g.bool('help') || cmd === 'help') {
      process.stdout.write(USAGE);
      return 0;
    }
    // The families written as command-table entries (commands/families.ts), before the older tables.
    const family = await findFamily(cmd, rest[0]);
    if (family) {
      const { spec, top } = family;
      name = top ? `${cmd} ${spec.subcommands ? (rest[0] ?? '') : ''}`.trim() : `${cmd} ${spec.name}`;
      return await (top ? runSpec(cli, spec, rest) : runSpec(cli, spec, rest.slice(1), name));
    }
    if (cmd in GROUPS) {
      const [sub, ...subArgs] = rest;
      const fn = sub ? GROUPS[cmd]![sub] : undefined;
      if (!fn) throw new UsageError(`engine ${cmd}: '${sub ?? ''}' is not an engine ${cmd} command.`);
      name = `${cmd} ${sub}`;
      return await fn(cli, subArgs);
    }
    const fn = COMMANDS[cmd];
    if (!fn) throw new UsageError(`engine: '${cmd}' is not an engine command.`);
    return await fn(cli, rest);
  } catch (e) {
    if (!cli) cli = new Cli({}, undefined);
    return cli.report(e, name.split(' ').pop() ?? name, name);
  } finally {
    cli?.close();
  }
}

// Run when executed (the bundle or dist/src/cli/main.js), not when imported by a test.
if (process.argv[1] && /(?:^|\/)(?:main\.js|engine\.c?js)$/.test(process.argv[1])) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
      // Flush stdout before leaving: a pipe may still hold output.
      if (process.stdout.writableLength === 0) process.exit(code);
      else process.stdout.once('drain', () => process.exit(code));
    },
    (e) => {
      process.stderr.write(`${(e as Error).stack ?? e}\n`);
      process.exit(1);
    },
  );
}
