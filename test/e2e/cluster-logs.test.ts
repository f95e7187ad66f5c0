// Logs of a service whose tasks run on two managers and a worker, through the docker CLI 28 and
// the API: the manager reads its own task's container and asks the other nodes' endpoints (mutual
// TLS; the worker's own small one, the other manager's manager endpoint) for theirs; tail, since,
// timestamps, details (the context the CLI turns into `name.slot.id@node`), follow (new lines from
// every node while the stream is open), a worker's task by /tasks/{id}/logs, the worker's endpoint
// refusing a caller without a manager's certificate, dockerd's "incomplete log stream" once a node
// is gone; and node and network events of scope swarm.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';
import { loopbackSlot } from '../helpers/loopback-slot.ts';

// Loopback addresses of this file: 127.0.<n>.4 (the other cluster files use .1, .2 and .3).
const base = 10 + loopbackSlot() * 4;
const ip = (i: number) => `127.0.${base + i}.4`;

interface TaskView {
  ID: string;
  NodeID?: string;
  Slot?: number;
  DesiredState: string;
  Status: { State: string; Err?: string };
}

async function ok(d: TestDaemon, args: string[]): Promise<string> {
  const r = await d.docker(args);
  assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** Splits an 8-byte-framed stream into its payloads. */
function frames(buf: Buffer): Array<{ stream: number; text: string }> {
  const out = [];
  for (let i = 0; i + 8 <= buf.length;) {
    const n = buf.readUInt32BE(i + 4);
    out.push({ stream: buf[i]!, text: buf.subarray(i + 8, i + 8 + n).toString() });
    i += 8 + n;
  }
  return out;
}

describe('service logs across nodes', { timeout: 240_000 }, () => {
  let m: TestDaemon;
  let w: TestDaemon;
  /** A second manager: its task's logs come from its manager endpoint. */
  let m2: TestDaemon;
  let managerId = '';
  let workerId = '';
  let manager2Id = '';
  let tasks: TaskView[] = [];
  let since = 0;

  before(async () => {
    [m, w, m2] = await Promise.all([startDaemon(), startDaemon(), startDaemon()]);
    await Promise.all([loadBusybox(m), loadBusybox(w), loadBusybox(m2)]);
    await ok(m, ['swarm', 'init', '--advertise-addr', ip(0), '--listen-addr', `${ip(0)}:2377`]);
    since = Math.floor(Date.now() / 1000);
    const token = (await ok(m, ['swarm', 'join-token', '-q', 'worker'])).trim();
    await ok(w, ['swarm', 'join', '--token', token, '--advertise-addr', ip(1), '--listen-addr', `${ip(1)}:2377`, `${ip(0)}:2377`]);
    const managerToken = (await ok(m, ['swarm', 'join-token', '-q', 'manager'])).trim();
    await ok(m2, ['swarm', 'join', '--token', managerToken, '--advertise-addr', ip(2), '--listen-addr', `${ip(2)}:2377`, `${ip(0)}:2377`]);
    managerId = (await m.request('GET', '/v1.51/info')).json().Swarm.NodeID;
    workerId = (await w.request('GET', '/v1.51/info')).json().Swarm.NodeID;
    manager2Id = (await m2.request('GET', '/v1.51/info')).json().Swarm.NodeID;
    // One task per node (the scheduler spreads), each printing a numbered line every 200 ms, on
    // stdout, and one line on stderr at start.
    await ok(m, [
      'service',
      'create',
      '--detach',
      '--no-resolve-image',
      '--name',
      'chatty',
      '--replicas',
      '3',
      '--stop-grace-period',
      '1s',
      'busybox:latest',
      'sh',
      '-c',
      'echo started >&2; i=0; while true; do echo "line $i"; i=$((i+1)); sleep 0.2; done',
    ]);
    tasks = await until(
      'the three tasks running',
      async () => {
        const r = await m.request('GET', `/v1.51/tasks?filters=${encodeURIComponent(JSON.stringify({ service: ['chatty'] }))}`);
        const ts = (r.json() as TaskView[]).filter((t) => t.DesiredState === 'running');
        return ts.length === 3 && ts.every((t) => t.Status.State === 'running') ? ts : undefined;
      },
      90_000,
      300,
    );
    assert.deepEqual(tasks.map((t) => t.NodeID).sort(), [managerId, workerId, manager2Id].sort());
    // Let both print a few lines.
    await new Promise((r) => setTimeout(r, 1500));
  });
  after(async () => {
    await Promise.all([m, w, m2].filter(Boolean).map((d) => d.cleanup()));
  });

  test('docker service logs shows every node’s task: tail, details, timestamps, stderr, since', async () => {
    const local = tasks.find((t) => t.NodeID === managerId)!;
    const remote = tasks.find((t) => t.NodeID === workerId)!;
    const onManager2 = tasks.find((t) => t.NodeID === manager2Id)!;
    // Without --raw the CLI asks for details and prints name.slot.id@node for each line.
    const pretty = await m.docker(['service', 'logs', '--tail', '3', 'chatty']);
    assert.equal(pretty.code, 0, pretty.stderr);
    for (const t of [local, remote, onManager2]) {
      const mine = pretty.stdout
        .split('\n')
        .filter((l) => new RegExp(`^chatty\\.${t.Slot}\\.${t.ID.slice(0, 12)}@\\S+ +\\| line \\d+$`).test(l));
      assert.ok(mine.length >= 2 && mine.length <= 3, `tail 3 of ${t.ID}:\n${pretty.stdout}\n${pretty.stderr}`);
    }
    // stderr lines arrive on the CLI's stderr.
    const all = await m.docker(['service', 'logs', '--raw', 'chatty']);
    assert.equal(all.stderr.split('\n').filter((l) => l === 'started').length, 3, all.stderr);
    assert.ok(all.stdout.split('\n').filter((l) => l === 'line 0').length === 3, all.stdout);

    // The API: details carry the node, service and task of each line; timestamps come first.
    const r = await m.request('GET', `/v1.51/services/chatty/logs?stdout=1&stderr=1&details=1&timestamps=1&tail=2`);
    assert.equal(r.status, 200);
    const fs = frames(r.body);
    const svc = (await m.request('GET', '/v1.51/services/chatty')).json().ID;
    for (const t of [local, remote, onManager2]) {
      const ctx = `com.docker.swarm.node.id=${t.NodeID},com.docker.swarm.service.id=${svc},com.docker.swarm.task.id=${t.ID}`;
      const mine = fs.filter((f) => f.text.includes(ctx));
      assert.equal(mine.length, 2, `tail=2 per task: ${JSON.stringify(fs)}`);
      for (const f of mine) assert.match(f.text, new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{9}Z ${ctx} line \\d+\\n$`));
    }

    // since: only lines after the moment asked for.
    const now = Date.now() / 1000;
    await new Promise((res) => setTimeout(res, 700));
    const since = await m.request('GET', `/v1.51/services/chatty/logs?stdout=1&timestamps=1&since=${now.toFixed(3)}`);
    const sfs = frames(since.body);
    assert.ok(sfs.length >= 2, JSON.stringify(sfs));
    for (const f of sfs) assert.ok(Date.parse(f.text.slice(0, 23) + 'Z') >= Math.floor(now * 1000) - 1, f.text);

    // A worker's task alone.
    const tl = await m.request('GET', `/v1.51/tasks/${remote.ID}/logs?stdout=1&tail=1`);
    assert.equal(tl.status, 200);
    assert.deepEqual(
      frames(tl.body).map((f) => f.stream),
      [1],
    );
    assert.match(frames(tl.body)[0]!.text, /^line \d+\n$/);
  });

  test('docker service logs -f: new lines from every node while it runs', async () => {
    const child = spawn('docker', ['service', 'logs', '-f', '--tail', '0', 'chatty'], {
      env: { ...process.env, DOCKER_HOST: m.host, DOCKER_CONFIG: join(m.dir, 'docker-config') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    try {
      await until(
        'lines of both tasks in the follow stream',
        async () => (tasks.every((t) => out.includes(`chatty.${t.Slot}.${t.ID.slice(0, 12)}@`)) ? true : undefined),
        30_000,
        200,
      );
    } finally {
      child.kill();
    }
    assert.doesNotMatch(out, /line 0$/m, 'tail 0: no old lines');
  });

  test('the worker’s endpoint serves logs to managers only', async () => {
    // No client certificate: refused before any task is looked at.
    const curl = await run('curl', ['-sk', '-X', 'POST', '-d', '{"tasks":[]}', `https://${ip(1)}:2377/logs`]);
    assert.match(curl.stdout, /a node certificate of this cluster is required/);
  });

  test('node and network events of scope swarm (docker events --filter type=node / type=network)', async () => {
    await ok(m, ['node', 'update', '--availability', 'drain', workerId]);
    await ok(m, ['network', 'create', '-d', 'overlay', 'ev-net']);
    await ok(m, ['network', 'rm', 'ev-net']);
    // A worker that leaves is down (its heartbeat key goes at once), then `node rm` removes it.
    await ok(w, ['swarm', 'leave']);
    await until(
      'the worker down',
      async () => ((await m.request('GET', `/v1.51/nodes/${workerId}`)).json().Status.State === 'down' ? true : undefined),
      30_000,
      300,
    );
    // Its tasks' history still names it: their logs cannot be read, which the CLI reports as dockerd's.
    const partial = await m.docker(['service', 'logs', '--raw', 'chatty']);
    assert.equal(partial.code, 1, partial.stderr);
    assert.match(
      partial.stderr,
      new RegExp(
        `Error grabbing logs: warning: incomplete log stream\\. some logs could not be retrieved for the following reasons: node ${workerId} is not available`,
      ),
    );
    assert.match(partial.stdout, /^line \d+$/m, 'the manager’s own task is read');
    await ok(m, ['node', 'rm', workerId]);
    const read = async (type: string) => {
      const r = await ok(m, [
        'events',
        '--since',
        String(since),
        '--until',
        String(Math.ceil(Date.now() / 1000) + 1),
        '--filter',
        `type=${type}`,
        '--format',
        '{{json .}}',
      ]);
      return r
        .trim()
        .split('\n')
        .filter(Boolean)
        .map(
          (l) =>
            JSON.parse(l) as { Type: string; Action: string; scope: string; Actor: { ID: string; Attributes: Record<string, string> } },
        );
    };
    const nodes = await until(
      'the worker’s remove event',
      async () => {
        const ev = await read('node');
        return ev.some((e) => e.Action === 'remove') ? ev : undefined;
      },
      30_000,
      300,
    );
    const mine = nodes.filter((e) => e.Actor.ID === workerId);
    assert.ok(nodes.every((e) => e.Type === 'node' && e.scope === 'swarm'));
    assert.equal(mine[0]!.Action, 'create', JSON.stringify(nodes));
    assert.ok(mine[0]!.Actor.Attributes.name, 'named by its hostname');
    assert.ok(
      mine.some(
        (e) => e.Action === 'update' && e.Actor.Attributes['state.old'] === 'unknown' && e.Actor.Attributes['state.new'] === 'ready',
      ),
      JSON.stringify(mine),
    );
    assert.ok(
      mine.some(
        (e) =>
          e.Action === 'update' &&
          e.Actor.Attributes['availability.old'] === 'active' &&
          e.Actor.Attributes['availability.new'] === 'drain',
      ),
      JSON.stringify(mine),
    );
    assert.ok(
      mine.some((e) => e.Action === 'update' && e.Actor.Attributes['state.old'] === 'ready' && e.Actor.Attributes['state.new'] === 'down'),
      JSON.stringify(mine),
    );
    assert.equal(mine.at(-1)!.Action, 'remove');

    const nets = (await read('network')).filter((e) => e.Actor.Attributes.name === 'ev-net');
    assert.deepEqual(
      nets.map((e) => [e.Action, e.scope]),
      [
        ['create', 'swarm'],
        ['remove', 'swarm'],
      ],
    );
  });
});
