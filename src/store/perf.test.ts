// Timings of the store on this machine, reported as test diagnostics. The bounds are generous (a
// loaded CI box must not fail them) but catch an accidental full-table parse or fsync per write.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContainerStore } from './containers.ts';
import { openDatabase } from './database.ts';
import { EventLog } from './events.ts';
import { tempDir } from '../../test/helpers/temp-dir.ts';

interface Rec {
  Id: string;
  Name: string;
  Created: string;
  [k: string]: unknown;
}

/** A container record of realistic size (~3.5 KB of JSON, like dockerd's config.v2.json). */
function record(i: number): Rec {
  return {
    Id: i.toString(16).padStart(8, '0') + 'f'.repeat(56),
    Name: `/container-${i}`,
    Created: new Date(1_700_000_000_000 + i * 1000).toISOString(),
    Path: 'sh',
    Args: ['-c', 'sleep 1000'],
    Config: {
      Image: 'busybox:latest',
      Env: Array.from({ length: 20 }, (_, k) => `VARIABLE_${k}=value-${k}-${i}`),
      Labels: Object.fromEntries(Array.from({ length: 15 }, (_, k) => [`com.example.label-${k}`, `value ${k} `.repeat(4)])),
      Cmd: ['sh', '-c', 'sleep 1000'],
    },
    HostConfig: {
      Binds: ['/srv/data:/data:ro'],
      PortBindings: { '80/tcp': [{ HostIp: '', HostPort: String(8000 + i) }] },
      RestartPolicy: { Name: 'unless-stopped', MaximumRetryCount: 0 },
      Mounts: Array.from({ length: 4 }, (_, k) => ({ Type: 'volume', Source: `vol${k}`, Target: `/mnt/${k}` })),
    },
    State: { Status: 'running', Running: true, Pid: 10_000 + i, StartedAt: new Date().toISOString(), ExitCode: 0 },
    NetworkSettings: {
      Networks: {
        bridge: {
          IPAddress: `172.17.${i >> 8}.${i & 255}`,
          MacAddress: '02:42:ac:11:00:02',
          Gateway: '172.17.0.1',
          NetworkID: 'n'.repeat(64),
        },
      },
    },
    LogPath: `/var/lib/engine/containers/${i}/${i}-json.log`,
    Padding: 'p'.repeat(1200),
  };
}

function time<T>(fn: () => T): [T, number] {
  const start = performance.now();
  const value = fn();
  return [value, performance.now() - start];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const ms = (x: number) => `${x.toFixed(2)} ms`;

test('store timings', (t) => {
  const tmp = tempDir();
  try {
    const path = tmp.file('engine.db');
    const [db, openMs] = time(() => openDatabase(path));
    t.diagnostic(`open + migrate (new file): ${ms(openMs)}`);
    db.close();
    const [db2, reopenMs] = time(() => openDatabase(path));
    t.diagnostic(`open (up to date): ${ms(reopenMs)}`);

    const store = new ContainerStore<Rec>(db2);
    t.diagnostic(`record size: ${JSON.stringify(record(1)).length} bytes`);
    const putTimes: number[] = [];
    for (let i = 0; i < 500; i++) putTimes.push(time(() => store.put(record(i)))[1]);
    t.diagnostic(`put (own transaction): median ${ms(median(putTimes))}, total for 500 ${ms(putTimes.reduce((a, b) => a + b))}`);

    db2.close();
    const db3 = openDatabase(path);
    const cold = new ContainerStore<Rec>(db3);
    const [firstList, coldMs] = time(() => cold.list());
    assert.equal(firstList.length, 500);
    t.diagnostic(`list 500, first after open (reads + parses the table): ${ms(coldMs)}`);

    const warm: number[] = [];
    for (let r = 0; r < 20; r++) warm.push(time(() => cold.list())[1]);
    t.diagnostic(`list 500, cached: median ${ms(median(warm))}`);

    const afterWrite: number[] = [];
    for (let r = 0; r < 20; r++) {
      cold.put(record(r));
      afterWrite.push(time(() => cold.list())[1]);
    }
    t.diagnostic(`list 500, right after a put (re-sort): median ${ms(median(afterWrite))}`);
    assert.ok(median(warm) < 5, `cached list of 500 took ${ms(median(warm))}`);
    assert.ok(median(afterWrite) < 5, `list of 500 after a write took ${ms(median(afterWrite))}`);

    const prefixTimes: number[] = [];
    for (let r = 0; r < 20; r++) prefixTimes.push(time(() => cold.findByPrefix('000001'))[1]);
    t.diagnostic(`findByPrefix: median ${ms(median(prefixTimes))}`);

    const log = new EventLog(db3);
    const input = { Type: 'container', Action: 'start', Actor: { ID: 'f'.repeat(64), Attributes: { image: 'busybox', name: 'web' } } };
    const [, appendMs] = time(() => {
      for (let i = 0; i < 10_000; i++) log.append(input);
    });
    t.diagnostic(`10k event appends, one commit each: ${ms(appendMs)} (${((appendMs / 10_000) * 1000).toFixed(1)} µs/append)`);
    const [, batchMs] = time(() => log.appendMany(Array.from({ length: 10_000 }, () => input)));
    t.diagnostic(`10k event appends, appendMany (one transaction): ${ms(batchMs)}`);
    const [replayed, replayMs] = time(() => log.since(0n));
    assert.equal(replayed.length, 20_000);
    t.diagnostic(`replay 20k events: ${ms(replayMs)}`);
    assert.ok(appendMs < 5_000, `10k appends took ${ms(appendMs)}`);
    db3.close();
  } finally {
    tmp.remove();
  }
});
