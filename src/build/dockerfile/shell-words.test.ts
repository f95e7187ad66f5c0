// Tests of the shell lexer used for variable substitution, and of which instructions expand what.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseDockerfile } from './parser.ts';
import { envFromList, expandInstruction, expandWord, expandWords } from './shell-words.ts';
import type { Instruction } from './types.ts';

const env = envFromList(['HOME=/root', 'EMPTY=', 'SPACED=a  b', 'FILE=archive.tar.gz', 'KOREAN=한국어']);
const w = (s: string) => expandWord(s, env);

describe('shell words', () => {
  test('plain and braced variables, unset ones are empty', () => {
    assert.equal(w('$HOME/x'), '/root/x');
    assert.equal(w('${HOME}x'), '/rootx');
    assert.equal(w('a${NOPE}b$NOPE'), 'ab');
    assert.equal(w('$KOREAN!'), '한국어!');
    assert.equal(w('cost: $5 and $.'), 'cost:  and $.');
    assert.equal(w('$'), '$');
  });

  test('default and alternative values, with and without the colon', () => {
    assert.equal(w('${NOPE:-def}'), 'def');
    assert.equal(w('${EMPTY:-def}'), 'def');
    assert.equal(w('${EMPTY-def}'), '');
    assert.equal(w('${NOPE-def}'), 'def');
    assert.equal(w('${HOME:-def}'), '/root');
    assert.equal(w('${HOME:+alt}'), 'alt');
    assert.equal(w('${EMPTY:+alt}'), '');
    assert.equal(w('${EMPTY+alt}'), 'alt');
    assert.equal(w('${NOPE+alt}'), '');
    assert.equal(w('${NOPE:-${HOME}/d}'), '/root/d');
    assert.throws(() => w('${NOPE:?must be set}'), /failed to process "\$\{NOPE:\?must be set\}": NOPE: must be set/);
    assert.throws(() => w('${EMPTY:?}'), /EMPTY: is not allowed to be empty/);
  });

  test('prefix, suffix and replacement patterns', () => {
    assert.equal(w('${FILE%.*}'), 'archive.tar');
    assert.equal(w('${FILE%%.*}'), 'archive');
    assert.equal(w('${FILE#*.}'), 'tar.gz');
    assert.equal(w('${FILE##*.}'), 'gz');
    assert.equal(w('${FILE/a/A}'), 'Archive.tar.gz');
    assert.equal(w('${FILE//a/A}'), 'ArchivE.tAr.gz'.replace('E', 'e'));
  });

  test('quotes and escapes', () => {
    assert.equal(w(`'$HOME' "$HOME" \\$HOME`), '$HOME /root $HOME');
    assert.equal(w('"a\\"b"'), 'a"b');
    assert.equal(w('a\\ b'), 'a b');
    assert.equal(expandWord('a`$HOME', env, '`'), 'a$HOME');
    assert.equal(expandWord('C:\\dir\\$HOME', env, '`'), 'C:\\dir\\/root');
    assert.throws(() => w('"open'), /unexpected end of statement while looking for matching double-quote/);
    assert.throws(() => w("'open"), /single-quote/);
  });

  test('syntax errors are 400s naming the word', () => {
    for (const [word, msg] of [['${HOME', "missing '}'"], ['${}', 'bad substitution'], ['${HOME:x}', 'unsupported modifier (:x)'], ['${HOME!}', 'unsupported modifier (!)']] as const) {
      assert.throws(() => w(word), (err: Error & { status?: number }) => err.status === 400 && err.message.includes(msg) && err.message.includes(JSON.stringify(word)));
    }
  });

  test('COPY shell form splits on whitespace before expansion, as Docker does', () => {
    const c = parseDockerfile('FROM a\nCOPY "x y" /d\n').stages[0]!.instructions[0]!;
    assert.ok(c.kind === 'COPY' && c.sources.join('|') === '"x|y"');
    assert.throws(() => expandInstruction(c, env), /matching double-quote/);
  });

  test('splitting into words happens on unquoted whitespace, also inside values', () => {
    assert.deepEqual(expandWords('80 $SPACED "$SPACED" x\\ y', env), ['80', 'a', 'b', 'a  b', 'x y']);
    assert.deepEqual(expandWords('', env), []);
  });

  test('hostile words: deep nesting and exponential patterns fail fast or run in linear time', () => {
    const deep = '${a:-'.repeat(5000) + '}'.repeat(5000);
    assert.throws(() => w(deep), (e: Error & { status?: number }) => e.status === 400 && /nested deeper than 100/.test(e.message));
    const long = envFromList([`V=${'a'.repeat(5000)}`]);
    const t = performance.now();
    assert.equal(expandWord(`\${V%%${'*a'.repeat(20)}b}`, long), 'a'.repeat(5000));
    assert.equal(expandWord(`\${V#${'*a'.repeat(20)}}`, long).length, 4980);
    assert.ok(performance.now() - t < 30_000, 'pattern matching must not backtrack exponentially (that would take hours)');
  });

  test('skipUnsetEnv keeps unknown variables as written', () => {
    assert.equal(expandWord('$HOME $NOPE ${NOPE:-x}', env, '\\', { skipUnsetEnv: true }), '/root $NOPE ${NOPE:-x}');
  });

  test('envFromList: last one wins, values may hold =', () => {
    const e = envFromList(['A=1', 'B=x=y', 'A=2']);
    assert.equal(e('A'), '2');
    assert.equal(e('B'), 'x=y');
    assert.equal(e('C'), undefined);
  });
});

