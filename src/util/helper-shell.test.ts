import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CommandError, HelperShells, shellQuote } from './helper-shell.ts';

describe('helper shells', () => {
  it('keep stdout and stderr apart and report the exit status', async () => {
    const sh = new HelperShells(1);
    try {
      assert.equal(await sh.run('sh', ['-c', 'echo out; echo warn >&2']), 'out\n');
      await assert.rejects(sh.run('sh', ['-c', 'echo partial; echo broken >&2; exit 3']), (err: unknown) => {
        assert.ok(err instanceof CommandError);
        assert.deepEqual([err.code, err.stderr], [3, 'broken\n']);
        assert.match(err.message, /^sh -c .*: broken$/);
        return true;
      });
      await assert.rejects(sh.run('no-such-command-here', []), (err: unknown) => err instanceof CommandError && err.code === 127);
    } finally {
      sh.close();
    }
  });

  it('pass arguments unchanged, however they are quoted, and output exactly as written', async () => {
    const sh = new HelperShells(1);
    try {
      const odd = `it's "quoted" $HOME \`x\` \\ * ;\nnext line`;
      assert.equal(await sh.run('printf', ['%s', odd]), odd);
      assert.equal(await sh.run('printf', ['no newline']), 'no newline');
      assert.equal(shellQuote("a'b"), `'a'\\''b'`);
      assert.throws(() => shellQuote('a\0b'), /NUL/);
    } finally {
      sh.close();
    }
  });

  it("feed input on stdin, and nothing (not the shell's own script) when there is none", async () => {
    const sh = new HelperShells(1);
    try {
      assert.equal(await sh.run('cat', [], { input: 'line 1\nline 2' }), 'line 1\nline 2\n');
      assert.equal(await sh.run('cat', []), '');
      assert.equal(await sh.run('wc', ['-l'], { input: 'a\nb\nc\n' }).then((s) => s.trim()), '3');
    } finally {
      sh.close();
    }
  });

  it('run jobs on every shell at once and queue the rest', async () => {
    // Counted, not timed: each job marks itself running in a directory and reports how many were
    // running with it. The first two wait (up to 10 s) until both are in: they run side by side.
    const dir = mkdtempSync(join(tmpdir(), 'helper-shell-'));
    const sh = new HelperShells(2);
    try {
      const job = (i: number) =>
        `mkdir "$0/${i}"; n=0; while [ ${i} -lt 2 ] && [ "$(ls "$0" | wc -l)" -lt 2 ] && [ $n -lt 1000 ]; do sleep 0.01; n=$((n+1)); done; ` +
        // counted as soon as the pair is in, then held long enough for the other to see it too (a
        // loaded machine can stretch a 10 ms sleep past a short hold)
        `c="$(ls "$0" | wc -l)"; sleep 0.5; echo "$c"; rmdir "$0/${i}"`;
      const seen = await Promise.all(Array.from({ length: 6 }, (_, i) => sh.run('sh', ['-c', job(i), dir]).then(Number)));
      assert.deepEqual(seen.slice(0, 2), [2, 2], `the first two jobs ran side by side: ${seen}`);
      assert.ok(Math.max(...seen) <= 2, `never more than two jobs at once on two shells: ${seen}`);
    } finally {
      sh.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('kill a command that hangs, with its shell, and carry on with a new shell', async () => {
    const sh = new HelperShells(1);
    try {
      await assert.rejects(sh.run('sleep', ['30'], { timeoutMs: 200 }), /timed out after 200 ms/);
      assert.equal(await sh.run('echo', ['after']), 'after\n');
    } finally {
      sh.close();
    }
  });
});

describe('the shared helper shells', () => {
  it('never keep a process alive once their jobs are done', async () => {
    const { execFile } = await import('node:child_process');
    const script = `import { runCommand } from ${JSON.stringify(new URL('./helper-shell.js', import.meta.url).href)};
      console.log((await runCommand('echo', ['done'])).trim());`;
    const started = performance.now();
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 10_000 }, (err, stdout) =>
        err ? reject(err) : resolve(stdout),
      ),
    );
    assert.equal(out.trim(), 'done');
    assert.ok(performance.now() - started < 5_000, 'the process exited by itself');
  });
});
