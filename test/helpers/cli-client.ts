// Which command-line client `d.docker([...])` runs (daemon.ts): the docker CLI, or with
// ENGINE_TEST_CLI=engine the project's own `engine` (dist/bin/engine, the compiled client) on the same
// arguments, so one e2e test asserts the same answers of both clients (test/e2e/twin/ runs a chosen
// set of files this way). What `engine` has is read from its own command table (src/cli/main.ts's
// TABLE, the table its --help and completion print): a command, subcommand or flag it lacks sends
// that one call to the docker CLI instead, and the fallback is recorded (command, test, file) and
// written where ENGINE_TEST_CLI_REPORT names a directory, so a run says what engine did not cover.
import { appendFileSync, mkdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeEach } from 'node:test';
import type { CommandSpec, FlagHelp } from '../../src/cli/command-spec.ts';
import { findCommand, GLOBAL_FLAGS } from '../../src/cli/table.ts';

export type ClientName = 'docker' | 'engine';

/** The compiled `engine` CLI (scripts/build-cli.mjs), the second test client. */
export const ENGINE_CLI = join(resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..'), 'dist/bin/engine');

/** The client the e2e tests drive: ENGINE_TEST_CLI=engine|docker (docker unless set). */
export function testClient(): ClientName {
  const v = process.env.ENGINE_TEST_CLI ?? 'docker';
  if (v !== 'docker' && v !== 'engine') throw new Error(`ENGINE_TEST_CLI=${v}: expected engine or docker`);
  return v;
}

let table: Promise<readonly CommandSpec[]> | undefined;
/** engine's command table, loaded on first use (a docker-client run never loads the CLI's code). */
export function engineTable(): Promise<readonly CommandSpec[]> {
  table ??= import('../../src/cli/main.ts').then((m) => m.TABLE);
  return table;
}

/** The docker CLI's environment variables and the `engine` ones that mean the same. */
const ENV_TWINS: [string, string][] = [
  ['DOCKER_HOST', 'ENGINE_HOST'],
  ['DOCKER_CONFIG', 'ENGINE_CONFIG'],
  ['DOCKER_API_VERSION', 'ENGINE_API_VERSION'],
  ['DOCKER_TLS_VERIFY', 'ENGINE_TLS_VERIFY'],
  ['DOCKER_CERT_PATH', 'ENGINE_CERT_PATH'],
];

/** The environment of a docker CLI call as `engine` reads it (docker's variables kept: harmless). */
export function engineEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const [docker, engine] of ENV_TWINS) if (env[docker] !== undefined) out[engine] = env[docker];
  return out;
}

/**
 * Why `engine` cannot run these docker arguments: the first command word, subcommand or flag its
 * table lacks (`commit`, `swarm init`, `run --gpus`), or undefined when it has all of them. Flags are
 * checked up to the first positional word, as the table's parser reads them (after an image or a
 * container name the words are the container's), and `--` ends them.
 */
export function missingFromEngine(args: readonly string[], table: readonly CommandSpec[]): string | undefined {
  let i = 0;
  const path: string[] = [];
  const flags = (specs: readonly FlagHelp[]): string | undefined => {
    for (; i < args.length; i++) {
      const w = args[i]!;
      if (w === '--') return undefined;
      if (!w.startsWith('-') || w === '-') return undefined;
      const miss = flagMissing(w, specs, () => i++);
      if (miss) return [...path, miss].join(' ');
    }
    return undefined;
  };
  let miss = flags(GLOBAL_FLAGS);
  if (miss) return miss;
  let list = table;
  for (;;) {
    const w = args[i];
    if (w === undefined) return undefined; // `engine` alone, or a management command alone: help
    const spec = findCommand(list, w);
    if (!spec) return [...path, w].join(' ');
    path.push(spec.name);
    i++;
    if (!spec.subcommands) break;
    if (args[i] === '--help' || args[i] === '-h') return undefined;
    list = spec.subcommands;
  }
  miss = flags(lookupFlags(table, path));
  return miss;
}

function lookupFlags(table: readonly CommandSpec[], path: readonly string[]): readonly FlagHelp[] {
  let list = table;
  let spec: CommandSpec | undefined;
  for (const name of path) {
    spec = findCommand(list, name);
    list = spec?.subcommands ?? [];
  }
  // --help is every command's (args.ts answers it before the table's flags).
  return [...(spec?.flags ?? []), { name: 'help', kind: 'bool' }];
}

/** The flag word `w` names a flag `specs` lacks: its name; `skip` consumes the next word (a value). */
function flagMissing(w: string, specs: readonly FlagHelp[], skip: () => void): string | undefined {
  if (w.startsWith('--')) {
    const [name, value] = splitOnce(w.slice(2));
    const spec = specs.find((s) => s.name === name || s.alias?.includes(name));
    if (!spec) return `--${name}`;
    if (spec.kind !== 'bool' && value === undefined) skip();
    return undefined;
  }
  // -it, -p80:80, -e X=1, -f=x: short flags combine; the first that takes a value takes the rest.
  for (let k = 1; k < w.length; k++) {
    const spec = specs.find((s) => s.short === w[k]);
    if (!spec) return `-${w[k]}`;
    if (spec.kind !== 'bool') {
      if (k === w.length - 1) skip();
      return undefined;
    }
  }
  return undefined;
}

function splitOnce(s: string): [string, string | undefined] {
  const eq = s.indexOf('=');
  return eq < 0 ? [s, undefined] : [s.slice(0, eq), s.slice(eq + 1)];
}

/**
 * A shell command line starting with `docker ` (one a test runs under script(1) for a terminal) for
 * the client under test: `engine` and its variables when its table has the command (judged on the
 * words before the first quote), else unchanged and recorded as a fallback.
 */
export async function clientShellLine(line: string, env: NodeJS.ProcessEnv): Promise<{ line: string; env: NodeJS.ProcessEnv }> {
  if (testClient() !== 'engine' || !line.startsWith('docker ')) return { line, env };
  const words = line.slice('docker '.length).split(/["']/)[0]!.trim().split(/\s+/);
  const missing = missingFromEngine(words, await engineTable());
  if (missing !== undefined) {
    recordFallback(missing, words);
    return { line, env };
  }
  recordEngineCall();
  return { line: `${ENGINE_CLI} ${line.slice('docker '.length)}`, env: engineEnv(env) };
}

// ---- what the run did not cover -------------------------------------------------------------------

let currentTest = '';
/** Names each test for the fallback record (twin files import this module first). */
export function trackTests(): void {
  beforeEach((t) => {
    currentTest = (t as { fullName?: string }).fullName ?? t.name;
  });
}

/** Notes one call `engine` could not run (the docker CLI ran it instead). */
export function recordFallback(missing: string, args: readonly string[]): void {
  const dir = process.env.ENGINE_TEST_CLI_REPORT;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  const file = basename(process.argv[1] ?? 'unknown');
  const line = JSON.stringify({ file, test: currentTest, missing, args: args.slice(0, 4) });
  appendFileSync(join(dir, `${file}.jsonl`), `${line}\n`);
}

/** Counts one call the engine client ran itself (the report's denominator). */
export function recordEngineCall(): void {
  const dir = process.env.ENGINE_TEST_CLI_REPORT;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, `${basename(process.argv[1] ?? 'unknown')}.calls`), '.');
}
