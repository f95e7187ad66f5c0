// The second pass of the Dockerfile parser: one logical line → one typed Instruction, with the
// argument rules and messages of Docker's parser (buildkit frontend/dockerfile/instructions).
// Words stay unexpanded. Flags only BuildKit understands (RUN --mount, COPY --parents …) are
// refused here with Docker's "requires BuildKit" message, before any step runs.
import type { HealthConfig } from '../../types/container-api.ts';
import { FlagError, parseFlags, parseGoDuration, type FlagType } from './flags.ts';
import { JsonArrayError, parseJsonArray, parseWords, splitCommand, splitFirstWhitespace, splitHealthType, splitWhitespace } from './split.ts';
import type { ArgDecl, CopySpec, EscapeChar, Instruction, InstructionBase, InstructionKind } from './types.ts';

export class InstructionError extends Error {}

const KINDS = new Set<string>([
  'FROM', 'RUN', 'CMD', 'ENTRYPOINT', 'ENV', 'ARG', 'LABEL', 'EXPOSE', 'USER', 'WORKDIR', 'VOLUME',
  'COPY', 'ADD', 'ONBUILD', 'STOPSIGNAL', 'HEALTHCHECK', 'MAINTAINER', 'SHELL',
]);

const FLAGS: Partial<Record<InstructionKind, Record<string, FlagType>>> = {
  FROM: { platform: 'string' },
  RUN: { mount: 'strings', network: 'string', security: 'string', device: 'strings' },
  COPY: { chown: 'string', from: 'string', chmod: 'string', link: 'bool', exclude: 'strings', parents: 'bool' },
  ADD: { chown: 'string', chmod: 'string', link: 'bool', 'keep-git-dir': 'bool', checksum: 'string', unpack: 'bool', exclude: 'strings' },
  HEALTHCHECK: { interval: 'string', timeout: 'string', 'start-period': 'string', 'start-interval': 'string', retries: 'string' },
};

/** Flags the classic builder cannot honour (dockerd refuses them the same way). */
const BUILDKIT_ONLY: Partial<Record<InstructionKind, string[]>> = {
  RUN: ['mount', 'network', 'security', 'device'],
  COPY: ['exclude', 'parents'],
  ADD: ['keep-git-dir', 'checksum', 'unpack', 'exclude'],
};

const requiresBuildkit = (flag: string) =>
  new InstructionError(`the --${flag} option requires BuildKit. Refer to https://docs.docker.com/go/buildkit/ to learn how to build images with BuildKit enabled`);

const atLeastOne = (k: string) => new InstructionError(`${k} requires at least one argument`);
const exactlyOne = (k: string) => new InstructionError(`${k} requires exactly one argument`);

/** A line such as `RUN make` → its Instruction; `line`/`endLine` locate it in the Dockerfile. */
export function buildInstruction(text: string, escape: EscapeChar, line: number, endLine: number): Instruction {
  const { cmd, flags: rawFlags, rest } = splitCommand(text, escape);
  const kind = cmd.toUpperCase();
  if (!KINDS.has(kind)) throw new InstructionError(`unknown instruction: ${cmd}`);
  const k = kind as InstructionKind;
  // HEALTHCHECK NONE and STOPSIGNAL never look at their flags in Docker's parser.
  const skipFlags = k === 'STOPSIGNAL' || (k === 'HEALTHCHECK' && splitHealthType(rest).type.toUpperCase() === 'NONE');
  let flags: Record<string, string> = {};
  if (!skipFlags) {
    try {
      flags = parseFlags(rawFlags, FLAGS[k] ?? {});
    } catch (err) {
      if (err instanceof FlagError) throw new InstructionError(err.message);
      throw err;
    }
    for (const f of BUILDKIT_ONLY[k] ?? []) if (f in flags) throw requiresBuildkit(f);
  }
  const base: InstructionBase = { line, endLine, original: text.trim(), flags };
  try {
    return build(k, base, rest, escape);
  } catch (err) {
    if (err instanceof JsonArrayError || err instanceof FlagError) throw new InstructionError(err.message);
    throw err;
  }
}

