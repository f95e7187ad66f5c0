// `service inspect --pretty`, laid out as the docker CLI's pretty template: mode and replicas, the
// update status, placement, update/rollback policies, the container spec, resources, networks
// (by name), endpoint mode and ports; durations as Go prints them.
import { bytesSize, humanDuration } from '../../output.ts';

// The API's open records (cluster objects, disk usage), read field by field.
type Obj = Record<string, any>;

/** Go's time.Duration String(): 5s, 1m30s, 500ms, 0s. */
export function goDuration(ns: number): string {
  if (!ns) return '0s';
  if (ns < 1e3) return `${ns}ns`;
  if (ns < 1e6) return `${ns / 1e3}µs`;
  if (ns < 1e9) return `${ns / 1e6}ms`;
  const total = ns / 1e9;
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = Number((total % 60).toFixed(9));
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${sec}s`;
}

const goList = (xs: unknown[]) => `[${xs.join(' ')}]`;

function policy(name: 'Update' | 'Rollback', c: Obj | undefined): string[] {
  if (!c) return [];
  const out = [`${name}Config:`, ` Parallelism:\t${c.Parallelism ?? 0}`];
  if (Number(c.Delay ?? 0) > 0) out.push(` Delay:\t\t${goDuration(Number(c.Delay))}`);
  out.push(` On failure:\t${c.FailureAction ?? ''}`);
  if (Number(c.Monitor ?? 0) > 0) out.push(` Monitoring Period: ${goDuration(Number(c.Monitor))}`);
  out.push(` Max failure ratio: ${c.MaxFailureRatio ?? 0}`, ` ${name} order:${name === 'Update' ? '      ' : '    '}${c.Order ?? ''}`);
  return out;
}

export function prettyService(s: Obj, networkNames: Map<string, string> = new Map()): string {
  const spec = s.Spec ?? {};
  const t = spec.TaskTemplate ?? {};
  const c = t.ContainerSpec ?? {};
  const l: string[] = ['', `ID:\t\t${s.ID}`, `Name:\t\t${spec.Name}`];
  const labels = Object.entries((spec.Labels ?? {}) as Record<string, string>).sort();
  if (labels.length) l.push('Labels:', ...labels.map(([k, v]) => ` ${k}${v ? `=${v}` : ''}`));
  const m = spec.Mode ?? {};
  l.push(`Service Mode:${m.Global ? '\tGlobal' : m.Replicated ? '\tReplicated' : ''}`);
  if (m.Replicated?.Replicas) l.push(` Replicas:\t${m.Replicated.Replicas}`);
  const us = s.UpdateStatus;
  if (us) {
    l.push('UpdateStatus:', ` State:\t\t${us.State ?? ''}`);
    if (us.StartedAt) l.push(` Started:\t${humanDuration(Date.now() - Date.parse(us.StartedAt))} ago`);
    if (us.State === 'completed' && us.CompletedAt) l.push(` Completed:\t${humanDuration(Date.now() - Date.parse(us.CompletedAt))} ago`);
    l.push(` Message:\t${us.Message ?? ''}`);
  }
  const pl = t.Placement ?? {};
  l.push('Placement:');
  if (pl.Constraints?.length) l.push(` Constraints:\t${goList(pl.Constraints)}`);
  if (pl.Preferences?.length) l.push(` Preferences:   ${goList(pl.Preferences.map((p: Obj) => `spread=${p.Spread?.SpreadDescriptor}`))}`);
  if (pl.MaxReplicas) l.push(` Max Replicas Per Node:   ${pl.MaxReplicas}`);
  l.push(...policy('Update', spec.UpdateConfig), ...policy('Rollback', spec.RollbackConfig));
  l.push('ContainerSpec:', ` Image:\t\t${c.Image ?? ''}`);
  if (c.Args?.length) l.push(` Args:\t\t${c.Args.map((a: string) => `${a} `).join('')}`);
  if (c.Env?.length) l.push(` Env:\t\t${c.Env.map((a: string) => `${a} `).join('')}`);
  if (c.Dir) l.push(` Dir:\t\t${c.Dir}`);
  if (c.Init !== undefined && c.Init !== null) l.push(` Init:\t\t${c.Init}`);
  if (c.User) l.push(` User: ${c.User}`);
  if (c.CapabilityAdd?.length || c.CapabilityDrop?.length) {
    l.push('Capabilities:');
    if (c.CapabilityAdd?.length) l.push(` Add: ${c.CapabilityAdd.join(', ')}`);
    if (c.CapabilityDrop?.length) l.push(` Drop: ${c.CapabilityDrop.join(', ')}`);
  }
  const sysctls = Object.entries((c.Sysctls ?? {}) as Record<string, string>).sort();
  if (sysctls.length) l.push('SysCtls:', ...sysctls.map(([k, v]) => ` ${k}${v ? `: ${v}` : ''}`));
  if (c.Ulimits?.length)
    l.push(
      'Ulimits:',
      ...[...c.Ulimits].sort((a: Obj, b: Obj) => (a.Name < b.Name ? -1 : 1)).map((u: Obj) => ` ${u.Name}: ${u.Soft}:${u.Hard}`),
    );
  if (c.Mounts?.length) l.push('Mounts:');
  for (const mt of c.Mounts ?? [])
    l.push(` Target:\t${mt.Target}`, `  Source:\t${mt.Source ?? ''}`, `  ReadOnly:\t${!!mt.ReadOnly}`, `  Type:\t\t${mt.Type}`);
  if (c.Configs?.length) l.push('Configs:', ...c.Configs.flatMap((x: Obj) => [` Target:\t${x.File?.Name}`, `  Source:\t${x.ConfigName}`]));
  if (c.Secrets?.length) l.push('Secrets:', ...c.Secrets.flatMap((x: Obj) => [` Target:\t${x.File?.Name}`, `  Source:\t${x.SecretName}`]));
  if (t.LogDriver) {
    l.push('Log Driver:');
    if (t.LogDriver.Name) l.push(` Name:\t\t${t.LogDriver.Name}`);
    const opts = Object.entries((t.LogDriver.Options ?? {}) as Record<string, string>).sort();
    if (opts.length) l.push(' LogOpts:', ...opts.map(([k, v]) => `  ${k}${v ? `:       ${v}` : ''}`));
    l.push('');
  }
  const r = t.Resources;
  if (r) {
    l.push('Resources:');
    const res = r.Reservations ?? {};
    if (res.NanoCPUs > 0 || res.MemoryBytes > 0) {
      l.push(' Reservations:');
      if (res.NanoCPUs > 0) l.push(`  CPU:\t\t${res.NanoCPUs / 1e9}`);
      if (res.MemoryBytes > 0) l.push(`  Memory:\t${bytesSize(res.MemoryBytes)}`);
    }
    const lim = r.Limits ?? {};
    if (lim.NanoCPUs > 0 || lim.MemoryBytes > 0 || lim.Pids > 0) {
      l.push(' Limits:');
      if (lim.NanoCPUs > 0) l.push(`  CPU:\t\t${lim.NanoCPUs / 1e9}`);
      if (lim.MemoryBytes > 0) l.push(`  Memory:\t${bytesSize(lim.MemoryBytes)}`);
    }
  }
  if (r?.Limits?.Pids > 0) l.push(`  PIDs:\t\t${r.Limits.Pids}`);
  const nets = (t.Networks ?? []) as Obj[];
  if (nets.length) l.push(`Networks:${nets.map((n) => ` ${networkNames.get(n.Target) ?? n.Target}`).join('')} `);
  l.push(`Endpoint Mode:\t${spec.EndpointSpec?.Mode ?? ''}`);
  const ports = (spec.EndpointSpec?.Ports ?? []) as Obj[];
  let text = l.join('\n');
  if (ports.length) {
    text += '\nPorts:';
    for (const p of ports)
      text += `\n PublishedPort = ${p.PublishedPort}\n  Protocol = ${p.Protocol}\n  TargetPort = ${p.TargetPort}\n  PublishMode = ${p.PublishMode}`;
    text += ' ';
  }
  const h = c.Healthcheck;
  if (h)
    text += `\n Healthcheck:\n  Interval = ${goDuration(h.Interval ?? 0)}\n  Retries = ${h.Retries ?? 0}\n  StartPeriod =\t${goDuration(h.StartPeriod ?? 0)}\n  Timeout =\t${goDuration(h.Timeout ?? 0)}${
      h.Test?.length ? `\n  Tests:${h.Test.map((x: string) => `\n\t Test = ${x}`).join('')} ` : ''
    }`;
  return `${text}\n\n`;
}
