// Tests of the Dockerfile parser: directives, continuations, forms, flags and Docker's messages.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EngineError } from '../../errors.ts';
import { parseDockerfile, parseTrigger } from './parser.ts';
import { parseGoDuration } from './flags.ts';
import type { Instruction } from './types.ts';

const only = (text: string): Instruction => {
  const df = parseDockerfile(`FROM busybox\n${text}\n`);
  assert.equal(df.stages[0]!.instructions.length, 1);
  return df.stages[0]!.instructions[0]!;
};

const fails = (text: string, message: string | RegExp) => {
  assert.throws(() => parseDockerfile(text), (err: unknown) => {
    assert.ok(err instanceof EngineError, `not an EngineError: ${String(err)}`);
    assert.equal(err.status, 400);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
};

describe('dockerfile parser: lines and directives', () => {
  test('stages, meta args, lines and the original text', () => {
    const df = parseDockerfile('ARG BASE=busybox\n# comment\nFROM $BASE AS Build\nRUN echo hi\n\nFROM scratch\nCOPY --from=build /a /b\n');
    assert.equal(df.escapeChar, '\\');
    assert.deepEqual(df.metaArgs.map((a) => a.args), [[{ name: 'BASE', default: 'busybox' }]]);
    assert.equal(df.stages.length, 2);
    assert.equal(df.stages[0]!.name, 'build');
    assert.equal(df.stages[0]!.from.image, '$BASE');
    assert.equal(df.stages[0]!.from.line, 3);
    assert.equal(df.stages[1]!.index, 1);
    assert.equal(df.stages[1]!.name, undefined);
    const copy = df.stages[1]!.instructions[0]!;
    assert.equal(copy.kind, 'COPY');
    assert.equal(copy.line, 7);
    assert.equal(copy.original, 'COPY --from=build /a /b');
    if (copy.kind === 'COPY') {
      assert.equal(copy.from, 'build');
      assert.deepEqual(copy.sources, ['/a']);
      assert.equal(copy.dest, '/b');
    }
  });

  test('continuations join lines, skip comment lines inside, warn on blank ones', () => {
    const df = parseDockerfile('FROM busybox\nRUN echo a \\\n# inside\n  && echo b \\\n\n  && echo c\nRUN x\n');
    const run = df.stages[0]!.instructions[0]!;
    assert.equal(run.original, 'RUN echo a   && echo b   && echo c');
    assert.equal(run.line, 2);
    assert.equal(run.endLine, 6);
    assert.equal(df.stages[0]!.instructions[1]!.line, 7);
    assert.ok(df.warnings.some((w) => w.startsWith('Empty continuation line found in: RUN echo a')));
    // An escaped escape character does not continue the line.
    const two = parseDockerfile('FROM busybox\nRUN echo a\\\\\nRUN b\n');
    assert.equal(two.stages[0]!.instructions.length, 2);
    assert.equal(two.stages[0]!.instructions[0]!.original, 'RUN echo a\\\\');
  });

  test('escape directive switches to backtick; syntax is recorded with a warning', () => {
    const df = parseDockerfile('# syntax=docker/dockerfile:1\n# escape=`\nFROM busybox\nRUN echo a `\n  b\nCOPY C:\\src C:\\dst\n');
    assert.equal(df.escapeChar, '`');
    assert.equal(df.syntax, 'docker/dockerfile:1');
    assert.ok(df.warnings.some((w) => /syntax directive ignored/.test(w)));
    assert.equal(df.stages[0]!.instructions[0]!.original, 'RUN echo a   b');
    const copy = df.stages[0]!.instructions[1]!;
    assert.ok(copy.kind === 'COPY' && copy.sources[0] === 'C:\\src');
  });

  test('directives count only at the top', () => {
    const df = parseDockerfile('FROM busybox\n# escape=`\nRUN a \\\n b\n');
    assert.equal(df.escapeChar, '\\');
    assert.equal(df.stages[0]!.instructions[0]!.original, 'RUN a  b');
    const afterComment = parseDockerfile('# hello\n# escape=`\nFROM busybox\n');
    assert.equal(afterComment.escapeChar, '\\');
    fails('# escape=x\nFROM busybox\n', "dockerfile parse error on line 1: invalid escape token 'x' does not match ` or \\");
    fails('# escape=`\n# escape=\\\nFROM busybox\n', 'dockerfile parse error on line 2: only one escape parser directive can be used');
  });

  test('BOM, CRLF and a file of comments', () => {
    const df = parseDockerfile('\uFEFFFROM busybox\r\nRUN a\r\n');
    assert.equal(df.stages[0]!.from.image, 'busybox');
    assert.equal(df.stages[0]!.instructions[0]!.original, 'RUN a');
    fails('# only\n\n', /file with no instructions/);
  });

  test('a line longer than Docker allows is refused, not parsed', () => {
    fails(`FROM busybox\nRUN echo ${'x'.repeat(70_000)}\n`, /line 2: dockerfile line greater than max allowed size of 65535/);
  });
});

describe('dockerfile parser: instructions', () => {
  test('shell and exec forms', () => {
    assert.deepEqual(only('RUN echo "$HOME"'), { kind: 'RUN', line: 2, endLine: 2, original: 'RUN echo "$HOME"', flags: {}, shellForm: true, command: ['echo "$HOME"'] });
    const exec = only('CMD ["echo", "a b"]');
    assert.ok(exec.kind === 'CMD' && !exec.shellForm);
    assert.deepEqual(exec.kind === 'CMD' && exec.command, ['echo', 'a b']);
    // Not valid JSON: the shell form, as written.
    const broken = only("ENTRYPOINT ['echo', 'x']");
    assert.ok(broken.kind === 'ENTRYPOINT' && broken.shellForm && broken.command[0] === "['echo', 'x']");
    fails('FROM busybox\nCMD ["a", 1]\n', 'dockerfile parse error on line 2: when using JSON array syntax, arrays must be comprised of strings only');
    const shell = only('SHELL ["/bin/bash", "-c"]');
    assert.ok(shell.kind === 'SHELL' && shell.shell.join(' ') === '/bin/bash -c');
    fails('FROM busybox\nSHELL /bin/bash -c\n', /SHELL requires the arguments to be in JSON form/);
  });

  test('ENV and LABEL keep words unexpanded, both forms', () => {
    const env = only('ENV A=1 B="two words" C=$A\\ x');
    assert.deepEqual(env.kind === 'ENV' && env.pairs, [['A', '1'], ['B', '"two words"'], ['C', '$A\\ x']]);
    const legacy = only('ENV PATH  /usr/bin:$PATH more');
    assert.deepEqual(legacy.kind === 'ENV' && legacy.pairs, [['PATH', '/usr/bin:$PATH more']]);
    const label = only('LABEL "com.example.a"="x y" b=c');
    assert.deepEqual(label.kind === 'LABEL' && label.pairs, [['"com.example.a"', '"x y"'], ['b', 'c']]);
    fails('FROM busybox\nENV =x\n', 'dockerfile parse error on line 2: ENV names can not be blank');
    fails('FROM busybox\nENV A\n', /ENV must have two arguments/);
    fails('FROM busybox\nENV\n', /ENV requires at least one argument/);
    fails('FROM busybox\nLABEL a=b c\n', /Syntax error - can't find = in "c". Must be of the form: name=value/);
  });

  test('ARG with and without defaults', () => {
    const arg = only('ARG A B=2 C="x y"');
    assert.deepEqual(arg.kind === 'ARG' && arg.args, [{ name: 'A' }, { name: 'B', default: '2' }, { name: 'C', default: '"x y"' }]);
    fails('FROM busybox\nARG =1\n', /ARG names can not be blank/);
  });

  test('FROM forms and errors', () => {
    const df = parseDockerfile('FROM --platform=linux/amd64 alpine:3 as Base-1\n');
    assert.equal(df.stages[0]!.from.platform, 'linux/amd64');
    assert.equal(df.stages[0]!.name, 'base-1');
    fails('FROM a b\n', 'dockerfile parse error on line 1: FROM requires either one or three arguments');
    fails('FROM\n', /FROM requires either one or three arguments/);
    fails('FROM a AS 1x\n', /invalid name for build stage: "1x", name can't start with a number or contain symbols/);
    fails('RUN echo\n', 'dockerfile parse error on line 1: no build stage in current context');
  });

  test('COPY and ADD', () => {
    const c = only('COPY --chown=app:app --chmod=0755 ["a b", "c", "/dst/"]');
    assert.ok(c.kind === 'COPY');
    if (c.kind === 'COPY') {
      assert.deepEqual(c.sources, ['a b', 'c']);
      assert.equal(c.dest, '/dst/');
      assert.equal(c.chown, 'app:app');
      assert.equal(c.chmod, '0755');
    }
    fails('FROM busybox\nCOPY onlyone\n', /COPY requires at least two arguments, but only one was provided. Destination could not be determined/);
    fails('FROM busybox\nADD --from=x a b\n', /unknown flag: --from/);
    fails('FROM busybox\nCOPY --chown a b\n', /missing a value on flag: --chown/);
    fails('FROM busybox\nCOPY --from=a --from=b a b\n', /duplicate flag specified: --from/);
    fails('FROM busybox\nCOPY --parents a b\n', /the --parents option requires BuildKit/);
    fails('FROM busybox\nRUN --mount=type=cache,target=/x make\n', /line 2: the --mount option requires BuildKit/);
  });

  test('single-argument instructions, EXPOSE, VOLUME, STOPSIGNAL, MAINTAINER', () => {
    assert.deepEqual((only('WORKDIR /a b') as { path: string }).path, '/a b');
    assert.deepEqual((only('USER 1000:1000') as { user: string }).user, '1000:1000');
    assert.deepEqual((only('EXPOSE 8080/udp 80') as { ports: string[] }).ports, ['80', '8080/udp']);
    assert.deepEqual((only('VOLUME ["/a", "/b"]') as { paths: string[] }).paths, ['/a', '/b']);
    assert.deepEqual((only('VOLUME /a /b') as { paths: string[] }).paths, ['/a', '/b']);
    assert.equal((only('STOPSIGNAL SIGKILL') as { signal: string }).signal, 'SIGKILL');
    assert.equal((only('MAINTAINER Jane <j@example.com>') as { maintainer: string }).maintainer, 'Jane <j@example.com>');
    fails('FROM busybox\nWORKDIR\n', /WORKDIR requires exactly one argument/);
    fails('FROM busybox\nEXPOSE\n', /EXPOSE requires at least one argument/);
    fails('FROM busybox\nVOLUME [""]\n', /VOLUME specified can not be an empty string/);
  });

  test('HEALTHCHECK in Docker\'s config shape', () => {
    const h = only('HEALTHCHECK --interval=5s --timeout=1m30s --retries=3 CMD curl -f http://localhost/');
    assert.deepEqual(h.kind === 'HEALTHCHECK' && h.health, { Test: ['CMD-SHELL', 'curl -f http://localhost/'], Interval: 5e9, Timeout: 90e9, Retries: 3 });
    const e = only('HEALTHCHECK CMD ["/bin/check", "x"]');
    assert.deepEqual(e.kind === 'HEALTHCHECK' && e.health.Test, ['CMD', '/bin/check', 'x']);
    assert.deepEqual((only('HEALTHCHECK NONE') as { health: unknown }).health, { Test: ['NONE'] });
    fails('FROM busybox\nHEALTHCHECK NONE x\n', /HEALTHCHECK NONE takes no arguments/);
    fails('FROM busybox\nHEALTHCHECK CMD\n', /Missing command after HEALTHCHECK CMD/);
    fails('FROM busybox\nHEALTHCHECK RUN x\n', /Unknown type "RUN" in HEALTHCHECK \(try CMD\)/);
    fails('FROM busybox\nHEALTHCHECK --interval=10us CMD x\n', /Interval "interval" cannot be less than 1ms/);
    fails('FROM busybox\nHEALTHCHECK --interval=5 CMD x\n', /time: missing unit in duration "5"/);
    fails('FROM busybox\nHEALTHCHECK --retries=-1 CMD x\n', /--retries cannot be negative \(-1\)/);
    fails('FROM busybox\nHEALTHCHECK --bogus=1 CMD x\n', /unknown flag: --bogus/);
  });

  test('Go durations', () => {
    assert.equal(parseGoDuration('1h2m3.5s'), 3723.5e9);
    assert.equal(parseGoDuration('250ms'), 250e6);
    assert.equal(parseGoDuration('0'), 0);
    assert.equal(parseGoDuration('1.5µs'), 1500);
    assert.throws(() => parseGoDuration('1x'), /unknown unit "x"/);
    assert.throws(() => parseGoDuration(''), /invalid duration/);
  });

  test('ONBUILD keeps the trigger text; chained and FROM triggers are refused', () => {
    const o = only('onbuild RUN make  all');
    assert.equal(o.kind === 'ONBUILD' && o.trigger, 'RUN make  all');
    fails('FROM busybox\nONBUILD ONBUILD RUN x\n', /Chaining ONBUILD via `ONBUILD ONBUILD` isn't allowed/);
    fails('FROM busybox\nONBUILD FROM x\n', /FROM isn't allowed as an ONBUILD trigger/);
    const t = parseTrigger('COPY . /app');
    assert.ok(t.kind === 'COPY' && t.dest === '/app');
    assert.throws(() => parseTrigger('RUN a\nRUN b'), /single expression/);
  });

  test('unknown instructions name the word and the line; keywords are case-insensitive', () => {
    fails('FROM busybox\n\nFOO bar\n', 'dockerfile parse error on line 3: unknown instruction: FOO');
    assert.equal(only('run echo').kind, 'RUN');
  });

  test('heredocs are refused clearly; << elsewhere is not a heredoc', () => {
    fails('FROM busybox\nRUN cat <<EOF > /x\nhello\nEOF\n', /line 2: heredocs \(<<EOF\) are not supported by the classic builder/);
    fails('FROM busybox\nCOPY <<-"EOT" /x\n', /heredocs/);
    assert.equal(only('RUN echo "a<<b" && echo $((1<<2))').kind, 'RUN');
    assert.equal(only('RUN ["cat", "<<EOF"]').kind, 'RUN');
    assert.equal(only('RUN cat <<< "x"').kind, 'RUN');
  });
});
