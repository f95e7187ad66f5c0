import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Logger } from '../../util/log.ts';
import type { ContainerRecord } from './record.ts';
import { ContainerRunEvents } from './run-events.ts';
import { volumeUsers } from './volume-users.ts';

const rec = (id: string) => ({ Id: id }) as ContainerRecord;

test('run events reach every subscriber in order; a failing one is logged and the rest still run', () => {
  let logged = '';
  const out = { write: (s: string) => ((logged += s), true) } as unknown as NodeJS.WritableStream;
  const runs = new ContainerRunEvents(new Logger({ level: 'warn', format: 'text', raw: false }, {}, out));
  const seen: string[] = [];
  runs.subscribe((r, change) => seen.push(`a:${r.Id}:${change}`));
  runs.subscribe(() => {
    throw new Error('boom');
  });
  const off = runs.subscribe((r, change) => seen.push(`c:${r.Id}:${change}`));
  runs.emit(rec('x'), 'started');
  off();
  runs.emit(rec('x'), 'stopped');
  assert.deepEqual(seen, ['a:x:started', 'c:x:started', 'a:x:stopped']);
  assert.match(logged, /run listener failed: boom/);
});

test('volume users: named volume mounts of each record, restarting counts as running', () => {
  const users = volumeUsers([
    {
      Id: 'a',
      State: { Running: false, Restarting: true },
      Mounts: [{ Type: 'volume', Name: 'v1' }, { Type: 'bind' }, { Type: 'volume' }],
    },
    { Id: 'b', State: { Running: false, Restarting: false }, Mounts: [] },
  ]);
  assert.deepEqual(users, [
    { id: 'a', running: true, volumes: ['v1'] },
    { id: 'b', running: false, volumes: [] },
  ]);
});
