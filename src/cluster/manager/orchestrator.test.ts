// The orchestrator and scheduler without a cluster: a fake store (an in-memory world the plan is
// applied to) and fake agents (a task assigned to an up node runs, or fails for the image "bad";
// a task told to stop stops), driven round by round with a fake clock.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plan, type World } from './orchestrator.ts';
import { parseConstraints, pickNode, type SchedNode } from './scheduler.ts';
import type { ServiceRecord } from './service-spec.ts';
import { isTerminal, type TaskRecord } from './tasks.ts';

const node = (id: string, extra: Partial<SchedNode> = {}): SchedNode => ({
  id,
  hostname: `host-${id}`,
  role: 'worker',
  availability: 'active',
  up: true,
  labels: {},
  engineLabels: {},
  os: 'linux',
  arch: 'x86_64',
  ...extra,
});

const service = (spec: Record<string, unknown> = {}, image = 'busybox'): ServiceRecord => ({
  ID: 'svc1',
  CreatedAt: new Date(0).toISOString(),
  UpdatedAt: new Date(0).toISOString(),
  Spec: { Name: 'web', Mode: { Replicated: { Replicas: 3 } }, TaskTemplate: { ContainerSpec: { Image: image } }, ...spec },
  SpecVersion: 1,
});

class Sim {
  tasks = new Map<string, TaskRecord>();
  now = 1_000_000;
  private n = 0;
  constructor(
    public services: ServiceRecord[],
    public nodes: SchedNode[],
    public historyLimit = 5,
  ) {}

  world(): World {
    return {
      services: this.services,
      tasks: [...this.tasks.values()],
      nodes: this.nodes,
      historyLimit: this.historyLimit,
      now: this.now,
      newId: () => `t${String(++this.n).padStart(3, '0')}`,
    };
  }

  /** One orchestrator round, then one round of every agent, then time passes. */
  round(ms = 1000): void {
    for (const a of plan(this.world())) {
      if (a.op === 'create') this.tasks.set(a.task.ID, structuredClone(a.task));
      else if (a.op === 'delete') this.tasks.delete(a.id);
      else if (a.op === 'desire') this.tasks.get(a.id)!.DesiredState = a.state;
      else if (a.op === 'assign') {
        const t = this.tasks.get(a.id)!;
        t.Status = a.status;
        if (a.node) t.NodeID = a.node;
        if (a.named) t.AssignedGenericResources = a.named;
      } else {
        const s = this.services.find((x) => x.ID === a.service)!;
        s.UpdateStatus = a.status;
        if (a.op === 'rollback') [s.Spec, s.PreviousSpec, s.SpecVersion] = [s.PreviousSpec!, s.Spec, s.SpecVersion + 1];
      }
    }
    const ts = new Date(this.now).toISOString();
    for (const t of this.tasks.values()) {
      const n = this.nodes.find((x) => x.id === t.NodeID);
      if (!n?.up || isTerminal(t.Status.State) || t.Status.State === 'pending') continue;
      if (t.DesiredState !== 'running') t.Status = { Timestamp: ts, State: 'shutdown', Message: 'shutdown' };
      else if ((t.Spec.ContainerSpec as { Image: string }).Image === 'bad')
        t.Status = { Timestamp: ts, State: 'failed', Message: 'x', Err: 'task: non-zero exit (1)' };
      else if ((t.Spec.ContainerSpec as { Image: string }).Image === 'done' && t.Status.State === 'running')
        t.Status = { Timestamp: ts, State: 'complete', Message: 'finished' };
      else if (t.Status.State !== 'running') t.Status = { Timestamp: ts, State: 'running', Message: 'started' };
    }
    this.now += ms;
  }

  running(): TaskRecord[] {
    return [...this.tasks.values()].filter((t) => t.DesiredState === 'running' && t.Status.State === 'running');
  }

  perNode(): Record<string, number> {
    const r: Record<string, number> = {};
    for (const t of this.running()) r[t.NodeID!] = (r[t.NodeID!] ?? 0) + 1;
    return r;
  }