function build(k: InstructionKind, base: InstructionBase, rest: string, escape: EscapeChar): Instruction {
  switch (k) {
    case 'FROM': {
      const args = splitWhitespace(rest);
      let stageName: string | undefined;
      if (args.length === 3 && args[1]!.toLowerCase() === 'as') {
        stageName = args[2]!.toLowerCase();
        if (!/^[a-z][a-z0-9-_.]*$/.test(stageName)) {
          throw new InstructionError(`invalid name for build stage: ${JSON.stringify(args[2])}, name can't start with a number or contain symbols`);
        }
      } else if (args.length !== 1) {
        throw new InstructionError('FROM requires either one or three arguments');
      }
      return { kind: 'FROM', ...base, image: args[0]!, stageName, platform: base.flags.platform || undefined };
    }
    case 'RUN': case 'CMD': case 'ENTRYPOINT':
      return { kind: k, ...base, ...commandLine(rest) } as Instruction;
    case 'SHELL': {
      const json = rest === '' ? null : parseJsonArray(rest);
      if (json === null && rest === '') throw atLeastOne('SHELL');
      if (json === null) throw new InstructionError('SHELL requires the arguments to be in JSON form');
      if (json.length === 0) throw atLeastOne('SHELL');
      return { kind: 'SHELL', ...base, shell: json };
    }
    case 'ENV': case 'LABEL':
      return { kind: k, ...base, pairs: keyValuePairs(k, rest, escape) } as Instruction;
    case 'ARG': {
      const words = parseWords(rest, escape);
      if (words.length === 0) throw atLeastOne('ARG');
      const args: ArgDecl[] = words.map((w) => {
        const eq = w.indexOf('=');
        if (eq < 0) return { name: w };
        if (eq === 0) throw new InstructionError('ARG names can not be blank');
        return { name: w.slice(0, eq), default: w.slice(eq + 1) };
      });
      return { kind: 'ARG', ...base, args };
    }
    case 'EXPOSE': {
      const ports = splitWhitespace(rest);
      if (ports.length === 0) throw atLeastOne('EXPOSE');
      return { kind: 'EXPOSE', ...base, ports: ports.sort() };
    }
    case 'USER': case 'WORKDIR': case 'MAINTAINER': case 'STOPSIGNAL': {
      if (rest === '') throw exactlyOne(k);
      if (k === 'USER') return { kind: k, ...base, user: rest };
      if (k === 'WORKDIR') return { kind: k, ...base, path: rest };
      if (k === 'MAINTAINER') return { kind: k, ...base, maintainer: rest };
      return { kind: k, ...base, signal: rest };
    }
    case 'VOLUME': {
      const paths = jsonOrWhitespace(rest);
      if (paths.length === 0) throw atLeastOne('VOLUME');
      const trimmed = paths.map((p) => p.trim());
      if (trimmed.some((p) => p === '')) throw new InstructionError('VOLUME specified can not be an empty string');
      return { kind: 'VOLUME', ...base, paths: trimmed };
    }
    case 'COPY': case 'ADD':
      return { kind: k, ...base, ...copySpec(k, base.flags, rest) } as Instruction;
    case 'ONBUILD': {
      if (rest === '') throw atLeastOne('ONBUILD');
      const trigger = splitFirstWhitespace(rest)[0].toUpperCase();
      if (trigger === 'ONBUILD') throw new InstructionError('Chaining ONBUILD via `ONBUILD ONBUILD` isn\'t allowed');
      if (trigger === 'MAINTAINER' || trigger === 'FROM') throw new InstructionError(`${trigger} isn't allowed as an ONBUILD trigger`);
      return { kind: 'ONBUILD', ...base, trigger: base.original.replace(/^\s*ONBUILD\s*/i, '') };
    }
    case 'HEALTHCHECK':
      return { kind: 'HEALTHCHECK', ...base, health: healthcheck(base.flags, rest) };
  }
}

function commandLine(rest: string): { shellForm: boolean; command: string[] } {
  if (rest === '') return { shellForm: true, command: [] };
  const json = parseJsonArray(rest);
  if (json !== null) return { shellForm: false, command: json };
  return { shellForm: true, command: [rest] };
}

