// A short, bounded run of the hostile-input tool (test/robustness) inside the normal test command:
// 1 000 seeded malformed requests over raw sockets against a test daemon must give no crash, no
// hang, no 5xx, no error without a JSON body and no /_ping stall. About a quarter go to the web
// console's listener (its gate, static files, /api passthrough and websockets). The long run is by
// hand: `npm run hostile -- --console --count 20000 --seed 7`. HOSTILE_SEED replays another seed here.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { freePort } from '../helpers/ports.ts';
import { consoleSession, type ConsoleTarget } from '../robustness/hostile-console.ts';
import { runHostile } from '../robustness/hostile-run.ts';

const SEED = Number(process.env.HOSTILE_SEED ?? 20261125);
const COUNT = 1000;

describe('hostile input (short run)', () => {
  let d: TestDaemon;
  let console_: ConsoleTarget;
  before(async () => {
    const port = await freePort();
    d = await startDaemon({ args: ['--console-addr', `127.0.0.1:${port}`] });
    console_ = await consoleSession('127.0.0.1', port);
    await loadBusybox(d);
    // Targets for the cases that name a container, network or volume (as `npm run hostile` makes).
    for (const args of [
      ['run', '-d', '--name', 'hostile', 'busybox', 'sleep', '3600'],
      ['network', 'create', 'hostile'],
      ['volume', 'create', 'hostile'],
    ]) {
      const r = await d.docker(args);
      assert.equal(r.code, 0, r.stderr);
    }
  });
  after(async () => d?.cleanup());

  test(`${COUNT} hostile requests (seed ${SEED}): no crash, hang, 5xx, non-JSON error or stall`, async () => {
    const report = await runHostile({
      socketPath: d.socket,
      seed: SEED,
      count: COUNT,
      concurrency: 4,
      console: console_,
      alive: () => d.exitCode === null,
      stallMs: 2000,
    });
    assert.equal(report.requests, COUNT);
    const summary = report.findings
      .slice(0, 10)
      .map((f) => `#${f.index} ${f.problem}: ${f.name}: ${f.detail.slice(0, 160)}`)
      .join('\n');
    assert.deepEqual(report.counts, { hang: 0, '5xx': 0, 'non-JSON error': 0, crash: 0, stall: 0 }, summary);
    // The run really exercised the daemon: most answers are the 4xx of refused input.
    const refused = Object.entries(report.byStatus)
      .filter(([s]) => /^4\d\d$/.test(s))
      .reduce((n, [, c]) => n + c, 0);
    assert.ok(refused > COUNT / 2, JSON.stringify(report.byStatus));
    // And the console's gate: wrong Hosts (421) and sessions or origins (403) refused, websockets opened.
    for (const s of ['421', '403', '101'])
      assert.ok((report.byStatus[s] ?? 0) > 0, `some ${s} answers: ${JSON.stringify(report.byStatus)}`);
    assert.equal((await d.request('GET', '/_ping')).status, 200);
    const viaConsole = await fetch(`http://127.0.0.1:${console_.port}/api/_ping`, { headers: { Cookie: console_.cookie } });
    assert.equal(viaConsole.status, 200, 'the console listener still passes requests on');
    // The cases may remove their targets (DELETE /containers/hostile?force=1 is one); the daemon
    // must still list what is left.
    const list = await d.request('GET', '/containers/json?all=1');
    assert.equal(list.status, 200);
    assert.ok(Array.isArray(list.json()));
  });
});
