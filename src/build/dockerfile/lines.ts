// The first pass of the Dockerfile parser: physical lines → logical instruction lines, as Docker's
// parser does it. Parser directives (`# syntax=`, `# escape=`, `# check=`) count only in the
// leading block of comments; comment lines are dropped, also inside a continuation; a line ending
// in the escape character continues on the next; blank lines inside a continuation are skipped
// with Docker's "Empty continuation line" warning.
import type { EscapeChar } from './types.ts';

export interface LogicalLine {
  /** 1-based first and last physical line. */
  line: number;
  endLine: number;
  text: string;
}

export interface ScanResult {
  escapeChar: EscapeChar;
  syntax?: string;
  warnings: string[];
  lines: LogicalLine[];
}

/** A problem found while scanning, with its 1-based line. */
export class LineError extends Error {
  constructor(readonly line: number, message: string) {
    super(message);
  }
}

/** Go's bufio.Scanner limit, which Docker's parser inherits: longer lines are refused. */
export const MAX_LINE = 64 * 1024 - 1;

const DIRECTIVE = /^([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.+?)\s*$/;
const KNOWN_DIRECTIVES = new Set(['syntax', 'escape', 'check']);

const isComment = (line: string) => /^\s*#/.test(line);
const isBlank = (line: string) => /^\s*$/.test(line);

export function scanLines(source: string): ScanResult {
  const text = source.startsWith('\uFEFF') ? source.slice(1) : source;
  const physical = text.split('\n');
  if (physical.length > 0 && physical[physical.length - 1] === '') physical.pop(); // final newline
  let escape: EscapeChar = '\\';
  let continuation = continuationRe(escape);
  let directivesDone = false;
  const seen = new Set<string>();
  const result: ScanResult = { escapeChar: escape, warnings: [], lines: [] };

  // A parser directive is a `# key=value` comment at the top; anything else ends the block.
  const directive = (line: string, lineNo: number): void => {
    if (directivesDone) return;
    if (!line.startsWith('#')) { directivesDone = true; return; }
    const m = DIRECTIVE.exec(line.slice(1).replace(/^\s+/, ''));
    const key = m?.[1]?.toLowerCase();
    if (!m || !key || !KNOWN_DIRECTIVES.has(key)) { directivesDone = true; return; }
    if (seen.has(key)) throw new LineError(lineNo, `only one ${key} parser directive can be used`);
    seen.add(key);
    const value = m[2]!;
    if (key === 'escape') {
      if (value !== '`' && value !== '\\') throw new LineError(lineNo, `invalid escape token '${value}' does not match \` or \\`);
      escape = value;
      continuation = continuationRe(escape);
    } else if (key === 'syntax') {
      result.syntax = value;
      result.warnings.push(`syntax directive ignored: the classic builder does not load frontends (# syntax=${value})`);
    }
    // `check` configures BuildKit's linter: nothing to do here.
  };

  const physicalLine = (i: number): string => {
    const raw = physical[i]!;
    if (raw.length > MAX_LINE) throw new LineError(i + 1, `dockerfile line greater than max allowed size of ${MAX_LINE}`);
    return raw.replace(/[\r\n]+$/, '');
  };

  for (let i = 0; i < physical.length; i++) {
    const start = i + 1;
    const first = physicalLine(i).replace(/^\s+/, '');
    directive(first, start);
    let part = isComment(first) ? '' : first;
    let [piece, ended] = trimContinuation(part, continuation);
    if (ended && piece === '') continue;
    let joined = piece;
    let emptyContinuation = false;
    while (!ended && i + 1 < physical.length) {
      i++;
      part = physicalLine(i);
      directive(part, i + 1);
      if (isComment(part)) continue;
      if (isBlank(part)) { emptyContinuation = true; continue; }
      [piece, ended] = trimContinuation(part, continuation);
      joined += piece;
    }
    if (emptyContinuation) result.warnings.push(`Empty continuation line found in: ${joined}`);
    result.lines.push({ line: start, endLine: i + 1, text: joined });
  }
  if (result.warnings.some((w) => w.startsWith('Empty continuation line'))) {
    result.warnings.push('Empty continuation lines will become errors in a future release.');
  }
  result.escapeChar = escape;
  if (result.lines.length === 0) throw new LineError(physical.length, 'file with no instructions');
  return result;
}

/** Ends in the escape character (not itself escaped), then optional blanks: a continuation. */
function continuationRe(escape: EscapeChar): RegExp {
  const e = escape === '\\' ? '\\\\' : '`';
  return new RegExp(`([^${e}])${e}[ \\t]*$|^${e}[ \\t]*$`);
}

function trimContinuation(line: string, re: RegExp): [string, boolean] {
  if (!re.test(line)) return [line, true];
  return [line.replace(re, '$1'), false];
}