function jsonOrWhitespace(rest: string): string[] {
  return parseJsonArray(rest) ?? splitWhitespace(rest);
}

function keyValuePairs(k: 'ENV' | 'LABEL', rest: string, escape: EscapeChar): [string, string][] {
  const words = parseWords(rest, escape);
  if (words.length === 0) throw atLeastOne(k);
  let pairs: [string, string][];
  if (!words[0]!.includes('=')) {
    // The legacy form `ENV key value…`: the value is the rest of the line as written.
    const parts = splitFirstWhitespace(rest);
    if (parts.length < 2) throw new InstructionError(`${k} must have two arguments`);
    pairs = [[parts[0], parts[1]!]];
  } else {
    pairs = words.map((w) => {
      const eq = w.indexOf('=');
      if (eq < 0) throw new InstructionError(`Syntax error - can't find = in ${JSON.stringify(w)}. Must be of the form: name=value`);
      return [w.slice(0, eq), w.slice(eq + 1)];
    });
  }
  if (pairs.some(([key]) => key === '')) throw new InstructionError(`${k} names can not be blank`);
  return pairs;
}

function copySpec(k: 'COPY' | 'ADD', flags: Record<string, string>, rest: string): CopySpec {
  const args = jsonOrWhitespace(rest);
  if (args.length < 2) {
    throw new InstructionError(`${k} requires at least two arguments, but only one was provided. Destination could not be determined`);
  }
  const spec: CopySpec = { sources: args.slice(0, -1), dest: args[args.length - 1]! };
  if (flags.from !== undefined) spec.from = flags.from;
  if (flags.chown !== undefined) spec.chown = flags.chown;
  if (flags.chmod !== undefined) spec.chmod = flags.chmod;
  return spec;
}

function interval(flags: Record<string, string>, name: string): number | undefined {
  const s = flags[name];
  if (!s) return undefined;
  const ns = parseGoDuration(s);
  if (ns === 0) return undefined;
  if (ns < 1e6) throw new InstructionError(`Interval ${JSON.stringify(name)} cannot be less than 1ms`);
  return ns;
}

function healthcheck(flags: Record<string, string>, rest: string): HealthConfig {
  const { type: rawType, rest: cmdText } = splitHealthType(rest);
  if (rawType === '') throw atLeastOne('HEALTHCHECK');
  const type = rawType.toUpperCase();
  const cmd = commandLine(cmdText);
  if (type === 'NONE') {
    if (cmd.command.length !== 0) throw new InstructionError('HEALTHCHECK NONE takes no arguments');
    return { Test: ['NONE'] };
  }
  if (type !== 'CMD') throw new InstructionError(`Unknown type ${JSON.stringify(type)} in HEALTHCHECK (try CMD)`);
  if (cmd.command.length === 0) throw new InstructionError('Missing command after HEALTHCHECK CMD');
  const health: HealthConfig = { Test: [cmd.shellForm ? 'CMD-SHELL' : 'CMD', ...cmd.command] };
  const set = (key: 'Interval' | 'Timeout' | 'StartPeriod' | 'StartInterval', flag: string) => {
    const v = interval(flags, flag);
    if (v !== undefined) health[key] = v;
  };
  set('Interval', 'interval');
  set('Timeout', 'timeout');
  set('StartPeriod', 'start-period');
  set('StartInterval', 'start-interval');
  if (flags.retries) {
    if (!/^[+-]?\d+$/.test(flags.retries)) throw new InstructionError(`strconv.ParseInt: parsing ${JSON.stringify(flags.retries)}: invalid syntax`);
    const retries = Number(flags.retries);
    if (retries > 2 ** 31 - 1 || retries < -(2 ** 31)) throw new InstructionError(`strconv.ParseInt: parsing ${JSON.stringify(flags.retries)}: value out of range`);
    if (retries < 0) throw new InstructionError(`--retries cannot be negative (${retries})`);
    health.Retries = retries;
  }
  return health;
}
