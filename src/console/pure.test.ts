// The console's pure parts, run in node: stream parsers, numbers, the virtual window, tar.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { bytes, cpuPercent, humanDuration, memoryUsed, portsText } from './format.ts';
import { FrameDemux, JsonLines, LineSplitter } from './streams.ts';
import { TarLister, writeTar } from './tar.ts';
import { rowWindow, streamedRows } from './virtual.ts';

test('JsonLines: messages split across chunks come out whole, blank lines skipped', () => {
  const p = new JsonLines<{ a: number }>();
  assert.deepEqual(p.push('{"a":1}\n{"a"'), [{ a: 1 }]);
  assert.deepEqual(p.push(':2}\n\n{"a":3}\n'), [{ a: 2 }, { a: 3 }]);
  assert.deepEqual(p.push(''), []);
});

test('FrameDemux: frames cut at any byte are reassembled with their stream', () => {
  const frame = (s: number, text: string) => {
    const data = Buffer.from(text);
    const h = Buffer.alloc(8);
    h[0] = s;
    h.writeUInt32BE(data.length, 4);
    return Buffer.concat([h, data]);
  };
  const all = Buffer.concat([frame(1, 'out\n'), frame(2, 'err\n'), frame(1, 'x'.repeat(70000))]);
  for (const cut of [1, 5, 8, 9, 13, 20, 100]) {
    const d = new FrameDemux();
    const got = [...d.push(all.subarray(0, cut)), ...d.push(all.subarray(cut))];
    assert.deepEqual(
      got.map((f) => [f.stream, Buffer.from(f.data).toString().slice(0, 5), f.data.length]),
      [
        ['stdout', 'out\n', 4],
        ['stderr', 'err\n', 4],
        ['stdout', 'xxxxx', 70000],
      ],
    );
  }
});

test('LineSplitter keeps each stream’s unfinished line apart and drops CR', () => {
  const s = new LineSplitter();
  assert.deepEqual(s.push('stdout', 'a\r\nb'), ['a']);
  assert.deepEqual(s.push('stderr', 'e1\n'), ['e1']);
  assert.deepEqual(s.push('stdout', 'c\n'), ['bc']);
});

test('numbers: sizes, docker stats’ CPU and memory, ports', () => {
  assert.equal(bytes(0), '0 B');
  assert.equal(bytes(1536), '1.5 KiB');
  assert.equal(bytes(300 * 1024 * 1024), '300 MiB');
  const pct = cpuPercent({
    cpu_stats: { cpu_usage: { total_usage: 2_000_000_000 }, system_cpu_usage: 20_000_000_000, online_cpus: 2 },
    precpu_stats: { cpu_usage: { total_usage: 1_000_000_000 }, system_cpu_usage: 10_000_000_000 },
  });
  assert.equal(pct, 20);
  assert.equal(memoryUsed({ memory_stats: { usage: 100, stats: { total_inactive_file: 30 } } }), 70);
  assert.equal(memoryUsed({ memory_stats: { usage: 100, stats: { inactive_file: 40 } } }), 60);
  assert.equal(
    portsText([
      { IP: '0.0.0.0', PrivatePort: 80, PublicPort: 8080, Type: 'tcp' },
      { IP: '::', PrivatePort: 80, PublicPort: 8080, Type: 'tcp' },
      { PrivatePort: 53, Type: 'udp' },
    ]),
    '8080→80/tcp, :::8080→80/tcp, 53/udp',
  );
});

test('rowWindow renders only the rows in view plus the overscan', () => {
  assert.deepEqual(rowWindow(0, 340, 34, 1000, 8), { first: 0, last: 18, offset: 0, total: 34000 });
  const mid = rowWindow(34 * 500, 340, 34, 1000, 8);
  assert.deepEqual([mid.first, mid.last, mid.offset], [492, 518, 492 * 34]);
  assert.deepEqual(rowWindow(34 * 995, 340, 34, 1000, 8).last, 1000);
  assert.deepEqual(rowWindow(0, 340, 34, 0), { first: 0, last: 0, offset: 0, total: 0 });
});

