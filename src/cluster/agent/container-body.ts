// A task's ContainerSpec as a container create body for the node's engine, with the labels dockerd
// puts on task containers (com.docker.swarm.service.id/.name, .task, .task.id/.name, .node.id).
// Pure.
import type { ClusterObject } from '../../types/cluster.ts';
import { privilegeSecurityOpts } from './privileges.ts';
import { assignedView, containerName, taskName, type TaskRecord } from '../manager/tasks.ts';
import { expandContainerSpec, type NodeFacts } from './task-template.ts';

const obj = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const list = (v: unknown): unknown[] | undefined => (Array.isArray(v) ? v : undefined);

export function taskLabels(t: TaskRecord): Record<string, string> {
  return {
    'com.docker.swarm.node.id': t.NodeID ?? '',
    'com.docker.swarm.service.id': t.ServiceID,
    'com.docker.swarm.service.name': t.ServiceName,
    'com.docker.swarm.task': '',
    'com.docker.swarm.task.id': t.ID,
    'com.docker.swarm.task.name': containerName(t),
  };
}

/** `node`: the ContainerSpec's templates are expanded for it (Env, Hostname, mounts); without it they stay as written. */
export function containerBody(t: TaskRecord, node?: NodeFacts): ClusterObject {
  const cs = node ? expandContainerSpec(t, node) : obj(t.Spec.ContainerSpec);
  const res = obj(obj(t.Spec.Resources).Limits);
  const dns = obj(cs.DNSConfig);
  const host: ClusterObject = { RestartPolicy: { Name: 'no' } };
  if (cs.Init === true) host.Init = true;
  if (list(cs.Mounts)) host.Mounts = cs.Mounts;
  // ContainerSpec.Hosts are "IP host…" (hosts-file order); HostConfig.ExtraHosts are "host:IP".
  const hosts = list(cs.Hosts)?.flatMap((h) => {
    const [ip, ...names] = String(h).trim().split(/\s+/);
    return names.map((n) => `${n}:${ip}`);
  });
  if (hosts?.length) host.ExtraHosts = hosts;
  if (list(dns.Nameservers)) host.Dns = dns.Nameservers;
  if (list(dns.Search)) host.DnsSearch = dns.Search;
  if (list(dns.Options)) host.DnsOptions = dns.Options;
  if (list(cs.CapabilityAdd)) host.CapAdd = cs.CapabilityAdd;
  if (list(cs.CapabilityDrop)) host.CapDrop = cs.CapabilityDrop;
  if (cs.Sysctls) host.Sysctls = cs.Sysctls;
  const securityOpt = privilegeSecurityOpts(cs);
  if (securityOpt.length) host.SecurityOpt = securityOpt;
  if (list(cs.Groups)) host.GroupAdd = cs.Groups;
  const ld = obj(t.Spec.LogDriver);
  if (typeof ld.Name === 'string' && ld.Name) host.LogConfig = { Type: ld.Name, Config: obj(ld.Options) };
  if (list(cs.Ulimits)) host.Ulimits = cs.Ulimits;
  if (cs.ReadOnly === true) host.ReadonlyRootfs = true;
  if (typeof res.NanoCPUs === 'number' && res.NanoCPUs > 0) host.NanoCpus = res.NanoCPUs;
  if (typeof res.MemoryBytes === 'number' && res.MemoryBytes > 0) host.Memory = res.MemoryBytes;
  if (typeof res.Pids === 'number' && res.Pids > 0) host.PidsLimit = res.Pids;
  // Ports of mode=host, bound on the task's node (those of the routing mesh go through `ingress`).
  const exposed: Record<string, object> = {};
  const bindings: Record<string, Array<{ HostIp: string; HostPort: string }>> = {};
  for (const p of t.Ports ?? []) {
    const port = obj(p);
    if (port.PublishMode !== 'host') continue; // the routing mesh's: through the ingress network
    const key = `${String(port.TargetPort)}/${String(port.Protocol || 'tcp')}`;
    exposed[key] = {};
    bindings[key] = [...(bindings[key] ?? []), { HostIp: '', HostPort: port.PublishedPort ? String(port.PublishedPort) : '' }];
  }
  if (Object.keys(bindings).length) host.PortBindings = bindings;
  const body: ClusterObject = {
    Image: cs.Image,
    Labels: { ...(obj(cs.Labels) as Record<string, string>), ...taskLabels(t) },
    HostConfig: host,
  };
  if (Object.keys(exposed).length) body.ExposedPorts = exposed;
  const nets = taskNetworks(t);
  if (nets.length) {
    host.NetworkMode = nets[0]!.target;
    body.NetworkingConfig = { EndpointsConfig: Object.fromEntries(nets.map((n) => [n.target, { Aliases: n.aliases }])) };
  }
  if (list(cs.Command)) body.Entrypoint = cs.Command;
  if (list(cs.Args)) body.Cmd = cs.Args;
  // Generic resources the task got, as swarmkit's executor tells the container:
  // DOCKER_RESOURCE_<KIND>=<named values, comma-separated> or =<discrete amount>.
  const resEnv = assignedView(t).map((g) => {
    const n = obj(g.NamedResourceSpec);
    const d = obj(g.DiscreteResourceSpec);
    return n.Kind ? [String(n.Kind), String(n.Value)] : [String(d.Kind), String(d.Value)];
  });
  const byKind = new Map<string, string[]>();
  for (const [k, v] of resEnv) byKind.set(k!, [...(byKind.get(k!) ?? []), v!]);
  const env = [
    ...((list(cs.Env) ?? []) as string[]),
    ...[...byKind].map(([k, vs]) => `DOCKER_RESOURCE_${k.toUpperCase()}=${vs.join(',')}`),
  ];
  if (env.length) body.Env = env;
  if (typeof cs.User === 'string' && cs.User) body.User = cs.User;
  if (typeof cs.Dir === 'string' && cs.Dir) body.WorkingDir = cs.Dir;
  if (typeof cs.Hostname === 'string' && cs.Hostname) body.Hostname = cs.Hostname;
  if (cs.TTY === true) body.Tty = true;
  if (cs.OpenStdin === true) body.OpenStdin = true;
  if (typeof cs.StopSignal === 'string' && cs.StopSignal) body.StopSignal = cs.StopSignal;
  if (cs.Healthcheck) body.Healthcheck = cs.Healthcheck;
  return body;
}