  update(s: ServiceRecord, image: string, cfg: Record<string, unknown>): void {
    s.PreviousSpec = s.Spec;
    s.Spec = { ...s.Spec, TaskTemplate: { ContainerSpec: { Image: image } }, UpdateConfig: cfg };
    s.SpecVersion++;
    s.UpdateStatus = { State: 'updating', StartedAt: new Date(this.now).toISOString(), Message: 'update in progress' };
  }
}

test('replicated: one task per slot, spread by task count, scale up and down', () => {
  const sim = new Sim([service()], [node('a'), node('b')]);
  sim.round();
  assert.equal(sim.running().length, 3);
  assert.deepEqual(
    sim
      .running()
      .map((t) => t.Slot)
      .sort(),
    [1, 2, 3],
  );
  assert.deepEqual(Object.values(sim.perNode()).sort(), [1, 2]);
  sim.round();
  assert.equal(sim.tasks.size, 3, 'a settled service plans nothing');
  sim.services[0]!.Spec.Mode = { Replicated: { Replicas: 1 } };
  sim.round();
  assert.deepEqual(
    sim.running().map((t) => t.Slot),
    [1],
  );
  assert.equal([...sim.tasks.values()].filter((t) => t.Status.State === 'shutdown').length, 2);
});

test('a node that goes down or is drained loses its tasks to the others', () => {
  const sim = new Sim([service({ Mode: { Replicated: { Replicas: 4 } } })], [node('a'), node('b')]);
  sim.round();
  assert.deepEqual(sim.perNode(), { a: 2, b: 2 });
  sim.nodes[1]!.up = false;
  sim.round();
  sim.round();
  assert.deepEqual(sim.perNode(), { a: 4 });
  sim.nodes[1]!.up = true;
  sim.nodes[0]!.availability = 'drain';
  sim.round();
  sim.round();
  assert.deepEqual(sim.perNode(), { b: 4 });
});

test('restart policy: on-failure with a delay and max attempts', () => {
  const s = service(
    {
      Mode: { Replicated: { Replicas: 1 } },
      TaskTemplate: { ContainerSpec: { Image: 'bad' }, RestartPolicy: { Condition: 'on-failure', Delay: 3e9, MaxAttempts: 2 } },
    },
    'bad',
  );
  const sim = new Sim([s], [node('a')]);
  sim.round(); // created and failed
  assert.equal(sim.tasks.size, 1);
  sim.round(); // within the delay: no restart yet
  assert.equal(sim.tasks.size, 1);
  for (let i = 0; i < 12; i++) sim.round();
  const all = [...sim.tasks.values()];
  assert.equal(all.length, 3, 'the first run and two restarts');
  assert.deepEqual(all.map((t) => t.Restarts).sort(), [0, 1, 2]);
  assert.ok(all.every((t) => t.Status.State === 'failed'));
  const none = new Sim(
    [service({ TaskTemplate: { ContainerSpec: { Image: 'bad' }, RestartPolicy: { Condition: 'none' } } }, 'bad')],
    [node('a')],
  );
  for (let i = 0; i < 5; i++) none.round();
  assert.equal(none.tasks.size, 3, 'condition none: no restart');
});

test('rolling update, stop-first, parallelism 1: never more than one slot down', () => {
  const s = service();
  const sim = new Sim([s], [node('a'), node('b')]);
  sim.round();
  sim.update(s, 'busybox:v2', { Parallelism: 1, Delay: 0 });
  let rounds = 0;
  while (s.UpdateStatus?.State !== 'completed' && rounds++ < 30) {
    sim.round();
    assert.ok(sim.running().length >= 2, `at least 2 running in round ${rounds}`);
  }
  assert.equal(s.UpdateStatus?.State, 'completed');
  assert.ok(sim.running().every((t) => t.SpecVersion === 2));
  assert.equal(sim.running().length, 3);
});

