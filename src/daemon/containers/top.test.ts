// docker top's parsing of ps output.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EngineError } from '../../errors.ts';
import { parsePs, runTop } from './top.ts';

const PS_EF = `UID          PID    PPID  C STIME TTY          TIME CMD
root           1       0  0 10:00 ?        00:00:01 /sbin/init
root        4242    4200  0 10:01 ?        00:00:00 sleep 1000
root        4243    4242  0 10:01 ?        00:00:00 sh -c echo a  b
`;

test("keeps the container's rows; the command keeps its spaces", () => {
  const r = parsePs(PS_EF, [4242, 4243]);
  assert.deepEqual(r.Titles, ['UID', 'PID', 'PPID', 'C', 'STIME', 'TTY', 'TIME', 'CMD']);
  assert.deepEqual(r.Processes, [
    ['root', '4242', '4200', '0', '10:01', '?', '00:00:00', 'sleep 1000'],
    ['root', '4243', '4242', '0', '10:01', '?', '00:00:00', 'sh -c echo a b'],
  ]);
  assert.deepEqual(parsePs(PS_EF, [99]).Processes, []);
});

test('ps output without a PID column (or none at all) is a 400', () => {
  for (const out of ['USER COMMAND\nroot init\n', '']) {
    assert.throws(
      () => parsePs(out, [1]),
      (e: unknown) => e instanceof EngineError && e.status === 400 && /Couldn't find PID field/.test(e.message),
    );
  }
});

test("runTop runs the host's ps: this process is found by its pid; bad options are a 400", async () => {
  const r = await runTop([process.pid], '-o pid,args');
  assert.deepEqual(r.Titles, ['PID', 'COMMAND']);
  assert.equal(r.Processes.length, 1);
  assert.equal(r.Processes[0]![0], String(process.pid));
  await assert.rejects(
    runTop([1], '--no-such-option-here'),
    (e: unknown) => e instanceof EngineError && e.status === 400 && /Error running ps/.test(e.message),
  );
});
