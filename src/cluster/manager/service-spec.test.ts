// Service and task objects without a cluster: spec checks with swarmkit's messages, defaults,
// views, filters and lookups, and the container a task becomes (name, labels, options).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { containerBody, stopTimeout, taskNetworks } from '../agent/container-body.ts';
import {
  checkServiceSpec,
  effectiveNetworks,
  taskTemplateOf,
  filterServices,
  findService,
  serviceView,
  tasksChanged,
  withServiceDefaults,
  type ServiceRecord,
} from './service-spec.ts';
import { containerName, filterTasks, findTask, taskView, type TaskRecord } from './tasks.ts';

const spec = (extra: Record<string, unknown> = {}) => ({ Name: 'web', TaskTemplate: { ContainerSpec: { Image: 'busybox' } }, ...extra });
const rec = (ID: string, s: Record<string, unknown>): ServiceRecord => ({ ID, CreatedAt: 'c', UpdatedAt: 'u', Spec: s, SpecVersion: 1 });

test('spec checks: image, name, networks, ingress ports, modes', () => {
  assert.deepEqual(checkServiceSpec(spec()).Mode, { Replicated: { Replicas: 1 } });
  assert.throws(() => checkServiceSpec({ Name: 'x', TaskTemplate: { ContainerSpec: {} } }), /image reference must be provided/);
  assert.throws(() => checkServiceSpec(spec({ Name: 'bad name' })), /valid as a DNS name component/);
  // The deprecated Spec.Networks stay where the client put them (dockerd reads them back there);
  // a task joins them when its template has none.
  const kept = checkServiceSpec(spec({ Networks: [{ Target: 'ov', Aliases: ['www'] }] }));
  assert.deepEqual(kept.Networks, [{ Target: 'ov', Aliases: ['www'] }]);
  assert.equal((kept.TaskTemplate as { Networks?: unknown }).Networks, undefined);
  assert.deepEqual(effectiveNetworks(kept), [{ Target: 'ov', Aliases: ['www'] }]);
  assert.deepEqual((taskTemplateOf(kept) as { Networks: unknown }).Networks, [{ Target: 'ov', Aliases: ['www'] }]);
  const both = spec({ Networks: [{ Target: 'a' }], TaskTemplate: { ContainerSpec: { Image: 'busybox' }, Networks: [{ Target: 'b' }] } });
  assert.deepEqual(effectiveNetworks(checkServiceSpec(both)), [{ Target: 'b' }], 'the template’s own networks win');
  assert.throws(() => checkServiceSpec(spec({ Networks: [{ Target: 'ov' }, { Target: 'ov' }] })), /duplicate network attachments/);
  assert.throws(() => checkServiceSpec(spec({ Networks: [{ Aliases: ['x'] }] })), /network target must be set/);
  assert.throws(() => checkServiceSpec(spec({ EndpointSpec: { Mode: 'dnsrr' } })), /dnsrr needs the service on a network/);
  assert.doesNotThrow(() => checkServiceSpec(spec({ Networks: [{ Target: 'ov' }], EndpointSpec: { Mode: 'dnsrr' } })));
  assert.doesNotThrow(() => checkServiceSpec(spec({ EndpointSpec: { Ports: [{ TargetPort: 80, PublishedPort: 8080 }] } })));
  // No PublishedPort: the manager picks one (published-ports.ts); sctp goes through the mesh too.
  assert.doesNotThrow(() => checkServiceSpec(spec({ EndpointSpec: { Ports: [{ TargetPort: 80 }, { TargetPort: 9, Protocol: 'sctp' }] } })));
  assert.throws(() => checkServiceSpec(spec({ EndpointSpec: { Ports: [{ TargetPort: 80, Protocol: 'icmp' }] } })), /invalid protocol/);
  assert.throws(() => checkServiceSpec(spec({ EndpointSpec: { Ports: [{ PublishedPort: 80 }] } })), /invalid target port/);
  assert.doesNotThrow(() =>
    checkServiceSpec(spec({ EndpointSpec: { Ports: [{ TargetPort: 80, PublishedPort: 8080, PublishMode: 'host' }] } })),
  );
  // As swarmkit's enums read back: an unset mode is vip, a port's protocol tcp and publish mode ingress.
  assert.deepEqual(
    checkServiceSpec(
      spec({
        EndpointSpec: {
          Ports: [{ TargetPort: 80 }, { Name: 'dns', TargetPort: 53, Protocol: 'udp', PublishedPort: 53, PublishMode: 'host' }],
        },
      }),
    ).EndpointSpec,
    {
      Mode: 'vip',
      Ports: [
        { Protocol: 'tcp', TargetPort: 80, PublishMode: 'ingress' },
        { Name: 'dns', Protocol: 'udp', TargetPort: 53, PublishedPort: 53, PublishMode: 'host' },
      ],
    },
  );
  assert.deepEqual(checkServiceSpec(spec({ EndpointSpec: { Mode: '', Ports: [] } })).EndpointSpec, { Mode: 'vip' });
  assert.equal(checkServiceSpec(spec()).EndpointSpec, undefined);
  // What Go always writes back: Labels {}, Isolation default, ForceUpdate 0, Runtime container (Go's key order).
  const minimal = checkServiceSpec({ TaskTemplate: { ContainerSpec: { Image: 'busybox' } }, Name: 'm' });
  assert.deepEqual(Object.keys(minimal), ['Name', 'Labels', 'TaskTemplate', 'Mode']);
  assert.deepEqual(minimal.TaskTemplate, {
    ContainerSpec: { Image: 'busybox', Isolation: 'default' },
    ForceUpdate: 0,
    Runtime: 'container',
  });
  assert.deepEqual(minimal.Labels, {});
  assert.throws(() => checkServiceSpec(spec({ EndpointSpec: { Mode: 'round-robin' } })), {
    message: 'invalid resolution mode: "round-robin"',
  });
  assert.throws(() => checkServiceSpec(spec({ Mode: { Replicated: { Replicas: 1 }, Global: {} } })), /only one service mode/);
  assert.throws(() => checkServiceSpec(spec({ UpdateConfig: { Order: 'sideways' } })), /Order/);
});

