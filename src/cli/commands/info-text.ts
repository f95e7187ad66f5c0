// `engine info` without --format: the daemon's /info laid out as the docker CLI 28 prints it (the
// same labels, order, indentation and omissions: a label with an empty string value is left out;
// the swarm block only for an active node), so scripts and tests reading `docker info` read this.
import { bytesSize, humanDuration } from '../output.ts';

type Info = Record<string, any>;

/** The text of `info`: the client block, a blank line, the server block, a blank line. */
export function infoText(i: Info, client: { version: string; context: string; debug: boolean }): string {
  const out: string[] = [];
  /** Go's Println: the label and the value joined by a space. */
  const line = (label: string, value: unknown) => out.push(`${label} ${goText(value)}`);
  const nonEmpty = (label: string, value: unknown) => {
    if (value !== undefined && value !== null && value !== '') line(label, value);
  };
  out.push('Client:');
  nonEmpty(' Version:   ', client.version);
  line(' Context:   ', client.context);
  line(' Debug Mode:', client.debug);
  out.push('', 'Server:');
  line(' Containers:', i.Containers ?? 0);
  line('  Running:', i.ContainersRunning ?? 0);
  line('  Paused:', i.ContainersPaused ?? 0);
  line('  Stopped:', i.ContainersStopped ?? 0);
  line(' Images:', i.Images ?? 0);
  nonEmpty(' Server Version:', i.ServerVersion);
  nonEmpty(' Storage Driver:', i.Driver);
  for (const [k, v] of (i.DriverStatus as [string, string][] | null) ?? []) out.push(`  ${k}: ${v}`);
  for (const [k, v] of (i.SystemStatus as [string, string][] | null) ?? []) out.push(` ${k}: ${v}`);
  nonEmpty(' Logging Driver:', i.LoggingDriver);
  nonEmpty(' Cgroup Driver:', i.CgroupDriver);
  nonEmpty(' Cgroup Version:', i.CgroupVersion);
  const plugins = i.Plugins ?? {};
  out.push(' Plugins:');
  line('  Volume:', (plugins.Volume ?? []).join(' '));
  line('  Network:', (plugins.Network ?? []).join(' '));
  if (plugins.Authorization?.length) line('  Authorization:', plugins.Authorization.join(' '));
  line('  Log:', (plugins.Log ?? []).join(' '));
  if (i.CDISpecDirs?.length) out.push(' CDI spec directories:', ...i.CDISpecDirs.map((d: string) => `  ${d}`));
  line(' Swarm:', i.Swarm?.LocalNodeState ?? '');
  swarmLines(i.Swarm ?? {}, out);
  const runtimes = Object.keys(i.Runtimes ?? {});
  if (runtimes.length) {
    line(' Runtimes:', runtimes.join(' '));
    line(' Default Runtime:', i.DefaultRuntime ?? '');
  }
  if (i.OSType === 'linux') {
    line(' Init Binary:', i.InitBinary ?? '');
    line(' containerd version:', i.ContainerdCommit?.ID ?? '');
    line(' runc version:', i.RuncCommit?.ID ?? '');
    line(' init version:', i.InitCommit?.ID ?? '');
    if (i.SecurityOptions?.length) {
      out.push(' Security Options:');
      for (const opt of i.SecurityOptions as string[]) {
        // "name=seccomp,profile=builtin": the name, then its profile if it has one.
        const kv = new Map(opt.split(',').map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)] as const));
        out.push(`  ${kv.get('name') ?? opt}`);
        if (kv.has('profile')) line('   Profile:', kv.get('profile'));
      }
    }
  }
  nonEmpty(' Kernel Version:', i.KernelVersion);
  nonEmpty(' Operating System:', i.OperatingSystem);
  nonEmpty(' OSType:', i.OSType);
  nonEmpty(' Architecture:', i.Architecture);
  line(' CPUs:', i.NCPU ?? 0);
  line(' Total Memory:', bytesSize(i.MemTotal ?? 0));
  nonEmpty(' Name:', i.Name);
  nonEmpty(' ID:', i.ID);
  line(' Docker Root Dir:', i.DockerRootDir ?? '');
  line(' Debug Mode:', !!i.Debug);
  if (i.Debug || client.debug) {
    line('  File Descriptors:', i.NFd ?? 0);
    line('  Goroutines:', i.NGoroutines ?? 0);
    line('  System Time:', i.SystemTime ?? '');
    line('  EventsListeners:', i.NEventsListener ?? 0);
  }
  nonEmpty(' HTTP Proxy:', i.HttpProxy);
  nonEmpty(' HTTPS Proxy:', i.HttpsProxy);
  nonEmpty(' No Proxy:', i.NoProxy);
  if (i.Labels?.length) out.push(' Labels:', ...i.Labels.map((l: string) => `  ${l}`));
  line(' Experimental:', !!i.ExperimentalBuild);
  const reg = i.RegistryConfig;
  const insecureIndexes = Object.values<{ Name: string; Secure: boolean }>(reg?.IndexConfigs ?? {}).filter((c) => !c.Secure);
  if (reg && (reg.InsecureRegistryCIDRs?.length || Object.keys(reg.IndexConfigs ?? {}).length)) {
    out.push(
      ' Insecure Registries:',
      ...insecureIndexes.map((c) => `  ${c.Name}`),
      ...(reg.InsecureRegistryCIDRs ?? []).map((c: string) => `  ${c}`),
    );
  }
  if (reg?.Mirrors?.length) out.push(' Registry Mirrors:', ...reg.Mirrors.map((m: string) => `  ${m}`));
  line(' Live Restore Enabled:', !!i.LiveRestoreEnabled);
  if (i.ProductLicense) line(' Product License:', i.ProductLicense);
  if (i.DefaultAddressPools?.length) {
    out.push(
      ' Default Address Pools:',
      ...i.DefaultAddressPools.map((p: { Base: string; Size: number }) => `   Base: ${p.Base}, Size: ${p.Size}`),
    );
  }
  out.push('');
  return `${out.join('\n')}\n`;
}