test('streamedRows: the running rows in view, no overscan, at most the cap', () => {
  const rows = Array.from({ length: 1000 }, (_, i) => ({ Id: `c${i}`, State: i % 3 === 0 ? 'exited' : 'running' }));
  // Rows 0–9 in view (340 px of 34): 0, 3, 6, 9 exited.
  assert.deepEqual(streamedRows(rows, 0, 340, 34, 30), ['c1', 'c2', 'c4', 'c5', 'c7', 'c8']);
  // Scrolled by half a row: row 10 is partly in view too.
  assert.deepEqual(streamedRows(rows, 17, 340, 34, 30), ['c1', 'c2', 'c4', 'c5', 'c7', 'c8', 'c10']);
  assert.deepEqual(streamedRows(rows, 34 * 500, 170, 34, 30), ['c500', 'c502', 'c503']);
  // A window as tall as the whole list: the cap holds.
  const all = streamedRows(rows, 0, 34 * 1000, 34, 30);
  assert.equal(all.length, 30);
  assert.deepEqual(streamedRows(rows, 34 * 998, 340, 34, 30), ['c998']);
  assert.deepEqual(streamedRows([], 0, 340, 34, 30), []);
});

test('writeTar makes a tar GNU tar reads; TarLister lists GNU tar’s own output, long names included', () => {
  const dir = mkdtempSync(join(tmpdir(), 'console-tar-'));
  try {
    const long = `${'d'.repeat(60)}/${'f'.repeat(70)}.txt`;
    const tar = writeTar([
      { name: 'a.txt', data: new TextEncoder().encode('hello\n') },
      { name: long, data: new Uint8Array(1000) },
    ]);
    writeFileSync(join(dir, 'x.tar'), tar);
    assert.equal(execFileSync('tar', ['-xOf', join(dir, 'x.tar'), 'a.txt']).toString(), 'hello\n');
    assert.equal(execFileSync('tar', ['-tf', join(dir, 'x.tar')]).toString(), `a.txt\n${long}\n`);

    execFileSync('mkdir', ['-p', join(dir, 'root/sub', 'g'.repeat(120))]);
    writeFileSync(join(dir, 'root/sub', 'g'.repeat(120), 'file'), 'x'.repeat(3000));
    execFileSync('ln', ['-s', '/etc/passwd', join(dir, 'root/link')]);
    execFileSync('tar', ['--format=gnu', '-cf', join(dir, 'gnu.tar'), '-C', dir, 'root']);
    const data = readFileSync(join(dir, 'gnu.tar'));
    const lister = new TarLister();
    const got = [];
    for (let i = 0; i < data.length; i += 700) got.push(...lister.push(data.subarray(i, i + 700)));
    assert.ok(lister.ended);
    const byName = new Map(got.map((e) => [e.name, e]));
    assert.equal(byName.get('root')?.type, 'dir');
    assert.equal(byName.get('root/link')?.type, 'symlink');
    assert.equal(byName.get('root/link')?.linkname, '/etc/passwd');
    assert.equal(byName.get(`root/sub/${'g'.repeat(120)}/file`)?.size, 3000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('humanDuration speaks as docker ps', () => {
  const cases: Array<[number, string]> = [
    [0.5, 'Less than a second'],
    [1, '1 second'],
    [59, '59 seconds'],
    [60, 'About a minute'],
    [119, 'About a minute'],
    [120, '2 minutes'],
    [3599, '59 minutes'],
    [3600, 'About an hour'],
    [5400, '2 hours'],
    [47 * 3600, '47 hours'],
    [48 * 3600, '2 days'],
    [15 * 86400, '2 weeks'],
    [61 * 86400, '2 months'],
    [800 * 86400, '2 years'],
  ];
  for (const [s, want] of cases) assert.equal(humanDuration(s), want, String(s));
});