test('rolling update, start-first: never fewer than the replicas', () => {
  const s = service();
  const sim = new Sim([s], [node('a')]);
  sim.round();
  sim.update(s, 'busybox:v2', { Parallelism: 2, Order: 'start-first' });
  for (let i = 0; i < 10 && s.UpdateStatus?.State !== 'completed'; i++) {
    sim.round();
    assert.ok(sim.running().length >= 3);
  }
  assert.equal(s.UpdateStatus?.State, 'completed');
  assert.equal(sim.running().length, 3);
});

test('a failing update pauses, or rolls back with FailureAction rollback', () => {
  const s = service();
  const sim = new Sim([s], [node('a')]);
  sim.round();
  sim.update(s, 'bad', { Parallelism: 1 });
  for (let i = 0; i < 5; i++) sim.round();
  assert.equal(s.UpdateStatus?.State, 'paused');
  assert.match(s.UpdateStatus!.Message, /update paused due to failure or early termination of task/);
  assert.equal(sim.running().length, 2, 'the other tasks keep the old spec');

  const r = service();
  const sim2 = new Sim([r], [node('a')]);
  sim2.round();
  sim2.update(r, 'bad', { Parallelism: 1, FailureAction: 'rollback' });
  for (let i = 0; i < 20 && r.UpdateStatus?.State !== 'rollback_completed'; i++) sim2.round();
  assert.equal(r.UpdateStatus?.State, 'rollback_completed');
  assert.equal((r.Spec.TaskTemplate as { ContainerSpec: { Image: string } }).ContainerSpec.Image, 'busybox');
  assert.equal(sim2.running().length, 3);
});

test('global mode: a task per eligible node; history limit per slot', () => {
  const g = service({
    Mode: { Global: {} },
    TaskTemplate: { ContainerSpec: { Image: 'busybox' }, Placement: { Constraints: ['node.labels.zone==a'] } },
  });
  const sim = new Sim([g], [node('a', { labels: { zone: 'a' } }), node('b', { labels: { zone: 'a' } }), node('c')]);
  sim.round();
  assert.deepEqual(sim.perNode(), { a: 1, b: 1 });
  assert.ok(sim.running().every((t) => t.Slot === undefined));
  sim.nodes[1]!.labels = {};
  sim.round();
  assert.deepEqual(sim.perNode(), { a: 1 });

  const h = new Sim(
    [
      service(
        { Mode: { Replicated: { Replicas: 1 } }, TaskTemplate: { ContainerSpec: { Image: 'bad' }, RestartPolicy: { Delay: 0 } } },
        'bad',
      ),
    ],
    [node('a')],
    3,
  );
  for (let i = 0; i < 10; i++) h.round();
  assert.ok(h.tasks.size <= 3, `history kept to 3, found ${h.tasks.size}`);
});

test('a node removed from the cluster: its tasks are replaced, then go', () => {
  const sim = new Sim([service({ Mode: { Replicated: { Replicas: 2 } } })], [node('a'), node('b')]);
  sim.round();
  assert.deepEqual(sim.perNode(), { a: 1, b: 1 });
  sim.nodes = [sim.nodes[0]!];
  sim.round();
  sim.round();
  assert.deepEqual(sim.perNode(), { a: 2 });
  assert.ok([...sim.tasks.values()].every((t) => t.NodeID === 'a'));
});

test('removed service: its tasks go', () => {
  const sim = new Sim([service()], [node('a')]);
  sim.round();
  sim.services = [];
  sim.round();
  assert.equal(sim.tasks.size, 0);
});

