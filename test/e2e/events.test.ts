// Issue 6, part 6: `docker events` — live container events while another client runs containers,
// their order and attributes, --since/--until replay (also after a daemon restart: the log is in
// the database), filters, image events, exec events, and the raw HTTP stream.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Ev {
  Type: string;
  Action: string;
  Actor: { ID: string; Attributes: Record<string, string> };
  scope: string;
  time: number;
  timeNano: number;
  status?: string;
  id?: string;
  from?: string;
}

/** `docker events --format '{{json .}}'` running in the background, collecting what it prints. */
class EventsWatcher {
  readonly events: Ev[] = [];
  private readonly child: ChildProcess;
  private buf = '';
  readonly exited: Promise<number | null>;

  constructor(d: TestDaemon, args: string[] = []) {
    const env: NodeJS.ProcessEnv = { ...process.env, DOCKER_HOST: d.host, DOCKER_CONFIG: join(d.dir, 'docker-config') };
    delete env.DOCKER_CONTEXT;
    this.child = spawn('docker', ['events', '--format', '{{json .}}', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (c: Buffer) => {
      this.buf += c.toString();
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl).trim();
        this.buf = this.buf.slice(nl + 1);
        if (line) this.events.push(JSON.parse(line) as Ev);
      }
    });
    this.exited = new Promise((r) => this.child.on('exit', (code) => r(code)));
  }

  async waitFor(what: string, pred: (evs: Ev[]) => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this.events)) {
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for ${what}; got:\n${this.events.map((e) => `${e.Type} ${e.Action} ${e.Actor.ID.slice(0, 12)}`).join('\n')}`,
        );
      await sleep(50);
    }
  }

  stop(): void {
    this.child.kill('SIGTERM');
  }
}

/** The docker CLI's own --since value format: unix seconds with nine fraction digits. */
const cliTime = (ms: number) => `${Math.floor(ms / 1000)}.${String((ms % 1000) * 1_000_000).padStart(9, '0')}`;

async function pastEvents(d: TestDaemon, args: string[]): Promise<Ev[]> {
  const r = await d.docker(['events', '--format', '{{json .}}', ...args], { timeoutMs: 30_000 });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Ev);
}

const actionsOf = (evs: Ev[], id: string) => evs.filter((e) => e.Type === 'container' && e.Actor.ID === id).map((e) => e.Action);

/** True when `want` appears in `got` in this order (other entries may sit in between). */
function inOrder(got: string[], want: string[]): boolean {
  let i = 0;
  for (const g of got) if (g === want[i]) i++;
  return i === want.length;
}

describe('docker events', () => {
  let d: TestDaemon;
  let t0: number;
  let runId = '';

  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
    t0 = Date.now() - 1000;
  });
  after(async () => d?.cleanup());

  test('a container run in another client shows create, start, die, destroy live, in order, with attributes', async () => {
    const w = new EventsWatcher(d);
    try {
      await sleep(500); // the CLI connects
      const run = await d.docker(['run', '--name', 'ev1', '--label', 'tier=front', 'busybox', 'sh', '-c', 'exit 3']);
      assert.equal(run.code, 3, run.stderr);
      runId = (await d.request('GET', '/containers/ev1/json')).json().Id;
      const rm = await d.docker(['rm', 'ev1']);
      assert.equal(rm.code, 0, rm.stderr);
      await w.waitFor('destroy of ev1', (evs) => actionsOf(evs, runId).includes('destroy'));
      const actions = actionsOf(w.events, runId);
      assert.ok(inOrder(actions, ['create', 'attach', 'start', 'die', 'destroy']), actions.join(','));
      const die = w.events.find((e) => e.Actor.ID === runId && e.Action === 'die')!;
      assert.equal(die.Actor.Attributes.exitCode, '3');
      assert.equal(die.Actor.Attributes.name, 'ev1');
      assert.equal(die.Actor.Attributes.image, 'busybox');
      assert.equal(die.Actor.Attributes.tier, 'front');
      assert.equal(die.scope, 'local');
      assert.equal(die.Type, 'container');
      // The fields dockerd still sends below API 1.52 (the CLI here speaks 1.50).
      assert.equal(die.status, 'die');
      assert.equal(die.id, runId);
      assert.equal(die.from, 'busybox');
      assert.equal(Math.floor(die.timeNano / 1e9), die.time);
      assert.ok(Math.abs(die.time * 1000 - Date.now()) < 60_000);
    } finally {
      w.stop();
    }
  });

  test('stop, kill, pause, unpause, restart, rename and exec publish their events and attributes', async () => {
    const w = new EventsWatcher(d);
    try {
      await sleep(500);
      const id = (await d.docker(['run', '-d', '--name', 'ev2', 'busybox', 'sleep', '100000'])).stdout.trim();
      assert.match(id, /^[0-9a-f]{64}$/);
      assert.equal((await d.docker(['pause', 'ev2'])).code, 0);
      assert.equal((await d.docker(['unpause', 'ev2'])).code, 0);
      const ex = await d.docker(['exec', 'ev2', 'sh', '-c', 'exit 4']);
      assert.equal(ex.code, 4);
      assert.equal((await d.docker(['rename', 'ev2', 'ev2b'])).code, 0);
      assert.equal((await d.docker(['restart', '-t', '0', 'ev2b'])).code, 0);
      assert.equal((await d.docker(['kill', '-s', 'SIGUSR1', 'ev2b'])).code, 0);
      assert.equal((await d.docker(['stop', '-t', '1', 'ev2b'])).code, 0);
      await w.waitFor('stop of ev2b', (evs) => evs.filter((e) => e.Actor.ID === id && e.Action === 'stop').length >= 2);
      const actions = actionsOf(w.events, id);
      assert.ok(
        inOrder(actions, [
          'create',
          'start',
          'pause',
          'unpause',
          'exec_create: sh -c exit 4',
          'exec_start: sh -c exit 4',
          'exec_die',
          'rename',
          'kill',
          'die',
          'stop',
          'start',
          'restart',
          'kill',
          'kill',
          'die',
          'stop',
        ]),
        actions.join(','),
      );
      const mine = w.events.filter((e) => e.Actor.ID === id);
      const execDie = mine.find((e) => e.Action === 'exec_die')!;
      assert.equal(execDie.Actor.Attributes.exitCode, '4');
      assert.match(execDie.Actor.Attributes.execID!, /^[0-9a-f]{64}$/);
      const rename = mine.find((e) => e.Action === 'rename')!;
      assert.equal(rename.Actor.Attributes.oldName, '/ev2');
      assert.equal(rename.Actor.Attributes.name, 'ev2b');
      const kills = mine.filter((e) => e.Action === 'kill').map((e) => e.Actor.Attributes.signal);
      assert.ok(kills.includes('10'), `SIGUSR1 is signal 10: ${kills}`);
      assert.ok(kills.includes('15'), `stop sends SIGTERM first: ${kills}`);
      // sleep as PID 1 ignores SIGTERM: the stop ends with the SIGKILL after the timeout.
      assert.deepEqual(kills.slice(-2), ['15', '9']);
      const lastDie = mine.filter((e) => e.Action === 'die').at(-1)!;
      assert.equal(lastDie.Actor.Attributes.exitCode, '137');
    } finally {
      w.stop();
    }
  });

  test('--since/--until replay stored events and end; filters apply to them', async () => {
    const now = cliTime(Date.now());
    const all = await pastEvents(d, ['--since', cliTime(t0), '--until', now]);
    assert.ok(inOrder(actionsOf(all, runId), ['create', 'start', 'die', 'destroy']));
    const dies = await pastEvents(d, ['--since', cliTime(t0), '--until', now, '--filter', 'type=container', '--filter', 'event=die']);
    assert.ok(dies.length >= 3);
    assert.ok(dies.every((e) => e.Type === 'container' && e.Action === 'die'));
    const byName = await pastEvents(d, ['--since', cliTime(t0), '--until', now, '--filter', 'container=ev2b']);
    assert.ok(byName.length > 0);
    assert.ok(byName.every((e) => e.Actor.Attributes.name === 'ev2b'));
    const byLabel = await pastEvents(d, ['--since', cliTime(t0), '--until', now, '--filter', 'label=tier=front']);
    assert.ok(byLabel.length >= 4);
    assert.ok(byLabel.every((e) => e.Actor.ID === runId));
    const byId = await pastEvents(d, ['--since', cliTime(t0), '--until', now, '--filter', `container=${runId.slice(0, 12)}`]);
    assert.deepEqual(
      byId.map((e) => e.Actor.ID),
      byId.map(() => runId),
    );
    // --until before anything happened: nothing, and the command still ends.
    assert.deepEqual(await pastEvents(d, ['--since', cliTime(t0 - 60_000), '--until', cliTime(t0 - 30_000)]), []);
    // The CLI's relative form.
    const recent = await pastEvents(d, ['--since', '10m', '--until', '0s', '--filter', 'event=destroy']);
    assert.ok(recent.some((e) => e.Actor.ID === runId));
  });

  test('an --until in the future ends the live stream at that time', async () => {
    const started = Date.now();
    const p = d.docker(['events', '--until', cliTime(Date.now() + 1500)], { timeoutMs: 20_000 });
    await sleep(400);
    await d.docker(['create', '--name', 'ev-until', 'busybox']);
    const r = await p;
    assert.equal(r.code, 0, r.stderr);
    const took = Date.now() - started;
    assert.ok(took >= 1200 && took < 10_000, `ended after ${took} ms`);
    assert.match(r.stdout, /container create [0-9a-f]{64} \(image=busybox, name=ev-until\)/);
  });

  test('image events: tag, untag and delete; commit is a container event', async () => {
    const since = cliTime(Date.now() - 10);
    assert.equal((await d.docker(['tag', 'busybox', 'evtag:1'])).code, 0);
    const c = await d.docker(['commit', 'ev-until', 'evcommit:v1']);
    assert.equal(c.code, 0, c.stderr);
    const imageId = c.stdout.trim();
    assert.equal((await d.docker(['rmi', 'evtag:1'])).code, 0);
    assert.equal((await d.docker(['rm', 'ev-until'])).code, 0);
    assert.equal((await d.docker(['rmi', 'evcommit:v1'])).code, 0);
    const evs = await pastEvents(d, ['--since', since, '--until', cliTime(Date.now())]);
    const images = evs.filter((e) => e.Type === 'image');
    const busyboxId = (await d.request('GET', '/images/busybox/json')).json().Id;
    const tag = images.find((e) => e.Action === 'tag' && e.Actor.Attributes.name === 'evtag:1');
    assert.ok(tag, JSON.stringify(images));
    assert.equal(tag.Actor.ID, busyboxId);
    assert.equal(tag.status, 'tag');
    assert.ok(images.some((e) => e.Action === 'untag' && e.Actor.ID === busyboxId));
    assert.ok(images.some((e) => e.Action === 'tag' && e.Actor.ID === imageId && e.Actor.Attributes.name === 'evcommit:v1'));
    assert.ok(
      inOrder(
        images.filter((e) => e.Actor.ID === imageId).map((e) => e.Action),
        ['tag', 'untag', 'delete'],
      ),
    );
    const commit = evs.find((e) => e.Type === 'container' && e.Action === 'commit');
    assert.ok(commit);
    assert.equal(commit.Actor.Attributes.imageID, imageId);
    assert.equal(commit.Actor.Attributes.imageRef, 'evcommit:v1');
    assert.equal(commit.Actor.Attributes.name, 'ev-until');
    const filtered = await pastEvents(d, [
      '--since',
      since,
      '--until',
      cliTime(Date.now()),
      '--filter',
      'type=image',
      '--filter',
      'image=evtag',
    ]);
    assert.ok(filtered.length >= 1);
    assert.ok(filtered.every((e) => e.Type === 'image'));
  });

  test('save, load and import publish image events; health changes publish health_status', async () => {
    const since = cliTime(Date.now() - 10);
    const tar = join(d.dir, 'bb.tar');
    assert.equal((await d.docker(['save', '-o', tar, 'busybox'])).code, 0);
    assert.equal((await d.docker(['load', '-i', tar])).code, 0);
    const imp = await d.docker(['import', tar, 'imported:1']);
    assert.equal(imp.code, 0, imp.stderr);
    const importedId = imp.stdout.trim();
    const h = await d.docker([
      'run',
      '-d',
      '--name',
      'ev-health',
      '--health-cmd',
      'true',
      '--health-interval',
      '200ms',
      'busybox',
      'sleep',
      '100000',
    ]);
    assert.equal(h.code, 0, h.stderr);
    const busyboxId = (await d.request('GET', '/images/busybox/json')).json().Id;
    let evs: Ev[] = [];
    const deadline = Date.now() + 15_000;
    while (!evs.some((e) => e.Action === 'health_status: healthy') && Date.now() < deadline) {
      await sleep(200);
      evs = await pastEvents(d, ['--since', since, '--until', cliTime(Date.now())]);
    }
    const image = evs.filter((e) => e.Type === 'image');
    assert.ok(
      image.some((e) => e.Action === 'save' && e.Actor.ID === busyboxId),
      JSON.stringify(image),
    );
    assert.ok(image.some((e) => e.Action === 'load' && e.Actor.ID === busyboxId));
    assert.ok(image.some((e) => e.Action === 'import' && e.Actor.ID === importedId));
    assert.ok(image.some((e) => e.Action === 'tag' && e.Actor.ID === importedId && e.Actor.Attributes.name === 'imported:1'));
    const healthy = evs.find((e) => e.Action === 'health_status: healthy');
    assert.ok(healthy, evs.map((e) => e.Action).join(','));
    assert.equal(healthy.Actor.Attributes.name, 'ev-health');
    // `event=health_status` matches the suffixed action, as in dockerd.
    const f = await pastEvents(d, ['--since', since, '--until', cliTime(Date.now()), '--filter', 'event=health_status']);
    assert.ok(f.length >= 1 && f.every((e) => e.Action.startsWith('health_status: ')));
    assert.equal((await d.docker(['rm', '-f', 'ev-health'])).code, 0);
    assert.equal((await d.docker(['rmi', 'imported:1'])).code, 0);
  });

  test('raw HTTP: since/until query, JSON lines with exact timeNano, a 400 for since after until', async () => {
    const sinceS = Math.floor(t0 / 1000);
    const r = await d.request('GET', `/events?since=${sinceS}&until=${Math.floor(Date.now() / 1000) + 1}.5`, { timeoutMs: 10_000 });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    const lines = r.text().split('\n').filter(Boolean);
    assert.ok(lines.length > 10);
    for (const l of lines) assert.match(l, /"timeNano":\d{19}}$/);
    const first = JSON.parse(lines[0]!);
    assert.ok(first.time >= sinceS);
    const rfc = await d.request(
      'GET',
      `/events?since=${encodeURIComponent(new Date(t0).toISOString())}&until=${encodeURIComponent(new Date().toISOString())}`,
    );
    assert.equal(rfc.status, 200);
    assert.equal(rfc.text().split('\n').filter(Boolean).length >= lines.length - 5, true);
    const bad = await d.request('GET', '/events?since=20&until=10');
    assert.equal(bad.status, 400);
    assert.match(bad.json().message, /cannot be after `until`/);
    const garbage = await d.request('GET', '/events?since=yesterday');
    assert.equal(garbage.status, 400);
  });

  test('a live raw stream gets each event as it happens, filtered', async () => {
    const got: string[] = [];
    let res!: import('node:http').IncomingMessage;
    const filters = encodeURIComponent(JSON.stringify({ type: ['container'], event: ['create'] }));
    const req = httpRequest(
      { socketPath: d.socket, path: `/v1.44/events?filters=${filters}`, headers: { Accept: 'application/x-ndjson' } },
      (r) => {
        res = r;
        r.on('data', (c: Buffer) => got.push(...c.toString().split('\n').filter(Boolean)));
      },
    );
    req.end();
    await sleep(300);
    assert.equal(res.headers['content-type'], 'application/x-ndjson');
    await d.docker(['create', '--name', 'ev-live', 'busybox']);
    await d.docker(['rm', 'ev-live']);
    const deadline = Date.now() + 5000;
    while (got.length < 1 && Date.now() < deadline) await sleep(20);
    await sleep(300);
    req.destroy();
    assert.equal(got.length, 1, got.join('\n'));
    const e = JSON.parse(got[0]!);
    assert.equal(e.Action, 'create');
    assert.equal(e.Actor.Attributes.name, 'ev-live');
  });

  test('--since after a daemon restart still shows the events from before it', async () => {
    const before = cliTime(Date.now() - 10);
    const id = (await d.docker(['create', '--name', 'ev-restart', '--label', 'persist=yes', 'busybox'])).stdout.trim();
    assert.match(id, /^[0-9a-f]{64}$/);
    // A container running at shutdown: a live watcher sees its kill and die, then its stream ends.
    const runningId = (
      await d.docker(['run', '-d', '--name', 'ev-shutdown', '--stop-timeout', '1', 'busybox', 'sleep', '100000'])
    ).stdout.trim();
    const live = new EventsWatcher(d, ['--filter', 'container=ev-shutdown']);
    await sleep(500);
    const stopStarted = Date.now();
    assert.equal(await d.stop(), 0);
    // 1 s stop timeout; an events stream held open would add the 5 s request drain on top.
    assert.ok(Date.now() - stopStarted < 4500, `an open events stream must not hold the shutdown up (${Date.now() - stopStarted} ms)`);
    await live.exited;
    assert.ok(inOrder(actionsOf(live.events, runningId), ['kill', 'die']), actionsOf(live.events, runningId).join(','));
    await d.restart();
    const evs = await pastEvents(d, ['--since', before, '--until', cliTime(Date.now()), '--filter', 'label=persist=yes']);
    assert.deepEqual(
      evs.map((e) => `${e.Action} ${e.Actor.ID}`),
      [`create ${id}`],
    );
    // And the relative form reaches back across the restart too.
    const older = await pastEvents(d, ['--since', '10m', '--until', '0s', '--filter', `container=${runId}`]);
    assert.ok(
      inOrder(
        older.map((e) => e.Action),
        ['create', 'start', 'die', 'destroy'],
      ),
      older.map((e) => e.Action).join(','),
    );
    // Live events still flow on the restarted daemon.
    const w = new EventsWatcher(d, ['--filter', 'container=ev-restart']);
    try {
      await sleep(500);
      assert.equal((await d.docker(['rm', 'ev-restart'])).code, 0);
      await w.waitFor('destroy after restart', (xs) => xs.some((e) => e.Action === 'destroy' && e.Actor.ID === id));
    } finally {
      w.stop();
    }
  });

  test('SIGHUP publishes a daemon reload event', async () => {
    const since = cliTime(Date.now() - 10);
    process.kill(d.pid, 'SIGHUP');
    await d.waitForOutput(/Reloaded configuration/);
    const evs = await pastEvents(d, ['--since', since, '--until', cliTime(Date.now()), '--filter', 'type=daemon']);
    assert.equal(evs.length, 1);
    assert.equal(evs[0]!.Action, 'reload');
    assert.ok(evs[0]!.Actor.ID.length > 0);
    assert.ok(evs[0]!.Actor.Attributes.name);
    assert.ok('debug' in evs[0]!.Actor.Attributes);
  });
});
