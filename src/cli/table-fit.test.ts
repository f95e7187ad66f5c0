// Unit tests of table fitting (table-fit.ts through output.ts's printFormatted): fitted tables are
// no wider than asked, keep ID columns and titles whole, cut the widest columns first, keep a
// quoted cell's closing quote, and are left alone when they already fit or when no width is given.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { alignTable, printFormatted } from './output.ts';
import { clipLines, cut, fitRows } from './table-fit.ts';

const TITLES = { ID: 'CONTAINER ID', Image: 'IMAGE', Command: 'COMMAND', Status: 'STATUS', Names: 'NAMES' };
const FORMAT = 'table {{.ID}}\t{{.Image}}\t{{.Command}}\t{{.Status}}\t{{.Names}}';
const ITEMS = [
  {
    ID: '0123456789ab',
    Image: 'registry.example.com:5000/team/some-long-image-name:1.2.3',
    Command: '"sleep 1000000000…"',
    Status: 'Up 3 minutes (healthy)',
    Names: 'a-container-with-a-rather-long-name',
  },
  { ID: 'ba9876543210', Image: 'busybox', Command: '"true"', Status: 'Exited (0) 2 hours ago', Names: 'short' },
];

function render(width?: number): string[] {
  let s = '';
  printFormatted(ITEMS, FORMAT, TITLES, (x) => (s += x), width === undefined ? undefined : { width });
  return s.trimEnd().split('\n');
}

test('table fit: a wide table is shrunk to the width, IDs and titles whole', () => {
  const full = render();
  assert.ok(Math.max(...full.map((l) => l.length)) > 100, 'the unfitted table is wider than the width used below');
  for (const width of [100, 80, 60]) {
    const lines = render(width);
    assert.equal(lines.length, 3);
    for (const l of lines) assert.ok(l.length <= width, `${width}: ${JSON.stringify(l)} is ${l.length} wide`);
    assert.match(lines[0]!, /^CONTAINER ID\s+IMAGE\s+COMMAND\s+STATUS\s+NAMES$/);
    assert.ok(lines[1]!.startsWith('0123456789ab   '), lines[1]);
    assert.ok(lines[2]!.startsWith('ba9876543210   '), lines[2]);
    // The long image name is the first to give way; short cells stay whole.
    assert.match(lines[1]!, / registry[^ ]*… /);
    assert.match(lines[2]!, / busybox /);
    assert.match(lines[2]!, / "true" /);
  }
  // At 60 columns the quoted COMMAND is cut inside its quotes.
  assert.match(render(60)[1]!, / "sleep[^"]*…" /);
});

test('table fit: a table that fits is printed exactly as unfitted', () => {
  const full = render();
  const widest = Math.max(...full.map((l) => l.length));
  assert.deepEqual(render(widest), full);
  assert.deepEqual(render(500), full);
});

test('table fit: too narrow for the columns: lines are cut at the width, nothing wraps', () => {
  const lines = render(30);
  for (const l of lines) assert.ok(l.length <= 30, JSON.stringify(l));
  assert.ok(lines[0]!.startsWith('CONTAINER ID   IMAGE'), lines[0]);
});

test('table fit: fitRows and cut', () => {
  assert.equal(cut('abcdef', 6), 'abcdef');
  assert.equal(cut('abcdefg', 6), 'abcde…');
  assert.equal(cut('"sleep 100"', 8), '"sleep…"');
  assert.equal(cut('x', 0), '');
  const rows = [
    ['NETWORK ID', 'NAME', 'DRIVER'],
    ['0123456789ab', 'n'.repeat(40), 'bridge'],
  ];
  const fitted = fitRows(rows, 50, new Set(['NETWORK ID']));
  assert.equal(fitted[1]![0], '0123456789ab');
  assert.equal(fitted[1]![2], 'bridge');
  assert.ok(fitted[1]![1]!.endsWith('…'));
  assert.ok(
    Math.max(
      ...alignTable(fitted)
        .trimEnd()
        .split('\n')
        .map((l) => l.length),
    ) <= 50,
  );
  assert.equal(clipLines('abcdef\nab', 4), 'abcd\nab');
});