test('scheduler: constraints, no suitable node, max replicas per node', () => {
  assert.throws(() => parseConstraints(['node.colour==red']), /unknown key/);
  assert.throws(() => parseConstraints(['node.role=manager']), /invalid constraint/);
  const nodes = [node('a', { role: 'manager' }), node('b'), node('c', { up: false })];
  const load = { service: new Map<string, number>(), total: new Map<string, number>() };
  assert.deepEqual(pickNode(nodes, { Placement: { Constraints: ['node.role==manager'] } }, load), { node: 'a', named: [] });
  assert.deepEqual(pickNode(nodes, { Placement: { Constraints: ['node.hostname!=host-a'] } }, load), { node: 'b', named: [] });
  const none = pickNode(nodes, { Placement: { Constraints: ['node.labels.gpu==yes'] } }, load);
  // swarmkit's pipeline: each node counted at the filter it failed first, most failures first.
  assert.deepEqual(none, {
    message: 'no suitable node (scheduling constraints not satisfied on 2 nodes; 1 node not available for new tasks)',
  });
  const capped = {
    service: new Map([
      ['a', 1],
      ['b', 1],
    ]),
    total: new Map<string, number>(),
  };
  assert.match((pickNode(nodes, { Placement: { MaxReplicas: 1 } }, capped) as { message: string }).message, /max replicas/);
});

test('replicated job: TotalCompletions tasks, at most MaxConcurrent at a time, then settled', () => {
  const j = service({ Mode: { ReplicatedJob: { TotalCompletions: 3, MaxConcurrent: 2 } } }, 'done');
  j.JobIteration = 0;
  const sim = new Sim([j], [node('a'), node('b')]);
  let most = 0;
  for (let i = 0; i < 10; i++) {
    sim.round();
    most = Math.max(most, sim.running().length);
  }
  assert.equal(most, 2);
  const all = [...sim.tasks.values()];
  assert.equal(all.length, 3);
  assert.ok(all.every((t) => t.Status.State === 'complete' && t.DesiredState === 'complete'));
});

test('restart policy Window: only restarts within the window count against MaxAttempts', () => {
  const s = service(
    {
      Mode: { Replicated: { Replicas: 1 } },
      TaskTemplate: { ContainerSpec: { Image: 'bad' }, RestartPolicy: { Condition: 'any', Delay: 0, MaxAttempts: 2, Window: 10e9 } },
    },
    'bad',
  );
  // Failing every second: two restarts within 10 s, then it stays down.
  const fast = new Sim([s], [node('a')]);
  for (let i = 0; i < 8; i++) fast.round(1000);
  assert.equal(fast.tasks.size, 3, 'the first run and two restarts within the window');
  // Failing every 20 s (the window passes between failures): it is restarted every time.
  const slow = new Sim([structuredClone(s)], [node('a')]);
  for (let i = 0; i < 8; i++) slow.round(20_000);
  assert.ok(slow.tasks.size >= 5, `restarted past MaxAttempts when the failures are spread out (${slow.tasks.size} tasks)`);
  assert.ok([...slow.tasks.values()].every((t) => (t.RestartTimes ?? []).length <= 1));
});

test('update MaxFailureRatio: failures up to the ratio of the slots let the update go on', () => {
  const run = (ratio: number) => {
    const s = service({ Mode: { Replicated: { Replicas: 4 } } });
    const sim = new Sim([s], [node('a'), node('b')]);
    sim.round();
    s.PreviousSpec = s.Spec;
    // Slot 1 gets an image that fails, the others one that runs (a per-task failure, as a bad node would).
    s.Spec = {
      ...s.Spec,
      TaskTemplate: { ContainerSpec: { Image: 'v2' } },
      UpdateConfig: { Parallelism: 1, MaxFailureRatio: ratio, Monitor: 5e9 },
    };
    s.SpecVersion++;
    s.UpdateStatus = { State: 'updating', StartedAt: new Date(sim.now).toISOString(), Message: 'update in progress' };
    let failedOnce = false;
    for (let i = 0; i < 30 && s.UpdateStatus?.State === 'updating'; i++) {
      sim.round();
      for (const t of sim.tasks.values())
        if (!failedOnce && t.SpecVersion === 2 && t.Slot === 1 && t.Status.State === 'running') {
          t.Status = { Timestamp: new Date(sim.now).toISOString(), State: 'failed', Message: 'x', Err: 'task: non-zero exit (1)' };
          failedOnce = true;
        }
    }
    return s.UpdateStatus?.State;
  };
  assert.equal(run(0), 'paused', 'ratio 0: one failure pauses');
  assert.equal(run(0.25), 'completed', '1 failure of 4 slots is within 0.25');
  // Every new task failing: with 0.5 of 2 slots, the second slot is still tried, then the update pauses.
  const s2 = service({ Mode: { Replicated: { Replicas: 2 } } });
  const sim = new Sim([s2], [node('a')]);
  sim.round();
  sim.update(s2, 'bad', { Parallelism: 1, MaxFailureRatio: 0.5 });
  for (let i = 0; i < 10 && s2.UpdateStatus?.State === 'updating'; i++) sim.round();
  assert.equal(s2.UpdateStatus?.State, 'paused');
  assert.deepEqual([...new Set([...sim.tasks.values()].filter((t) => t.SpecVersion === 2).map((t) => t.Slot))].sort(), [1, 2]);
});

