#!/usr/bin/env node
// The copy-paste check (issue 24), run by scripts/run-tests.sh before the tests: lists the places in
// src/ (tests and generated types left out) that repeat a run of MIN_LINES or more lines of code
// to the letter once white space is folded — comments, blank lines, import lines and lone
// punctuation are passed over. A run written twice is one concept with two homes: merge it into
// its owner module. A pair that is not one concept (two tables that look alike, one the CLI's and
// one the daemon's) goes into ALLOWED below with the reason.
//   bin/node scripts/check-duplicates.mjs [--min N] [--all]   (--all: list allowed pairs too)
// Exit 1 when a pair outside ALLOWED is found.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '..');
export const MIN_LINES = 8;

/** Pairs known not to be one concept written twice: `a.ts ~ b.ts` (sorted) → why. */
export const ALLOWED = new Map([]);

/** The lines that count: code, white space folded; each with its 1-based line number. */
export function codeLines(source) {
  const out = [];
  let inBlock = false;
  let inImport = false; // a multi-line import or re-export list: names, not code
  source.split('\n').forEach((raw, i) => {
    let line = raw.trim();
    if (inImport) {
      if (/^} from '[^']+';$/.test(line)) inImport = false;
      return;
    }
    if (/^(import|export)( type)? \{$/.test(line)) {
      inImport = true;
      return;
    }
    if (inBlock) {
      const end = line.indexOf('*/');
      if (end < 0) return;
      inBlock = false;
      line = line.slice(end + 2).trim();
    }
    if (line.startsWith('/*')) {
      if (!line.includes('*/')) inBlock = true;
      return;
    }
    if (!line || line.startsWith('//') || line.startsWith('*')) return;
    if (/^(import|export) .* from '[^']+';$/.test(line) || /^import '[^']+';$/.test(line)) return;
    if (/^[\s{}()[\];,.]*$/.test(line)) return;
    out.push({ text: line.replace(/\s+/g, ' '), line: i + 1 });
  });
  return out;
}

/** Pairs of runs of at least `min` equal code lines between or within files: {a, b, lines}. */
export function findDuplicates(files, min = MIN_LINES) {
  const lines = new Map(); // file → code lines
  const windows = new Map(); // window text → [{file, index}]
  for (const [file, source] of files) {
    const code = codeLines(source);
    lines.set(file, code);
    for (let i = 0; i + min <= code.length; i++) {
      const key = code
        .slice(i, i + min)
        .map((l) => l.text)
        .join('\n');
      let at = windows.get(key);
      if (!at) windows.set(key, (at = []));
      at.push({ file, index: i });
    }
  }
  // Seeds: every two places of one window; runs: seeds extended while the next lines are equal.
  const pairs = [];
  const covered = new Set();
  for (const at of windows.values()) {
    if (at.length < 2 || at.length > 8) continue; // more than 8 places: a shape, not a copy
    for (let x = 0; x < at.length; x++) {
      for (let y = x + 1; y < at.length; y++) {
        const [p, q] = [at[x], at[y]];
        if (p.file === q.file && Math.abs(p.index - q.index) < min) continue; // overlapping repeats
        const seed = `${p.file}:${p.index}|${q.file}:${q.index}`;
        if (covered.has(seed)) continue;
        const lp = lines.get(p.file);
        const lq = lines.get(q.file);
        let n = min;
        while (p.index + n < lp.length && q.index + n < lq.length && lp[p.index + n].text === lq[q.index + n].text) n++;
        for (let k = 0; k <= n - min; k++) covered.add(`${p.file}:${p.index + k}|${q.file}:${q.index + k}`);
        pairs.push({
          a: `${p.file}:${lp[p.index].line}-${lp[p.index + n - 1].line}`,
          b: `${q.file}:${lq[q.index].line}-${lq[q.index + n - 1].line}`,
          files: [p.file, q.file].sort().join(' ~ '),
          lines: n,
        });
      }
    }
  }
  return pairs.sort((u, v) => v.lines - u.lines);
}

function sourceFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (relative(join(ROOT, 'src'), p) !== join('types', 'api')) out.push(...sourceFiles(p));
    } else if (/\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name)) out.push(p);
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const min = args.includes('--min') ? Number(args[args.indexOf('--min') + 1]) : MIN_LINES;
  const files = sourceFiles(join(ROOT, 'src')).map((p) => [relative(join(ROOT, 'src'), p), readFileSync(p, 'utf8')]);
  const pairs = findDuplicates(files, min);
  const fresh = pairs.filter((p) => !ALLOWED.has(p.files));
  for (const p of args.includes('--all') ? pairs : fresh) {
    const why = ALLOWED.get(p.files);
    process.stdout.write(`  ${p.lines} lines: src/${p.a} ~ src/${p.b}${why ? ` (allowed: ${why})` : ''}\n`);
  }
  const stale = [...ALLOWED.keys()].filter((k) => !pairs.some((p) => p.files === k));
  for (const k of stale) process.stdout.write(`  stale allowance (no such pair now): ${k}\n`);
  process.stdout.write(
    `check-duplicates: ${pairs.length} runs of ${min}+ equal code lines in ${files.length} files (${pairs.length - fresh.length} allowed)\n`,
  );
  if (fresh.length || stale.length) {
    process.stderr.write('check-duplicates: merge each run into one owner module, or allow the pair with its reason\n');
    process.exit(1);
  }
}
