// The behaviour every log driver that can read shares (json-file, local, a log plugin with ReadLogs):
// each driver's test file calls runDriverSuite(kind[, subject]). Only the public LogDriver surface is
// used here; the tests of what only a file keeps (rotation, compression) run for file drivers only.

import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogDriver, type LogDriver, type LogMessage, type LogReadOptions } from './index.ts';

export const ALL: LogReadOptions = { follow: false, stdout: true, stderr: true };

export async function collect(driver: LogDriver, opts: Partial<LogReadOptions> = {}, signal?: AbortSignal): Promise<LogMessage[]> {
  const out: LogMessage[] = [];
  for await (const m of driver.read({ ...ALL, ...opts }, signal)) out.push(m);
  return out;
}

export const text = (msgs: LogMessage[]): string[] => msgs.map((m) => m.line.toString());

export async function waitFor(cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await sleep(5);
  }
}

/** Temporary directories, removed after the suite. */
export function tempDirs(): () => Promise<string> {
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });
  return async () => {
    const d = await mkdtemp(join(tmpdir(), 'engine-logs-'));
    dirs.push(d);
    return d;
  };
}

/** A driver that is not one of the built-in file drivers (a log plugin). */
export interface DriverSubject {
  /** A driver for the container whose directory is `dir` (the same dir: the same container). */
  create(options: Record<string, string>, dir: string): LogDriver;
}

