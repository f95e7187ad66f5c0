// The RE2-syntax matcher for user patterns: Go's regexp answers, Go's error words, linear time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Re2 } from './re2.ts';

const m = (p: string, s: string) => Re2.compile(p).test(s);

test('matches as Go regexp.MatchString does (unanchored)', () => {
  const yes: [string, string][] = [
    ['web', 'my-web-1'],
    ['^web', 'web-1'],
    ['1$', 'web-1'],
    ['^/?web-[0-9]+$', '/web-12'],
    ['a.c', 'abc'],
    ['a|b', 'xb'],
    ['(ab)+c', 'ababc'],
    ['x{2,3}', 'axxb'],
    ['[[:upper:]]', 'aB'],
    ['\\d\\w\\s', '1a '],
    ['[^a-z]', 'ab9'],
    ['(?i)WEB', 'my-web'],
    ['(?i:W)eb', 'web'],
    ['\\bweb\\b', 'a web b'],
    ['\\x41\\x{263a}', 'A☺'],
    ['a\\.b', 'a.b'],
    ['', 'anything'],
    ['a{,2}', 'a{,2}'], // not a repeat: literal braces
    ['(?P<n>x)|y', 'y'],
    ['é', 'café'],
  ];
  for (const [p, s] of yes) assert.equal(m(p, s), true, `${p} ~ ${s}`);
  const no: [string, string][] = [
    ['^web$', 'web-1'],
    ['a.c', 'a\nc'],
    ['[^a-z]', 'abc'],
    ['WEB', 'web'],
    ['\\bweb\\b', 'webs'],
    ['x{3}', 'xx'],
    ['a\\.b', 'axb'],
  ];
  for (const [p, s] of no) assert.equal(m(p, s), false, `${p} !~ ${s}`);
  assert.equal(m('(?s)a.c', 'a\nc'), true);
  assert.equal(m('(?m)^b$', 'a\nb\nc'), true);
});

test("invalid patterns are refused in Go's words", () => {
  const cases: [string, string][] = [
    ['((', 'error parsing regexp: missing closing ): `((`'],
    ['a)', 'error parsing regexp: unexpected ): `a)`'],
    ['[a', 'error parsing regexp: missing closing ]: `[a`'],
    ['[z-a]', 'error parsing regexp: invalid character class range: `z-a`'],
    ['*a', 'error parsing regexp: missing argument to repetition operator: `*`'],
    ['a**', 'error parsing regexp: invalid nested repetition operator: `**`'],
    ['a{1001}', 'error parsing regexp: invalid repeat count: `{1001}`'],
    ['\\q', 'error parsing regexp: invalid escape sequence: `\\q`'],
    ['a\\', 'error parsing regexp: trailing backslash at end of expression: ``'],
    ['(?<>a)', 'error parsing regexp: invalid named capture: `(?<>`'],
  ];
  for (const [p, want] of cases) assert.throws(() => Re2.compile(p), { message: want }, p);
  assert.equal(Re2.tryCompile('(('), undefined);
});

test('hostile patterns stay linear and bounded', () => {
  // Catastrophic for a backtracking engine: (a+)+$ against "aaaa…b".
  const started = performance.now();
  assert.equal(m('(a+)+$', 'a'.repeat(5000) + 'b'), false);
  assert.equal(m('(x+x+)+y', 'x'.repeat(2000)), false);
  // Generous bound for a loaded machine: a backtracking engine takes far longer than this.
  assert.ok(performance.now() - started < 10_000);
  // Deep nesting and huge programs are refused, not a stack overflow or a stall.
  assert.throws(() => Re2.compile('('.repeat(100_000)), /expression nests too deeply/);
  assert.throws(() => Re2.compile('((a{1000}){1000}){1000}'), /expression too large/);
  assert.throws(
    () => Re2.compile('a'.repeat(100_000)),
    (e: Error) => /expression too large/.test(e.message) && e.message.length < 1200,
  );
  assert.equal(m('a'.repeat(2000), 'a'.repeat(1999)), false);
  assert.equal(m('a'.repeat(2000), 'b' + 'a'.repeat(2000)), true);
});
