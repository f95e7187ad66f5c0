// The data model of a parsed Dockerfile, as the classic builder sees it: parser directives, the ARGs
// before the first FROM, and the stages with their instructions. Every word is kept *unexpanded*
// (quotes and `$var` as written): substitution happens when a step is dispatched, with the stage's
// environment at that point (see shell-words.ts, expandInstruction). Only what the parser itself
// must resolve is resolved here (JSON forms, flags, HEALTHCHECK durations).
import type { HealthConfig } from '../../types/container-api.ts';

export type InstructionKind =
  | 'FROM' | 'RUN' | 'CMD' | 'ENTRYPOINT' | 'ENV' | 'ARG' | 'LABEL' | 'EXPOSE' | 'USER' | 'WORKDIR'
  | 'VOLUME' | 'COPY' | 'ADD' | 'ONBUILD' | 'STOPSIGNAL' | 'HEALTHCHECK' | 'MAINTAINER' | 'SHELL';

export interface InstructionBase {
  /** 1-based line of the instruction keyword. */
  line: number;
  /** 1-based last line (after continuations). */
  endLine: number;
  /**
   * The instruction as written, continuation lines joined (comment lines inside dropped),
   * e.g. `COPY . /app` — what the builder prints in "Step 3/7 : COPY . /app".
   */
  original: string;
  /**
   * `--name=value` flags as given (booleans 'true'/'false'; a repeatable flag's values joined by
   * '\n'). Only the flags the instruction declares get here; BuildKit-only ones are refused.
   */
  flags: Record<string, string>;
}

/**
 * RUN, CMD, ENTRYPOINT: Docker's ShellDependantCmdLine. Shell form: `command` has one element, the
 * text as written (the builder prepends the stage's SHELL); exec (JSON) form: the JSON array.
 */
export interface CommandLine {
  shellForm: boolean;
  command: string[];
}

export interface FromInstruction extends InstructionBase {
  kind: 'FROM';
  /** Image reference, `scratch`, or an earlier stage's name; unexpanded (meta ARGs apply). */
  image: string;
  /** The `AS name` (lower-cased as Docker does), if any. */
  stageName?: string;
  /** `--platform`, unexpanded. */
  platform?: string;
}

export interface RunInstruction extends InstructionBase, CommandLine { kind: 'RUN' }
export interface CmdInstruction extends InstructionBase, CommandLine { kind: 'CMD' }
export interface EntrypointInstruction extends InstructionBase, CommandLine { kind: 'ENTRYPOINT' }

/** ENV and LABEL: key/value pairs, both unexpanded (quotes kept). */
export interface EnvInstruction extends InstructionBase {
  kind: 'ENV';
  pairs: [string, string][];
}
export interface LabelInstruction extends InstructionBase {
  kind: 'LABEL';
  pairs: [string, string][];
}

export interface ArgDecl {
  name: string;
  /** The default as written (unexpanded); undefined when the ARG has none. */
  default?: string;
}
/** `ARG a=1 b` declares several. */
export interface ArgInstruction extends InstructionBase {
  kind: 'ARG';
  args: ArgDecl[];
}

export interface ExposeInstruction extends InstructionBase {
  kind: 'EXPOSE';
  ports: string[];
}
export interface UserInstruction extends InstructionBase {
  kind: 'USER';
  user: string;
}
export interface WorkdirInstruction extends InstructionBase {
  kind: 'WORKDIR';
  path: string;
}
export interface VolumeInstruction extends InstructionBase {
  kind: 'VOLUME';
  paths: string[];
}

/** COPY and ADD: sources and destination as written (JSON or shell form), flags split out. */
export interface CopySpec {
  sources: string[];
  dest: string;
  /** `--from=<stage name|index|image>` (COPY only). */
  from?: string;
  /** `--chown=user[:group]`, names or ids, unexpanded. */
  chown?: string;
  /** `--chmod=<octal>`, unexpanded. */
  chmod?: string;
}
export interface CopyInstruction extends InstructionBase, CopySpec { kind: 'COPY' }
export interface AddInstruction extends InstructionBase, CopySpec { kind: 'ADD' }

export interface OnbuildInstruction extends InstructionBase {
  kind: 'ONBUILD';
  /** The trigger as written after ONBUILD (e.g. `RUN make`); recorded in the image's OnBuild. */
  trigger: string;
}
export interface StopsignalInstruction extends InstructionBase {
  kind: 'STOPSIGNAL';
  signal: string;
}
/**
 * HEALTHCHECK in Docker's container-config shape: `NONE` → Test ['NONE']; CMD shell form →
 * ['CMD-SHELL', text]; exec form → ['CMD', ...args]. Durations are nanoseconds, 0/absent = inherit.
 */
export interface HealthcheckInstruction extends InstructionBase {
  kind: 'HEALTHCHECK';
  health: HealthConfig;
}
export interface MaintainerInstruction extends InstructionBase {
  kind: 'MAINTAINER';
  maintainer: string;
}
export interface ShellInstruction extends InstructionBase {
  kind: 'SHELL';
  shell: string[];
}

export type Instruction =
  | FromInstruction | RunInstruction | CmdInstruction | EntrypointInstruction | EnvInstruction
  | ArgInstruction | LabelInstruction | ExposeInstruction | UserInstruction | WorkdirInstruction
  | VolumeInstruction | CopyInstruction | AddInstruction | OnbuildInstruction | StopsignalInstruction
  | HealthcheckInstruction | MaintainerInstruction | ShellInstruction;

export interface Stage {
  /** 0-based position among the stages (what `COPY --from=0` names). */
  index: number;
  /** Lower-cased `AS` name. */
  name?: string;
  from: FromInstruction;
  /** The instructions after FROM, up to the next FROM. */
  instructions: Instruction[];
}

export type EscapeChar = '\\' | '`';

export interface Dockerfile {
  escapeChar: EscapeChar;
  /** The `# syntax=` directive, if any (ignored by the classic builder, with a warning). */
  syntax?: string;
  /** Warnings for the build output, each printed as `[WARNING]: <text>` (ignored directives, empty continuation lines…). */
  warnings: string[];
  /** ARG instructions before the first FROM. */
  metaArgs: ArgInstruction[];
  stages: Stage[];
}
