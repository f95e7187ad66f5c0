// Unit tests of the command table and what is generated from it: the table assembles (families
// merged, duplicates refused), every entry is described, `--help` output in docker's shape for the
// top level, a management command and a leaf, docker's words for unknown commands, and the bash
// and zsh completion scripts run by the real shells.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CommandSpec } from './command-spec.ts';
import { bashCompletion, zshCompletion } from './completion.ts';
import { commandHelp, optionLines, topHelp } from './help.ts';
import { main, TABLE } from './main.ts';
import { assemble, lookup, walk } from './table.ts';

/** Runs main with stdout and stderr captured. */
async function runMain(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = process.stdout.write.bind(process.stdout);
  const e = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((s: string | Uint8Array) => ((out += String(s)), true)) as typeof process.stdout.write;
  process.stderr.write = ((s: string | Uint8Array) => ((err += String(s)), true)) as typeof process.stderr.write;
  try {
    const code = await main(argv);
    return { code, out, err };
  } finally {
    process.stdout.write = o;
    process.stderr.write = e;
  }
}

test('table: families with the same management command merge; a name defined twice is refused', () => {
  const leaf = (name: string): CommandSpec => ({ name, description: name, run: async () => 0 });
  const a: CommandSpec[] = [{ name: 'container', group: 'management', description: 'c', subcommands: [leaf('ls')] }];
  const b: CommandSpec[] = [{ name: 'container', description: 'c', subcommands: [leaf('diff')] }, leaf('diff')];
  const t = assemble(a, b);
  assert.deepEqual(
    t.map((s) => s.name),
    ['container', 'diff'],
  );
  assert.deepEqual(
    t[0]!.subcommands!.map((s) => s.name),
    ['ls', 'diff'],
  );
  assert.throws(() => assemble(b, [leaf('diff')]), /"diff" is defined twice/);
  assert.throws(() => assemble(a, a), /"container ls" is defined twice/);
});

test('table: every entry is described, top-level ones grouped, leaves runnable, flags described and unique', () => {
  for (const s of TABLE) assert.ok(s.group, `${s.name} has a help group`);
  for (const { path, spec } of walk(TABLE)) {
    const at = path.join(' ');
    assert.ok(spec.description, `${at} has a description`);
    assert.ok(!!spec.run !== !!spec.subcommands, `${at} runs or has subcommands`);
    const longs = new Set<string>();
    const shorts = new Set<string>();
    for (const f of spec.flags ?? []) {
      assert.ok(f.description || f.hidden, `${at} --${f.name} has a description`);
      assert.ok(!longs.has(f.name), `${at} --${f.name} once`);
      longs.add(f.name);
      if (f.short) assert.ok(!shorts.has(f.short), `${at} -${f.short} once`);
      if (f.short) shorts.add(f.short);
    }
  }
  // The docker names: the top-level ones and the second names under management commands.
  for (const p of ['ps', 'container ls', 'container list', 'image rm', 'system df', 'network ls', 'volume prune', 'context use'])
    assert.ok(lookup(TABLE, p.split(' '))?.run, p);
  assert.equal(lookup(TABLE, ['ps'])!.run, lookup(TABLE, ['container', 'ps'])!.run, 'ps and container ps are one command');
});

test('help: the top level under docker headings, in docker order, global options last', () => {
  const h = topHelp(TABLE);
  assert.match(h, /^Usage: {2}engine \[OPTIONS\] COMMAND\n\n/);
  const heads = ['Common Commands:', 'Management Commands:', 'Commands:', 'Global Options:'].map((x) => h.indexOf(`\n${x}\n`));
  assert.ok(
    heads.every((i, n) => i > 0 && (n === 0 || i > heads[n - 1]!)),
    `headings in order: ${heads}`,
  );
  const common = h.slice(heads[0], heads[1]);
  assert.ok(common.indexOf('\n  run ') < common.indexOf('\n  exec ') && common.indexOf('\n  exec ') < common.indexOf('\n  ps '));
  for (const s of TABLE) if (!s.hidden) assert.match(h, new RegExp(`\\n  ${s.name} +\\S`), s.name);
  assert.match(h, /\n {2}-H, --host list {10}Daemon socket to connect to\n/);
  assert.ok(h.endsWith("\nRun 'engine COMMAND --help' for more information on a command.\n"));
});

test('help: a management command lists its subcommands, hidden ones left out; a leaf shows usage, aliases, options', () => {
  const sys = commandHelp(TABLE, ['system'], lookup(TABLE, ['system'])!);
  assert.match(sys, /^Usage: {2}engine system COMMAND\n\n.+\n\nCommands:\n {2}df {10}\S/);
  for (const s of ['df', 'events', 'info', 'prune']) assert.match(sys, new RegExp(`\\n  ${s} +\\S`));
  assert.doesNotMatch(sys, /dial-stdio/);
  assert.ok(sys.endsWith("Run 'engine system COMMAND --help' for more information on a command.\n"));
  const ps = commandHelp(TABLE, ['container', 'ls'], lookup(TABLE, ['container', 'ls'])!);
  assert.match(
    ps,
    /^Usage: {2}engine container ls \[OPTIONS\]\n\nList containers\n\nAliases:\n {2}engine container ls, engine container list, engine container ps, engine ps\n\nOptions:\n/,
  );
  // pflag's columns: three spaces after the longest left column, sorted by name.
  assert.equal(
    optionLines([
      { name: 'zeta', kind: 'bool', description: 'Z' },
      { name: 'filter', short: 'f', kind: 'list', description: 'F' },
      { name: 'time', short: 't', kind: 'int', description: 'T' },
    ]),
    '  -f, --filter filter   F\n  -t, --time int        T\n      --zeta            Z\n',
  );
});