/**
 * The overlay networks a task joins, each with its DNS names beyond the container's name: the
 * spec's aliases, the task name (`<service>.<slot>`), `tasks.<service>` (what the service's VIP
 * balances to and `tasks.<service>` answers) and, in endpoint mode dnsrr, `<service>` itself.
 */
export function taskNetworks(t: TaskRecord): Array<{ target: string; aliases: string[] }> {
  const nets = list(t.Spec.Networks) ?? [];
  const out = nets.map((n) => {
    const given = (list(obj(n).Aliases) ?? []).map(String);
    const names = [...given, taskName(t), `tasks.${t.ServiceName}`];
    if (t.EndpointMode === 'dnsrr') names.push(t.ServiceName);
    return { target: String(obj(n).Target), aliases: [...new Set(names)] };
  });
  // Ports of the routing mesh: the task joins `ingress` too, where the nodes reach it.
  if ((t.Ports ?? []).some((p) => obj(p).PublishMode !== 'host')) out.push({ target: 'ingress', aliases: [`tasks.${t.ServiceName}`] });
  return out;
}

/** StopGracePeriod in seconds (dockerd's default 10 s). */
export function stopTimeout(t: TaskRecord): number {
  const g = obj(t.Spec.ContainerSpec).StopGracePeriod;
  return typeof g === 'number' && g >= 0 ? Math.ceil(g / 1e9) : 10;
}
