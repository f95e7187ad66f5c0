import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { acquirePidfile, isAlive, runsOurProgram } from './pidfile.ts';

const NODE = fileURLToPath(new URL('../../../bin/node', import.meta.url));
const PIDFILE_MODULE = fileURLToPath(new URL('./pidfile.js', import.meta.url));

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-pidfile-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A pid that certainly belonged to a process that is gone now. */
function deadPid(): number {
  const r = spawnSync('sh', ['-c', 'echo $$']);
  return Number(String(r.stdout).trim());
}

describe('acquirePidfile', () => {
  it('writes our pid with mode 0644 (creating the parent) and release removes it', async () => {
    const path = join(dir, 'run', 'nested', 'engine.pid');
    const pf = await acquirePidfile(path);
    assert.equal((await readFile(path, 'utf8')).trim(), String(process.pid));
    assert.equal((await stat(path)).mode & 0o777, 0o644);
    assert.deepEqual(await readdir(join(dir, 'run', 'nested')), ['engine.pid'], 'no temporary file is left behind');
    await pf.release();
    assert.equal(existsSync(path), false);
  });

  it('refuses while another live process holds the file, and takes it over once that process is dead', async () => {
    const path = join(dir, 'held.pid');
    const script = join(dir, 'holder.mjs');
    await writeFile(
      script,
      `
      import { acquirePidfile } from ${JSON.stringify(PIDFILE_MODULE)};
      await acquirePidfile(process.argv[2]);
      process.stdout.write('held\\n');
      setInterval(() => {}, 1000);
    `,
    );
    const holder = spawn(NODE, [script, path], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const [chunk] = await once(holder.stdout!, 'data');
      assert.equal(String(chunk), 'held\n');
      assert.equal((await readFile(path, 'utf8')).trim(), String(holder.pid));

      await assert.rejects(acquirePidfile(path), { message: `pid file found, ensure engine is not running or delete ${path}` });
      assert.equal((await readFile(path, 'utf8')).trim(), String(holder.pid), 'the holder keeps its file');
    } finally {
      holder.kill('SIGKILL'); // no release: the file is left stale, as after a crash
      await once(holder, 'exit');
    }

    assert.equal(isAlive(holder.pid!), false);
    const pf = await acquirePidfile(path);
    assert.equal((await readFile(path, 'utf8')).trim(), String(process.pid));
    await pf.release();
  });

  it('replaces a stale file naming a dead process, an unparsable file, or our own pid', async () => {
    const path = join(dir, 'stale.pid');
    for (const content of [String(deadPid()), 'garbage\n', '', String(process.pid)]) {
      await writeFile(path, content);
      const pf = await acquirePidfile(path);
      assert.equal((await readFile(path, 'utf8')).trim(), String(process.pid), `replacing ${JSON.stringify(content)}`);
      await pf.release();
    }
  });

  it('takes over a file naming a live process of another program (a pid reused after a crash)', async () => {
    const path = join(dir, 'reused.pid');
    const other = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      await once(other, 'spawn');
      assert.equal(isAlive(other.pid!), true);
      assert.equal(runsOurProgram(other.pid!), false);
      assert.equal(runsOurProgram(process.pid), true);
      await writeFile(path, String(other.pid));
      const warnings: string[] = [];
      const pf = await acquirePidfile(path, { log: { warn: (m: string) => void warnings.push(m) } });
      assert.equal((await readFile(path, 'utf8')).trim(), String(process.pid));
      assert.match(warnings.join('\n'), new RegExp(`names process ${other.pid}, which is not an engine daemon`));
      await pf.release();
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('release leaves a file that no longer names us alone', async () => {
    const path = join(dir, 'taken.pid');
    const pf = await acquirePidfile(path);
    await writeFile(path, '1');
    await pf.release();
    assert.equal(await readFile(path, 'utf8'), '1');
    await rm(path);
    await pf.release(); // an already removed file is fine
  });
});

describe('isAlive', () => {
  it('knows live and dead processes', () => {
    assert.equal(isAlive(process.pid), true);
    assert.equal(isAlive(1), true);
    assert.equal(isAlive(deadPid()), false);
  });
});