describe('expandInstruction', () => {
  const df = parseDockerfile([
    'FROM busybox',
    'ENV DIR=$HOME/app NAME="my app"',
    'LABEL "$NAME"="${HOME}"',
    'COPY --chown=$U:$U --from=$STAGE $SRC* "$HOME/x" ${HOME}/',
    'WORKDIR $HOME/w',
    'EXPOSE $PORTS',
    'USER ${U:-nobody}',
    'RUN echo $HOME',
    'CMD echo $HOME',
    'VOLUME $HOME/v',
    'ARG X=$HOME',
  ].join('\n'));
  const insts = df.stages[0]!.instructions;
  const e = envFromList(['HOME=/h', 'NAME=n', 'U=1000', 'SRC=src', 'PORTS=80 443/udp', 'STAGE=build']);
  const exp = (i: number): Instruction => expandInstruction(insts[i]!, e);

  test('ENV, LABEL, COPY, WORKDIR, EXPOSE, USER, VOLUME, ARG expand; RUN and CMD do not', () => {
    assert.deepEqual((exp(0) as { pairs: unknown }).pairs, [['DIR', '/h/app'], ['NAME', 'my app']]);
    assert.deepEqual((exp(1) as { pairs: unknown }).pairs, [['n', '/h']]);
    const copy = exp(2);
    assert.ok(copy.kind === 'COPY');
    if (copy.kind === 'COPY') {
      assert.deepEqual(copy.sources, ['src*', '/h/x']);
      assert.equal(copy.dest, '/h/');
      assert.equal(copy.chown, '1000:1000');
      assert.equal(copy.from, 'build');
    }
    assert.equal((exp(3) as { path: string }).path, '/h/w');
    assert.deepEqual((exp(4) as { ports: string[] }).ports, ['80', '443/udp']);
    assert.equal((exp(5) as { user: string }).user, '1000');
    assert.deepEqual((exp(6) as { command: string[] }).command, ['echo $HOME']);
    assert.deepEqual((exp(7) as { command: string[] }).command, ['echo $HOME']);
    assert.deepEqual((exp(8) as { paths: string[] }).paths, ['/h/v']);
    assert.deepEqual((exp(9) as { args: unknown }).args, [{ name: 'X', default: '/h' }]);
    // The parsed instruction is not modified.
    assert.equal((insts[3] as { path: string }).path, '$HOME/w');
  });
});