test('defaults, view with ServiceStatus, filters and lookup', () => {
  const d = withServiceDefaults(checkServiceSpec(spec()));
  assert.deepEqual((d.TaskTemplate as { RestartPolicy: unknown }).RestartPolicy, {
    Condition: 'any',
    Delay: 5e9,
    MaxAttempts: 0,
    Window: 0,
  });
  assert.equal((d.UpdateConfig as { Order: string }).Order, 'stop-first');
  const v = serviceView(rec('abc', spec()), 7, { counts: { running: 1, desired: 2, completed: 0 } });
  assert.deepEqual(v.Version, { Index: 7 });
  assert.deepEqual(v.ServiceStatus, { RunningTasks: 1, DesiredTasks: 2, CompletedTasks: 0 });
  // Endpoint.Spec: the spec's EndpointSpec (mode vip when unset), none without one, as dockerd's.
  assert.deepEqual(v.Endpoint, { Spec: {} });
  const withPorts = checkServiceSpec(spec({ EndpointSpec: { Ports: [{ TargetPort: 80 }] } }));
  assert.deepEqual((serviceView(rec('abe', withPorts), 1, {}).Endpoint as { Spec: unknown }).Spec, {
    Mode: 'vip',
    Ports: [{ Protocol: 'tcp', TargetPort: 80, PublishMode: 'ingress' }],
  });
  const all = [rec('abc1', spec({ Labels: { a: '1' } })), rec('abd2', { ...spec({ Name: 'db', Mode: { Global: {} } }) })];
  assert.deepEqual(
    filterServices(all, new Map([['mode', ['global']]])).map((s) => s.ID),
    ['abd2'],
  );
  assert.deepEqual(
    filterServices(all, new Map([['label', ['a=1']]])).map((s) => s.ID),
    ['abc1'],
  );
  assert.throws(() => filterServices(all, new Map([['colour', ['x']]])));
  assert.equal(findService(all, 'db').ID, 'abd2');
  assert.equal(findService(all, 'abc').ID, 'abc1');
  assert.throws(() => findService(all, 'ab'), /ambiguous/);
  assert.throws(() => findService(all, 'zz'), /not found/);
});