test("reservations: a task that fits nowhere stays pending with swarmkit's reason, then runs when room frees", () => {
  const res = (cpus: number) => ({ nanoCPUs: cpus * 1e9, memoryBytes: 1 << 30, discrete: {}, named: {} });
  const big = service({
    Mode: { Replicated: { Replicas: 3 } },
    TaskTemplate: { ContainerSpec: { Image: 'busybox' }, Resources: { Reservations: { NanoCPUs: 2e9 } } },
  });
  const sim = new Sim([big], [node('a', { resources: res(2) }), node('b', { resources: res(3) })]);
  sim.round();
  sim.round();
  assert.equal(sim.running().length, 2, 'one task per node: each has room for one');
  const pending = [...sim.tasks.values()].filter((t) => t.Status.State === 'pending');
  assert.equal(pending.length, 1);
  assert.equal(pending[0]!.Status.Err, 'no suitable node (insufficient resources on 2 nodes)');
  // A third node with room: the pending task goes there.
  sim.nodes.push(node('c', { resources: res(4) }));
  sim.round();
  sim.round();
  assert.equal(sim.running().length, 3);
  assert.deepEqual(sim.perNode(), { a: 1, b: 1, c: 1 });
  // Global: a node without room keeps its task pending (not run there).
  const g = service({
    ID: 'svc2',
    Mode: { Global: {} },
    TaskTemplate: { ContainerSpec: { Image: 'busybox' }, Resources: { Reservations: { MemoryBytes: 2 ** 31 } } },
  });
  g.ID = 'svc2';
  const gs = new Sim([g], [node('a', { resources: res(1) }), node('b', { resources: { ...res(1), memoryBytes: 2 ** 32 } })]);
  gs.round();
  gs.round();
  assert.deepEqual(gs.perNode(), { b: 1 });
  const waiting = [...gs.tasks.values()].find((t) => t.NodeID === 'a')!;
  assert.equal(waiting.Status.State, 'pending');
  assert.equal(waiting.Status.Err, 'no suitable node (insufficient resources on 1 node)');
});

test('tasks of a service with the deprecated Spec.Networks join them; the template’s own networks win', () => {
  const old = service({ Networks: [{ Target: 'n1', Aliases: ['web'] }] });
  const sim = new Sim([old], [node('a')]);
  sim.round();
  const nets = [...sim.tasks.values()].map((t) => (t.Spec as { Networks?: unknown }).Networks);
  assert.equal(nets.length, 3);
  for (const n of nets) assert.deepEqual(n, [{ Target: 'n1', Aliases: ['web'] }]);
  assert.equal((old.Spec.TaskTemplate as { Networks?: unknown }).Networks, undefined, 'the spec stays as sent');
  const own = service({
    Networks: [{ Target: 'n1' }],
    TaskTemplate: { ContainerSpec: { Image: 'busybox' }, Networks: [{ Target: 'n2' }] },
  });
  const sim2 = new Sim([own], [node('a')]);
  sim2.round();
  for (const t of sim2.tasks.values()) assert.deepEqual((t.Spec as { Networks?: unknown }).Networks, [{ Target: 'n2' }]);
});
