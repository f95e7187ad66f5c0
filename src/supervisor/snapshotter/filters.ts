// containerd's filter syntax for the snapshots List call, the part a snapshotter is asked for:
// `field==value`, `field!=value` and `field` (present), fields `name`, `parent`, `kind` and
// `labels.<key>` / `labels."<key>"`; clauses joined by `,` must all hold, and a snapshot is listed
// when any one of the filters holds (no filter: every snapshot). The regular-expression operator
// `~=` is refused: nothing containerd sends a snapshotter uses it.
import { invalidArgument } from './errors.ts';
import type { SnapshotInfo } from './meta-store.ts';

interface Clause {
  path: string[];
  op: '==' | '!=' | '?';
  value: string;
}

export type SnapshotFilter = (info: SnapshotInfo) => boolean;

/** A quoted string (Go's strconv syntax for the escapes that matter: \" and \\) or a bare word. */
function readToken(s: string, at: number, stops: string): { text: string; end: number } {
  if (s[at] === '"') {
    let text = '';
    let i = at + 1;
    for (; i < s.length && s[i] !== '"'; i++) {
      if (s[i] === '\\' && i + 1 < s.length) i++;
      text += s[i];
    }
    if (i >= s.length) throw invalidArgument(`filter ${JSON.stringify(s)}: unterminated quoted string`);
    return { text, end: i + 1 };
  }
  let i = at;
  while (i < s.length && !stops.includes(s[i]!)) i++;
  return { text: s.slice(at, i).trim(), end: i };
}

function parseClause(s: string, at: number): { clause: Clause; end: number } {
  const path: string[] = [];
  let i = at;
  for (;;) {
    while (s[i] === ' ') i++;
    const part = readToken(s, i, '.=!~, ');
    if (!part.text) throw invalidArgument(`filter ${JSON.stringify(s)}: expected a field name at ${i}`);
    path.push(part.text);
    i = part.end;
    while (s[i] === ' ') i++;
    if (s[i] !== '.') break;
    i++;
  }
  const op2 = s.slice(i, i + 2);
  if (op2 === '~=') throw invalidArgument(`filter ${JSON.stringify(s)}: the ~= operator is not supported by this snapshotter`);
  if (op2 === '==' || op2 === '!=') {
    i += 2;
    while (s[i] === ' ') i++;
    const value = readToken(s, i, ',');
    return { clause: { path, op: op2, value: value.text }, end: value.end };
  }
  if (i < s.length && s[i] !== ',') throw invalidArgument(`filter ${JSON.stringify(s)}: unexpected ${JSON.stringify(s[i])} at ${i}`);
  return { clause: { path, op: '?', value: '' }, end: i };
}

function parseFilter(s: string): Clause[] {
  const clauses: Clause[] = [];
  for (let i = 0; i < s.length;) {
    const { clause, end } = parseClause(s, i);
    clauses.push(clause);
    i = end;
    if (s[i] === ',') i++;
  }
  return clauses;
}

function fieldOf(info: SnapshotInfo, path: string[]): string | undefined {
  switch (path[0]) {
    case 'name':
      return info.name;
    case 'parent':
      return info.parent;
    case 'kind':
      return info.kind;
    case 'labels':
      return path.length > 1 ? info.labels[path.slice(1).join('.')] : undefined;
    default:
      return undefined;
  }
}

function holds(info: SnapshotInfo, c: Clause): boolean {
  const v = fieldOf(info, c.path);
  if (c.op === '?') return v !== undefined && v !== '';
  if (c.op === '==') return v === c.value;
  return v !== c.value;
}

/** The filter of a List call's `filters`: any one of them holding lists the snapshot. */
export function parseFilters(filters: readonly string[]): SnapshotFilter {
  const parsed = filters.filter((f) => f.trim() !== '').map(parseFilter);
  if (!parsed.length) return () => true;
  return (info) => parsed.some((clauses) => clauses.every((c) => holds(info, c)));
}
