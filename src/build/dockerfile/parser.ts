// parseDockerfile: Dockerfile text → the Dockerfile model (types.ts). Lines are joined and parser
// directives read by lines.ts, each instruction is typed by instructions.ts, and the result is cut
// into the meta ARGs (before the first FROM) and the stages. Errors are 400s worded as dockerd's
// classic builder words them: "dockerfile parse error on line 3: unknown instruction: FOO".
// Heredocs (`RUN <<EOF`) are refused: the classic builder has no way to run them.
import { invalidParameter } from '../../errors.ts';
import { buildInstruction, InstructionError } from './instructions.ts';
import { LineError, scanLines } from './lines.ts';
import { FlagError } from './flags.ts';
import { isSpace, parseJsonArray, splitCommand } from './split.ts';
import type { ArgInstruction, Dockerfile, EscapeChar, Instruction, Stage } from './types.ts';

const HEREDOC_KINDS = new Set(['RUN', 'COPY', 'ADD']);
const HEREDOC_WORD = /^(\d*)<<(-?)\s*([^<]*)$/;

const lineError = (line: number, message: string) => invalidParameter(`dockerfile parse error on line ${line}: ${message}`);

export function parseDockerfile(text: string): Dockerfile {
  let scan;
  try {
    scan = scanLines(text);
  } catch (err) {
    if (err instanceof LineError) throw lineError(err.line, err.message);
    throw err;
  }
  const df: Dockerfile = { escapeChar: scan.escapeChar, warnings: scan.warnings, metaArgs: [], stages: [] };
  if (scan.syntax !== undefined) df.syntax = scan.syntax;
  for (const l of scan.lines) {
    const inst = parseLine(l.text, scan.escapeChar, l.line, l.endLine);
    if (inst.kind === 'FROM') {
      const stage: Stage = { index: df.stages.length, from: inst, instructions: [] };
      if (inst.stageName !== undefined) stage.name = inst.stageName;
      df.stages.push(stage);
    } else if (df.stages.length === 0) {
      if (inst.kind !== 'ARG') throw lineError(l.line, 'no build stage in current context');
      df.metaArgs.push(inst as ArgInstruction);
    } else {
      df.stages[df.stages.length - 1]!.instructions.push(inst);
    }
  }
  return df;
}

/**
 * One ONBUILD trigger (as stored in an image's OnBuild) → its Instruction, parsed as Docker parses
 * triggers: on its own, with the default escape character, and exactly one instruction.
 */
export function parseTrigger(trigger: string): Instruction {
  let scan;
  try {
    scan = scanLines(trigger);
  } catch (err) {
    if (err instanceof LineError) throw invalidParameter(`invalid ONBUILD trigger ${JSON.stringify(trigger)}: ${err.message}`);
    throw err;
  }
  if (scan.lines.length !== 1) throw invalidParameter('onbuild trigger should be a single expression');
  const l = scan.lines[0]!;
  const inst = parseLine(l.text, scan.escapeChar, 1, 1);
  if (inst.kind === 'FROM' || inst.kind === 'ONBUILD' || inst.kind === 'MAINTAINER') {
    throw invalidParameter(`${inst.kind} isn't allowed as an ONBUILD trigger`);
  }
  return inst;
}

function parseLine(text: string, escape: EscapeChar, line: number, endLine: number): Instruction {
  try {
    const inst = buildInstruction(text, escape, line, endLine);
    refuseHeredoc(inst, escape);
    return inst;
  } catch (err) {
    if (err instanceof InstructionError || err instanceof FlagError) throw lineError(line, err.message);
    throw err;
  }
}

function refuseHeredoc(inst: Instruction, escape: EscapeChar): void {
  let text = inst.original;
  let kind: string = inst.kind;
  if (inst.kind === 'ONBUILD') {
    text = inst.trigger;
    kind = splitCommand(text, escape).cmd.toUpperCase();
  }
  if (!HEREDOC_KINDS.has(kind) || !text.includes('<<')) return;
  const { rest } = splitCommand(text, escape);
  if (parseJsonArray(rest) !== null) return;
  for (const word of heredocWords(rest, escape)) {
    const m = HEREDOC_WORD.exec(word);
    if (m && m[3] !== '') {
      throw new InstructionError(`heredocs (${word}) are not supported by the classic builder; put the content in a file of the build context instead`);
    }
  }
}

/** Words split as the shell lexer splits them for heredoc detection: quotes kept, `<< X` one word. */
function heredocWords(rest: string, escape: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote = '';
  for (let i = 0; i < rest.length; i++) {
    const ch = rest[i]!;
    if (quote) {
      word += ch;
      if (ch === escape && quote === '"' && i + 1 < rest.length) word += rest[++i];
      else if (ch === quote) quote = '';
      continue;
    }
    if (ch === escape && i + 1 < rest.length) {
      word += ch + rest[++i];
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      word += ch;
    } else if (ch === '<' && rest[i + 1] === '<') {
      word += '<<';
      i++;
      while (i + 1 < rest.length && (rest[i + 1] === ' ' || rest[i + 1] === '\t')) word += rest[++i];
    } else if (isSpace(ch)) {
      if (word) words.push(word);
      word = '';
    } else {
      word += ch;
    }
  }
  if (word) words.push(word);
  return words;
}