test('main: --help and help at every level exit 0 on stdout; unknown commands give docker words on stderr, 1', async () => {
  for (const argv of [
    ['--help'],
    ['help'],
    [],
    ['system', '--help'],
    ['system'],
    ['help', 'system'],
    ['network', 'ls', '--help'],
    ['ps', '-h'],
    ['help', 'ps'],
  ]) {
    const r = await runMain(argv);
    assert.equal(r.code, 0, argv.join(' '));
    assert.match(r.out, /^Usage: {2}engine /, argv.join(' '));
    assert.equal(r.err, '', argv.join(' '));
  }
  assert.match((await runMain(['system', '--help'])).out, /\n {2}prune {7}Remove unused data\n/);
  assert.deepEqual(await runMain(['frob']), {
    code: 1,
    out: '',
    err: "engine: unknown command: engine frob\n\nRun 'engine --help' for more information\n",
  });
  assert.deepEqual(await runMain(['system', 'frob']), {
    code: 1,
    out: '',
    err: "engine: unknown command: engine system frob\n\nUsage:  engine system\n\nRun 'engine system --help' for more information\n",
  });
  assert.deepEqual(await runMain(['help', 'frob']), { code: 1, out: '', err: 'unknown help topic: frob\n' });
  // docker 28's shape: a refused flag exits 125, a wrong argument count 1, both with the usage line.
  assert.deepEqual(await runMain(['ps', '--frob']), {
    code: 125,
    out: '',
    err: "unknown flag: --frob\n\nUsage:  engine ps [OPTIONS]\n\nRun 'engine ps --help' for more information\n",
  });
  assert.deepEqual(await runMain(['network', 'create']), {
    code: 1,
    out: '',
    err: "engine: 'engine network create' requires 1 argument\n\nUsage:  engine network create [OPTIONS] NETWORK\n\nRun 'engine network create --help' for more information\n",
  });
  const errs = [];
  for (const a of [['rm'], ['ps', 'x'], ['logout', 'a', 'b'], ['stop', '-t'], ['ps', '-n', 'x'], ['--frob']]) errs.push(await runMain(a));
  assert.deepEqual(
    errs.map((r) => [r.code, r.err.split('\n')[0]]),
    [
      [1, "engine: 'engine rm' requires at least 1 argument"],
      [1, "engine: 'engine ps' accepts no arguments"],
      [1, "engine: 'engine logout' requires at most 1 argument"],
      [125, "flag needs an argument: 't' in -t"],
      [125, 'invalid argument "x" for "-n, --last" flag: strconv.ParseInt: parsing "x": invalid syntax'],
      [125, 'unknown flag: --frob'],
    ],
  );
});

test('completion: the bash script completes commands, subcommands and flags in real bash', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'engine-completion-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'engine.bash');
  writeFileSync(file, bashCompletion(TABLE));
  const complete = (...words: string[]) =>
    execFileSync(
      'bash',
      [
        '-c',
        `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _engine; printf '%s\\n' "\${COMPREPLY[@]}"`,
        'x',
        file,
        'engine',
        ...words,
      ],
      { encoding: 'utf8' },
    )
      .split('\n')
      .filter(Boolean)
      .sort();
  assert.deepEqual(complete('cont'), ['container', 'context']);
  assert.deepEqual(complete('container', 'l'), ['list', 'logs', 'ls']);
  assert.deepEqual(complete('system', ''), ['df', 'events', 'info', 'prune']);
  assert.deepEqual(complete('ps', '--la'), ['--last', '--latest']);
  assert.deepEqual(complete('--tls'), ['--tls', '--tlscacert', '--tlscert', '--tlskey', '--tlsverify']);
  // A flag's value is skipped (-H's socket is not a command); a positional ends the walk.
  assert.deepEqual(complete('-H', 'unix:///x', 'netw'), ['network']);
  assert.deepEqual(complete('network', 'create', '--driver', 'bridge', '--int'), ['--internal']);
  assert.deepEqual(complete('image', 'rm', '--no-p'), ['--no-prune']);
  // The script's words are the table's: every top-level name is offered.
  assert.deepEqual(
    complete(''),
    TABLE.filter((s) => !s.hidden)
      .flatMap((s) => [s.name, ...(s.aliases ?? [])])
      .sort(),
  );
});

test('completion: the zsh script parses, and its tables answer in real zsh', (t) => {
  if (spawnSync('zsh', ['--version']).error) {
    t.skip('zsh is not installed (scripts/setup.sh test installs it)');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'engine-completion-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, '_engine');
  writeFileSync(file, zshCompletion(TABLE));
  execFileSync('zsh', ['-n', file]);
  const out = execFileSync(
    'zsh',
    [
      '-f',
      '-c',
      `autoload -U compinit && compinit -u -d "$2/zcompdump" && source "$1" && _engine_subcommands system && print -rl -- $reply && _engine_flags 'network ls' && print -rl -- $reply`,
      'x',
      file,
      dir,
    ],
    { encoding: 'utf8' },
  );
  assert.match(out, /^df:Show engine disk usage\n/);
  assert.match(out, /\nprune:Remove unused data\n/);
  assert.match(out, /\n--filter:Provide filter values/);
  assert.match(out, /\n-q:Only display/);
});