export function runDriverSuite(kind: string, subject?: DriverSubject): void {
  // Rotation, compression and reading files backwards are a file's; a plugin keeps entries its way.
  const fileIt: typeof it = subject ? ((() => {}) as unknown as typeof it) : it;
  describe(`${kind} driver behaviour`, () => {
    const newDir = tempDirs();
    const make = async (options: Record<string, string> = {}, dir?: string): Promise<{ driver: LogDriver; dir: string }> => {
      const d = dir ?? (await newDir());
      const driver = subject ? subject.create(options, d) : createLogDriver(kind, { containerId: 'c0ffee', dir: d, options, attrs: {} });
      return { driver, dir: d };
    };
    const files = async (driver: LogDriver): Promise<string[]> => (await readdir(join(driver.logPath, '..'))).sort();

    it('round-trips stdout and stderr, each stream in order, with separation', async () => {
      const { driver } = await make();
      const out = Array.from({ length: 200 }, (_, i) => `out ${i}\n`);
      const err = Array.from({ length: 150 }, (_, i) => `err ${i} "quoted" <tag> & \\ \t tab é ✓\n`);
      await driver.attach({ stdout: Readable.from(out.map((l) => Buffer.from(l))), stderr: Readable.from(err.map((l) => Buffer.from(l))) });
      const all = await collect(driver);
      assert.equal(all.length, 350);
      assert.deepEqual(text(all.filter((m) => m.stream === 'stdout')), out);
      assert.deepEqual(text(all.filter((m) => m.stream === 'stderr')), err);
      assert.ok(all.every((m) => !m.partial && typeof m.timeNano === 'bigint'));
      const nowNs = BigInt(Date.now()) * 1_000_000n;
      assert.ok(
        all.every((m) => m.timeNano > nowNs - 60_000_000_000n && m.timeNano <= nowNs + 1_000_000_000n),
        'times are wall-clock now',
      );
      for (let i = 1; i < all.length; i++) assert.ok(all[i]!.timeNano >= all[i - 1]!.timeNano - 5_000_000n, 'file order is time order');
      assert.deepEqual(text(await collect(driver, { stderr: false })), out);
      assert.deepEqual(text(await collect(driver, { stdout: false })), err);
      assert.deepEqual(await collect(driver, { stdout: false, stderr: false }), []);
      await driver.close();
    });

    it('keeps line bytes exactly (CRLF, controls, U+2028, astral characters)', async () => {
      const { driver } = await make();
      const lines = ['plain\n', 'crlf\r\n', '\u2028sep\u2029\n', 'nul\u0000bell\u0007\n', 'emoji 😀\n'];
      await driver.attach({ stdout: Readable.from([Buffer.from(lines.join(''))]) });
      assert.deepEqual(text(await collect(driver)), lines);
      await driver.close();
    });

    it('splits lines longer than 16 KiB into partial entries sharing one timestamp', async () => {
      const { driver } = await make();
      const long = 'x'.repeat(40_000);
      const exact = 'y'.repeat(16_384);
      const stdout = new PassThrough();
      const done = driver.attach({ stdout });
      // a long line arriving in small pieces, then one of exactly 16 KiB, then an unterminated tail
      for (let i = 0; i < long.length; i += 3000) stdout.write(long.slice(i, i + 3000));
      stdout.write('\nshort\n');
      stdout.write(`${exact}\n`);
      stdout.end('tail without newline');
      await done;
      const all = await collect(driver);
      assert.deepEqual(
        all.map((m) => [m.line.length, m.partial ?? false]),
        [
          [16384, true],
          [16384, true],
          [40000 - 32768 + 1, false],
          [6, false],
          [16384, true],
          [1, false],
          [20, true],
        ],
      );
      assert.equal(Buffer.concat(all.slice(0, 3).map((m) => m.line)).toString(), `${long}\n`);
      assert.equal(all[1]!.timeNano, all[0]!.timeNano);
      assert.equal(all[2]!.timeNano, all[0]!.timeNano);
      assert.equal(all[5]!.timeNano, all[4]!.timeNano);
      assert.equal(all[5]!.line.toString(), '\n');
      assert.equal(all[6]!.line.toString(), 'tail without newline');
      await driver.close();
    });

    it('tails the last N entries over both streams', async () => {
      const { driver } = await make();
      const lines = Array.from({ length: 1000 }, (_, i) => `line ${i} ${'p'.repeat(i % 50)}\n`);
      await driver.attach({ stdout: Readable.from([Buffer.from(lines.slice(0, 500).join('')), Buffer.from(lines.slice(500).join(''))]) });
      assert.deepEqual(text(await collect(driver, { tail: 3 })), lines.slice(-3));
      assert.deepEqual(text(await collect(driver, { tail: 1 })), lines.slice(-1));
      assert.deepEqual(await collect(driver, { tail: 0 }), []);
      assert.deepEqual(text(await collect(driver, { tail: 5000 })), lines);
      assert.deepEqual(text(await collect(driver, { tail: -1 })), lines);
      // tail counts both streams, then the stream filter applies (like dockerd)
      assert.deepEqual(await collect(driver, { tail: 10, stdout: false }), []);
      await driver.close();
    });

    it('tails a large file by reading backwards', async () => {
      const { driver } = await make();
      const chunk = Buffer.from(Array.from({ length: 10_000 }, (_, i) => `row ${String(i).padStart(6, '0')} ${'z'.repeat(60)}\n`).join(''));
      await driver.attach({ stdout: Readable.from(Array.from({ length: 20 }, () => chunk)) }); // 200k entries
      const last = await collect(driver, { tail: 2 });
      assert.deepEqual(text(last), [`row 009998 ${'z'.repeat(60)}\n`, `row 009999 ${'z'.repeat(60)}\n`]);
      assert.equal((await collect(driver, { tail: 15_000 })).length, 15_000);
      await driver.close();
    });

    it('filters by since and until', async () => {
      const { driver } = await make();
      const stdout = new PassThrough();
      const done = driver.attach({ stdout });
      stdout.write('early 1\nearly 2\n');
      await waitFor(async () => (await collect(driver)).length === 2);
      await sleep(20);
      stdout.write('middle\n');
      await waitFor(async () => (await collect(driver)).length === 3);
      await sleep(20);
      stdout.end('late\n');
      await done;
      const all = await collect(driver);
      const mid = all[2]!.timeNano;
      assert.deepEqual(text(await collect(driver, { since: mid })), ['middle\n', 'late\n']);
      assert.deepEqual(text(await collect(driver, { until: mid })), ['early 1\n', 'early 2\n', 'middle\n']);
      assert.deepEqual(text(await collect(driver, { since: mid, until: mid })), ['middle\n']);
      assert.deepEqual(text(await collect(driver, { since: all[3]!.timeNano + 1n })), []);
      assert.deepEqual(text(await collect(driver, { until: all[0]!.timeNano - 1n })), []);
      // tail applies before since (dockerd's order)
      assert.deepEqual(text(await collect(driver, { tail: 3, since: mid })), ['middle\n', 'late\n']);
      await driver.close();
    });

    it('follow delivers existing then live lines, and close() ends the follower after everything', async () => {
      const { driver } = await make();
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      const done = driver.attach({ stdout, stderr });
      stdout.write('before\n');
      await waitFor(async () => (await collect(driver)).length === 1);
      const got: string[] = [];
      const follower = (async () => {
        for await (const m of driver.read({ ...ALL, follow: true })) got.push(`${m.stream}:${m.line}`);
      })();
      await waitFor(() => got.length === 1);
      stdout.write('live 1\n');
      await waitFor(() => got.length === 2);
      stderr.write('live err\n');
      await waitFor(() => got.length === 3);
      for (let i = 0; i < 100; i++) stdout.write(`burst ${i}\n`);
      stdout.end('last\n');
      stderr.end();
      await done;
      await driver.close();
      await follower; // ends because the driver closed
      assert.deepEqual(got.slice(0, 3), ['stdout:before\n', 'stdout:live 1\n', 'stderr:live err\n']);
      assert.equal(got.length, 104);
      assert.equal(got.at(-1), 'stdout:last\n');
    });

    it('follow with tail 0 sends only new lines; aborting ends it', async () => {
      const { driver } = await make();
      const stdout = new PassThrough();
      const done = driver.attach({ stdout });
      stdout.write('old\n');
      await waitFor(async () => (await collect(driver)).length === 1);
      const ac = new AbortController();
      const got: string[] = [];
      const follower = (async () => {
        for await (const m of driver.read({ ...ALL, follow: true, tail: 0 }, ac.signal)) got.push(m.line.toString());
      })();
      await sleep(30);
      stdout.write('new\n');
      await waitFor(() => got.length === 1);
      ac.abort();
      await follower;
      stdout.end('after abort\n');
      await done;
      assert.deepEqual(got, ['new\n']);
      await driver.close();
    });

    it('follow on a closed driver returns what is there and ends', async () => {
      const { driver } = await make();
      await driver.attach({ stdout: Readable.from([Buffer.from('a\nb\n')]) });
      await driver.close();
      assert.deepEqual(text(await collect(driver, { follow: true })), ['a\n', 'b\n']);
    });

    fileIt('rotates by max-size, keeps max-file files, and reads across them', async () => {
      const { driver } = await make({ 'max-size': '2k', 'max-file': '3', compress: 'false' });
      const lines = Array.from({ length: 400 }, (_, i) => `rotating line ${String(i).padStart(4, '0')}\n`);
      await driver.attach({ stdout: Readable.from(lines.map((l) => Buffer.from(l))) });
      const base = driver.logPath.split('/').pop()!;
      assert.deepEqual(await files(driver), [base, `${base}.1`, `${base}.2`]);
      const kept = text(await collect(driver));
      assert.ok(kept.length > 20 && kept.length < 400, `kept ${kept.length}`);
      assert.deepEqual(kept, lines.slice(-kept.length), 'the newest lines, in order, without gaps');
      assert.deepEqual(text(await collect(driver, { tail: kept.length - 1 })), lines.slice(-(kept.length - 1)));
      await driver.close();
    });

    fileIt('compresses rotated files (.N.gz) and reads them back, also with tail and since', async () => {
      const { driver } = await make({ 'max-size': '2k', 'max-file': '4', compress: 'true' });
      const lines = Array.from({ length: 400 }, (_, i) => `compressed line ${String(i).padStart(4, '0')}\n`);
      await driver.attach({ stdout: Readable.from(lines.map((l) => Buffer.from(l))) });
      await driver.close();
      const base = driver.logPath.split('/').pop()!;
      assert.deepEqual(await files(driver), [base, `${base}.1.gz`, `${base}.2.gz`, `${base}.3.gz`]);
      const kept = text(await collect(driver));
      assert.deepEqual(kept, lines.slice(-kept.length));
      // a tail reaching into the compressed files
      const n = kept.length - 5;
      assert.deepEqual(text(await collect(driver, { tail: n })), lines.slice(-n));
      const all = await collect(driver);
      assert.deepEqual(
        text(await collect(driver, { since: all[10]!.timeNano })),
        kept.filter((_, i) => all[i]!.timeNano >= all[10]!.timeNano),
      );
    });

    for (const maxFile of ['1', '3']) {
      fileIt(`follow across rotation loses nothing (max-file ${maxFile})`, async () => {
        const { driver } = await make({
          'max-size': '1k',
          'max-file': maxFile,
          ...(kind === 'local' && { compress: maxFile === '1' ? 'false' : 'true' }),
        });
        const stdout = new PassThrough();
        const done = driver.attach({ stdout });
        stdout.write('first\n');
        await waitFor(async () => (await collect(driver)).length === 1);
        const got: string[] = [];
        const follower = (async () => {
          // A slow reader: the writer rotates many times while it lags behind.
          for await (const m of driver.read({ ...ALL, follow: true, tail: 0 })) {
            got.push(m.line.toString());
            if (got.length % 200 === 0) await sleep(2);
          }
        })();
        await sleep(20);
        const expected: string[] = [];
        for (let burst = 0; burst < 40; burst++) {
          let chunk = '';
          for (let i = 0; i < 100; i++) {
            const line = `b${burst} l${i} ${'.'.repeat((burst * 7 + i) % 40)}\n`;
            expected.push(line);
            chunk += line;
          }
          stdout.write(chunk);
          if (burst % 8 === 0) await sleep(1);
        }
        stdout.end();
        await done;
        await driver.close();
        await follower;
        assert.equal(got.length, expected.length);
        assert.deepEqual(got, expected);
        assert.ok((await files(driver)).length <= Number(maxFile));
      });
    }

    fileIt('readers starting while the writer keeps rotating get a gap-free suffix (tail 0, tail all)', async () => {
      const { driver } = await make({ 'max-size': '1k', 'max-file': '2', ...(kind === 'local' && { compress: 'false' }) });
      const stdout = new PassThrough();
      const done = driver.attach({ stdout });
      const expected: string[] = [];
      const followers: Array<{ got: string[]; run: Promise<void> }> = [];
      const join = (tail: number): void => {
        const got: string[] = [];
        const run = (async () => {
          for await (const m of driver.read({ ...ALL, follow: true, tail })) got.push(m.line.toString());
        })();
        followers.push({ got, run });
      };
      for (let burst = 0; burst < 60; burst++) {
        let chunk = '';
        for (let i = 0; i < 40; i++) {
          const line = `b${burst} l${i}${'-'.repeat(i)}\n`;
          expected.push(line);
          chunk += line;
        }
        stdout.write(chunk);
        if (burst === 20 || burst === 40) {
          join(0);
          join(-1);
        }
        await sleep(1);
      }
      stdout.end();
      await done;
      await driver.close();
      await Promise.all(followers.map((f) => f.run));
      for (const { got } of followers) {
        assert.ok(got.length > 0);
        assert.deepEqual(got, expected.slice(expected.length - got.length), 'a contiguous run up to the last line');
      }
    });

    it('appends to the existing file when a new driver opens the same container', async () => {
      const { driver, dir } = await make();
      await driver.attach({ stdout: Readable.from([Buffer.from('run 1\n')]) });
      await driver.close();
      const { driver: again } = await make({}, dir);
      assert.deepEqual(text(await collect(again)), ['run 1\n']); // readable before attach
      await again.attach({ stdout: Readable.from([Buffer.from('run 2\n')]) });
      assert.deepEqual(text(await collect(again)), ['run 1\n', 'run 2\n']);
      await again.close();
    });

    it('reads nothing, without error, before anything was written', async () => {
      const { driver } = await make();
      assert.deepEqual(await collect(driver), []);
      assert.deepEqual(await collect(driver, { tail: 5 }), []);
      await driver.close();
    });

    it('close() stops reading streams that never end', async () => {
      const { driver } = await make();
      const stdout = new PassThrough();
      const done = driver.attach({ stdout });
      stdout.write('kept\npartial');
      await waitFor(async () => (await collect(driver)).length === 1);
      await driver.close();
      await done;
      assert.deepEqual(text(await collect(driver)), ['kept\n', 'partial']);
    });

    describe('many entries', () => {
      let driver: LogDriver;
      const lines = Array.from({ length: 50_000 }, (_, i) => `entry ${i}\n`);
      before(async () => {
        ({ driver } = await make());
        await driver.attach({ stdout: Readable.from([Buffer.from(lines.join(''))]) });
      });
      after(() => driver.close());
      it('reads them all back in order', async () => {
        assert.deepEqual(text(await collect(driver)), lines);
      });
      it('stops early when the consumer breaks', async () => {
        let n = 0;
        for await (const _ of driver.read(ALL)) if (++n === 10) break;
        assert.equal(n, 10);
      });
    });
  });
}
