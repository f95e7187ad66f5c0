// The index against the full table: every command line it places (each path of the table, under
// every alias) resolves in its file's entries to the very command the full table runs, and every
// command of the table but `completion` is placed (a command left out would still run, slower);
// and `engine ps` / `engine images` load none of the other families' modules.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { familyOf } from './command-index.ts';
import type { CommandSpec } from './command-spec.ts';
import { resolve } from './dispatch.ts';
import { TABLE } from './main.ts';
import { walk } from './table.ts';

/** Each way of typing a path: every step by its name or one of its aliases. */
function spellings(table: readonly CommandSpec[], path: readonly string[]): string[][] {
  let out: string[][] = [[]];
  let list = table;
  for (const name of path) {
    const spec = list.find((s) => s.name === name)!;
    out = out.flatMap((p) => [spec.name, ...(spec.aliases ?? [])].map((n) => [...p, n]));
    list = spec.subcommands ?? [];
  }
  return out;
}

test('command index: each command line it places runs the full table’s command', async () => {
  let placed = 0;
  for (const { path, spec } of walk(TABLE)) {
    if (!spec.run) continue;
    for (const words of spellings(TABLE, path)) {
      const line = [...words, 'ARG'];
      const family = familyOf(line);
      if (path[0] === 'completion') {
        assert.equal(family, undefined, words.join(' '));
        continue;
      }
      assert.ok(family, `${words.join(' ')} is placed`);
      const full = resolve(TABLE, line);
      const own = resolve(await family(), line);
      assert.equal(full.kind, 'run', words.join(' '));
      assert.equal(own.kind, 'run', words.join(' '));
      if (own.kind !== 'run' || full.kind !== 'run') continue;
      assert.equal(own.spec.run, full.spec.run, words.join(' '));
      assert.deepEqual(own.path, full.path);
      assert.deepEqual(own.rest, ['ARG']);
      placed++;
    }
  }
  assert.ok(placed > 150, `${placed} command lines placed`);
});

test('command index: words it does not know, flags and management commands alone go to the full table', () => {
  for (const words of [
    [],
    ['nosuch'],
    ['constructor'],
    ['__proto__'],
    ['container'],
    ['image', '--help'],
    ['container', '-h'],
    ['completion', 'bash'],
  ])
    assert.equal(familyOf(words), undefined, words.join(' '));
  // A management command's file decides its subcommands (and refuses an unknown one through the full table).
  assert.ok(familyOf(['service']));
  assert.ok(familyOf(['container', 'nosuch']));
});

/** The modules of this build that `engine <args>` loads (Node's module hooks, in a child process). */
function modulesLoaded(args: string[]): string[] {
  const script = [
    "const { registerHooks } = require('node:module');",
    'const seen = [];',
    'registerHooks({ resolve: (s, c, next) => { const r = next(s, c); seen.push(r.url); return r; } });',
    `import(${JSON.stringify(new URL('./dispatch.js', import.meta.url).href)})`,
    `  .then((m) => m.main(${JSON.stringify(args)}))`,
    "  .then(() => process.stdout.write(seen.join('\\n')));",
  ].join('\n');
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: '/nonexistent' } });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\n').filter((u) => u.includes('/cli/'));
}

test('command index: ps and images load their own commands file, not the others', () => {
  // Connecting fails (no daemon there): the command has run by then.
  for (const [cmd, own] of [
    ['ps', '/commands/containers.js'],
    ['images', '/commands/images.js'],
  ] as const) {
    const loaded = modulesLoaded(['-H', 'unix:///nonexistent/engine.sock', cmd]);
    assert.ok(
      loaded.some((u) => u.endsWith(own)),
      `${cmd} loads ${own}`,
    );
    const others = loaded.filter((u) => /\/commands\/cluster\/|command-table|families|management|tar-context|\/commands\/run\.js/.test(u));
    assert.deepEqual(others, [], `${cmd} loads no other family`);
  }
});