test('tasks: names, view, filters; the container a task becomes', () => {
  const t: TaskRecord = {
    ID: 'task1',
    CreatedAt: 'c',
    UpdatedAt: 'u',
    Labels: {},
    Spec: {
      ContainerSpec: {
        Image: 'busybox',
        Args: ['sleep', '1'],
        Env: ['A=1'],
        Hosts: ['10.0.0.1 db db.local'],
        StopGracePeriod: 2e9,
        Init: true,
        Labels: { mine: 'yes' },
      },
      Resources: { Limits: { MemoryBytes: 1 << 26 } },
    },
    ServiceID: 'svc',
    ServiceName: 'web',
    SpecVersion: 1,
    Slot: 2,
    NodeID: 'node1',
    Status: { Timestamp: 't', State: 'running', Message: 'started' },
    DesiredState: 'running',
    Restarts: 0,
    Ports: [{ TargetPort: 80, PublishedPort: 8080, PublishMode: 'host' }],
  };
  assert.equal(containerName(t), 'web.2.task1');
  assert.equal(containerName({ ...t, Slot: undefined }), 'web.node1.task1');
  assert.equal(taskView(t, 3).Slot, 2);
  const ctx = { serviceIds: (r: string) => (r === 'web' ? ['svc'] : []), nodeIds: (r: string) => [r], upToDate: () => true };
  assert.equal(filterTasks([t], new Map([['service', ['web']]]), ctx).length, 1);
  assert.equal(filterTasks([t], new Map([['service', ['db']]]), ctx).length, 0);
  assert.equal(filterTasks([t], new Map([['desired-state', ['shutdown']]]), ctx).length, 0);
  assert.equal(filterTasks([t], new Map([['name', ['web.2']]]), ctx).length, 1);
  assert.throws(() => filterTasks([t], new Map([['desired-state', ['sleeping']]]), ctx), /Invalid desired-state/);
  assert.equal(findTask([t], 'task').ID, 'task1');
  const body = containerBody(t) as Record<string, any>;
  assert.deepEqual(body.Cmd, ['sleep', '1']);
  assert.equal(body.Labels['com.docker.swarm.task.name'], 'web.2.task1');
  assert.equal(body.Labels['com.docker.swarm.service.id'], 'svc');
  assert.equal(body.Labels.mine, 'yes');
  assert.deepEqual(body.HostConfig.ExtraHosts, ['db:10.0.0.1', 'db.local:10.0.0.1']);
  assert.equal(body.HostConfig.Memory, 1 << 26);
  assert.equal(body.HostConfig.Init, true);
  assert.deepEqual(body.HostConfig.PortBindings, { '80/tcp': [{ HostIp: '', HostPort: '8080' }] });
  assert.equal(stopTimeout(t), 2);
  assert.equal(body.NetworkingConfig, undefined);
  // On overlay networks: the first is the network mode; names beyond the container's for the DNS.
  const onNets: TaskRecord = { ...t, Spec: { ...t.Spec, Networks: [{ Target: 'n1', Aliases: ['www'] }, { Target: 'n2' }] } };
  const nb = containerBody(onNets) as Record<string, any>;
  assert.equal(nb.HostConfig.NetworkMode, 'n1');
  assert.deepEqual(nb.NetworkingConfig.EndpointsConfig, {
    n1: { Aliases: ['www', 'web.2', 'tasks.web'] },
    n2: { Aliases: ['web.2', 'tasks.web'] },
  });
  // dnsrr: `<service>` names the tasks themselves.
  assert.deepEqual(taskNetworks({ ...onNets, EndpointMode: 'dnsrr' })[1], { target: 'n2', aliases: ['web.2', 'tasks.web', 'web'] });
});

test('tasksChanged: the spec read back with its defaults is no change; a real change, ForceUpdate or another key order of a change is', () => {
  const cur = checkServiceSpec({
    Name: 'w',
    TaskTemplate: { ContainerSpec: { Image: 'busybox', Args: ['sleep', '9'] } },
    Mode: { Replicated: { Replicas: 2 } },
  });
  // docker-py's scale: the spec from inspect with insertDefaults, only the replicas changed.
  const scaled = withServiceDefaults(cur);
  (scaled.Mode as { Replicated: { Replicas: number } }).Replicated.Replicas = 3;
  assert.equal(tasksChanged(scaled, cur), false);
  const reordered = { ...cur, TaskTemplate: { ContainerSpec: { Args: ['sleep', '9'], Image: 'busybox' } } };
  assert.equal(tasksChanged(reordered, cur), false);
  assert.equal(tasksChanged({ ...cur, TaskTemplate: { ContainerSpec: { Image: 'busybox:v2', Args: ['sleep', '9'] } } }, cur), true);
  assert.equal(tasksChanged({ ...scaled, TaskTemplate: { ...(scaled.TaskTemplate as object), ForceUpdate: 1 } }, cur), true);
  assert.equal(tasksChanged({ ...cur, EndpointSpec: { Mode: 'dnsrr' } }, cur), true);
});
