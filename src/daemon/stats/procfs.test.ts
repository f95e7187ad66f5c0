import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FdBudget, OpenFiles, parseFlatKeyed, parseNetDev, parseProcStat, readText, ticksToNs } from './procfs.ts';

test('parseProcStat sums the first seven cpu fields in ns and counts cpuN lines', () => {
  const text = 'cpu  100 1 50 1000 10 0 5 7 0 0\ncpu0 50 0 25 500 5 0 2 3 0 0\ncpu1 50 1 25 500 5 0 3 4 0 0\nintr 123 4 5\nctxt 99\n';
  const r = parseProcStat(text)!;
  assert.equal(r.systemUsage, (100 + 1 + 50 + 1000 + 10 + 0 + 5) * 10_000_000);
  assert.equal(r.onlineCpus, 2);
  assert.equal(parseProcStat('intr 1\n'), undefined);
});

test('parseProcStat keeps exact digits past 2^53 (big hosts, long uptimes)', () => {
  const r = parseProcStat('cpu  999999999999 0 0 0 0 0 0 0\ncpu0 1 0 0 0 0 0 0 0\n')!;
  assert.equal(r.systemUsage, 9_999_999_999_990_000_000n);
});

test('ticksToNs converts USER_HZ ticks', () => {
  assert.equal(ticksToNs('25'), 250_000_000);
});

const NET_DEV = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:     100       2    0    0    0     0          0         0      100       2    0    0    0     0       0          0
  tunl0:      0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
  eth1: 5 6 7 8 0 0 0 0 9 10 11 12 0 0 0 0
  eth0: 5338      36    1    2    0     0          0         0      648       8    3    4    0     0       0          0
`;

test("parseNetDev: every interface but lo and the kernel's fallback tunnels, sorted", () => {
  const nets = parseNetDev(NET_DEV)!;
  assert.deepEqual(Object.keys(nets), ['eth0', 'eth1']);
  assert.deepEqual(nets.eth0, {
    rx_bytes: 5338,
    rx_packets: 36,
    rx_errors: 1,
    rx_dropped: 2,
    tx_bytes: 648,
    tx_packets: 8,
    tx_errors: 3,
    tx_dropped: 4,
  });
  assert.deepEqual(nets.eth1, {
    rx_bytes: 5,
    rx_packets: 6,
    rx_errors: 7,
    rx_dropped: 8,
    tx_bytes: 9,
    tx_packets: 10,
    tx_errors: 11,
    tx_dropped: 12,
  });
});

test('parseNetDev: only lo means no networks (the key is left out)', () => {
  assert.equal(parseNetDev(NET_DEV.split('\n').slice(0, 3).join('\n')), undefined);
});

test('parseFlatKeyed reads "key value" lines', () => {
  const m = parseFlatKeyed('user 12\nsystem 3\n\n');
  assert.equal(m.get('user'), '12');
  assert.equal(m.get('system'), '3');
  assert.equal(parseFlatKeyed(undefined).size, 0);
});

test('readText reads files past its buffer size, and gives undefined for missing ones', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stats-read-'));
  try {
    const big = 'x'.repeat(200_000) + 'END';
    writeFileSync(join(dir, 'big'), big);
    writeFileSync(join(dir, 'small'), '42\n');
    assert.equal(readText(join(dir, 'big')), big);
    assert.equal(readText(join(dir, 'small')), '42\n');
    assert.equal(readText(join(dir, 'missing')), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('OpenFiles keeps descriptors within the budget, re-reads from offset 0, remembers missing files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stats-open-'));
  try {
    writeFileSync(join(dir, 'a'), 'one\n');
    writeFileSync(join(dir, 'b'), 'two\n');
    const budget = new FdBudget(1);
    const files = new OpenFiles(budget);
    assert.equal(files.read(join(dir, 'a')), 'one\n');
    assert.equal(budget.left, 0);
    assert.equal(files.size, 1);
    writeFileSync(join(dir, 'a'), 'changed, and longer\n');
    assert.equal(files.read(join(dir, 'a')), 'changed, and longer\n', 'the kept descriptor sees the new content');
    assert.equal(files.read(join(dir, 'b')), 'two\n', 'past the budget: opened and closed per read');
    assert.equal(files.size, 1);
    assert.equal(files.read(join(dir, 'missing')), undefined);
    writeFileSync(join(dir, 'missing'), 'x');
    assert.equal(files.read(join(dir, 'missing')), undefined, 'a missing file stays missing for this set');
    files.close();
    assert.equal(budget.left, 1);
    assert.equal(files.size, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('FdBudget.forProcess takes a share of the descriptor limit', () => {
  const b = FdBudget.forProcess();
  assert.ok(b.left >= 1 && b.left <= 8192);
});