/** The swarm lines under " Swarm:", for a node in a cluster (inactive and locked print none). */
function swarmLines(s: Info, out: string[]): void {
  if (!s.LocalNodeState || s.LocalNodeState === 'inactive' || s.LocalNodeState === 'locked') return;
  const line = (label: string, value: unknown) => out.push(`${label} ${goText(value)}`);
  line('  NodeID:', s.NodeID ?? '');
  if (s.Error) line('  Error:', s.Error);
  line('  Is Manager:', !!s.ControlAvailable);
  const c = s.Cluster;
  if (c && s.ControlAvailable && !s.Error && s.LocalNodeState !== 'error') {
    line('  ClusterID:', c.ID ?? '');
    line('  Managers:', s.Managers ?? 0);
    line('  Nodes:', s.Nodes ?? 0);
    if (c.DefaultAddrPool) {
      line('  Default Address Pool:', c.DefaultAddrPool.map((p: string) => `${p}  `).join(''));
      line('  SubnetSize:', c.SubnetSize ?? 0);
    }
    if (c.DataPathPort > 0) line('  Data Path Port:', c.DataPathPort);
    const spec = c.Spec ?? {};
    out.push('  Orchestration:');
    line('   Task History Retention Limit:', spec.Orchestration?.TaskHistoryRetentionLimit ?? 0);
    out.push('  Raft:');
    line('   Snapshot Interval:', spec.Raft?.SnapshotInterval ?? 0);
    if (spec.Raft?.KeepOldSnapshots !== undefined) line('   Number of Old Snapshots to Retain:', spec.Raft.KeepOldSnapshots);
    line('   Heartbeat Tick:', spec.Raft?.HeartbeatTick ?? 0);
    line('   Election Tick:', spec.Raft?.ElectionTick ?? 0);
    out.push('  Dispatcher:');
    line('   Heartbeat Period:', humanDuration((spec.Dispatcher?.HeartbeatPeriod ?? 0) / 1e6));
    out.push('  CA Configuration:');
    line('   Expiry Duration:', humanDuration((spec.CAConfig?.NodeCertExpiry ?? 0) / 1e6));
    line('   Force Rotate:', spec.CAConfig?.ForceRotate ?? 0);
    const caCert = (spec.CAConfig?.SigningCACert ?? '').trim();
    if (caCert) out.push(`   Signing CA Certificate: \n${caCert}\n`);
    if (spec.CAConfig?.ExternalCAs?.length) {
      out.push(
        '   External CAs:',
        ...spec.CAConfig.ExternalCAs.map((e: { Protocol: string; URL: string }) => `     ${e.Protocol}: ${e.URL}`),
      );
    }
    line('  Autolock Managers:', !!spec.EncryptionConfig?.AutoLockManagers);
    line('  Root Rotation In Progress:', !!c.RootRotationInProgress);
  }
  line('  Node Address:', s.NodeAddr ?? '');
  const managers = ((s.RemoteManagers as { Addr: string }[] | null) ?? []).map((m) => m.Addr).sort();
  if (managers.length) out.push('  Manager Addresses:', ...managers.map((m) => `   ${m}`));
}

/** Go's %v of a JSON value: strings as they are, numbers and booleans as text. */
function goText(v: unknown): string {
  return typeof v === 'string' ? v : String(v);
}
