// engine swarm: init, join, join-token, leave, update, unlock, unlock-key and ca, printing what
// the docker CLI prints (the join command of a token, the unlock key's instructions, "Swarm
// updated.", the root CA's certificate) and checking its flags as it does.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { HelpRequested, UsageError, type Flags } from '../../args.ts';
import type { Cli } from '../../cli.ts';
import type { CommandSpec } from '../../command-spec.ts';
import { parseDuration } from '../../run-options.ts';
import { leaf, management, parseFor } from '../spec-text.ts';
import { SWARM_TEXT as T } from './swarm-text.ts';
import { realStdout } from '../../out.ts';

// The API's open records (cluster objects, disk usage), read field by field.
type Obj = Record<string, any>;

function availability(f: Flags): string | undefined {
  const a = f.str('availability');
  if (a === undefined) return undefined;
  if (!['active', 'pause', 'drain'].includes(a.toLowerCase()))
    throw new Error(`invalid availability "${a}", only active, pause and drain are supported`);
  return a.toLowerCase();
}

/** --external-ca protocol=cfssl,url=…[,cacert=file][,k=v] as parseExternalCA reads it. */
async function externalCA(spec: string): Promise<Obj> {
  const ca: Obj = { Protocol: '', URL: '', Options: {} };
  let proto = false;
  let url = false;
  for (const field of spec.split(',')) {
    const eq = field.indexOf('=');
    if (eq < 0) throw new UsageError(`invalid field '${field}' must be a key=value pair`);
    const [k, v] = [field.slice(0, eq), field.slice(eq + 1)];
    switch (k.toLowerCase()) {
      case 'protocol':
        proto = true;
        if (v.toLowerCase() !== 'cfssl') throw new UsageError(`unrecognized external CA protocol ${v}`);
        ca.Protocol = 'cfssl';
        break;
      case 'url':
        url = true;
        ca.URL = v;
        break;
      case 'cacert': {
        const pem = await readFile(v, 'utf8').catch((e: Error) => {
          throw new UsageError(`unable to read CA cert for external CA: ${e.message}`);
        });
        if (!pem.includes('-----BEGIN')) throw new UsageError('CA cert for external CA must be in PEM format');
        ca.CACert = pem;
        break;
      }
      default:
        ca.Options[k] = v;
    }
  }
  if (!proto) throw new UsageError('the external-ca option needs a protocol= parameter');
  if (!url) throw new UsageError('the external-ca option needs a url= parameter');
  return ca;
}

/** The swarm flags (task history, heartbeat, snapshots, autolock, cert expiry, external CAs) merged into a spec. */
async function mergeSpec(spec: Obj, f: Flags, caCert?: string): Promise<Obj> {
  const sub = (k: string): Obj => (spec[k] ??= {});
  if (f.has('task-history-limit')) sub('Orchestration').TaskHistoryRetentionLimit = f.int('task-history-limit');
  if (f.has('dispatcher-heartbeat')) sub('Dispatcher').HeartbeatPeriod = parseDuration(f.str('dispatcher-heartbeat')!);
  if (f.has('max-snapshots')) sub('Raft').KeepOldSnapshots = f.int('max-snapshots');
  if (f.has('snapshot-interval')) sub('Raft').SnapshotInterval = f.int('snapshot-interval');
  if (f.has('autolock')) sub('EncryptionConfig').AutoLockManagers = f.bool('autolock');
  if (f.has('cert-expiry')) sub('CAConfig').NodeCertExpiry = parseDuration(f.str('cert-expiry')!);
  if (f.has('external-ca')) {
    const cas = await Promise.all(f.list('external-ca').map(externalCA));
    if (caCert !== undefined) for (const ca of cas) ca.CACert ??= caCert;
    sub('CAConfig').ExternalCAs = cas;
  }
  return spec;
}

async function selfId(cli: Cli): Promise<string> {
  return String((await cli.api.info()).Swarm?.NodeID ?? '');
}

async function printJoinCommand(cli: Cli, nodeId: string, worker: boolean, manager: boolean): Promise<void> {
  const node = (await cli.api.cluster.get('nodes', nodeId)) as Obj;
  const sw = (await cli.api.cluster.inspect()) as Obj;
  const addr = node.ManagerStatus?.Addr;
  if (!node.ManagerStatus) return;
  for (const [on, role, token] of [
    [worker, 'worker', sw.JoinTokens?.Worker],
    [manager, 'manager', sw.JoinTokens?.Manager],
  ] as const)
    if (on) cli.out(`To add a ${role} to this swarm, run the following command:\n\n    engine swarm join --token ${token} ${addr}\n\n`);
}

function printUnlockCommand(cli: Cli, key: string): void {
  if (key)
    cli.out(
      `To unlock a swarm manager after it restarts, run the \`engine swarm unlock\`\ncommand and provide the following key:\n\n    ${key}\n\n` +
        `Remember to store this key in a password manager, since without it you\nwill not be able to restart the manager.\n`,
    );
}

async function init(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('swarm init', T.init, argv, { max: 0 });
  const avail = availability(f);
  const port = f.str('data-path-port');
  let nodeId: string;
  try {
    nodeId = await cli.api.cluster.init({
      ListenAddr: f.str('listen-addr') ?? '0.0.0.0:2377',
      AdvertiseAddr: f.str('advertise-addr') ?? '',
      DataPathAddr: f.str('data-path-addr') ?? '',
      DataPathPort: port ? Number(port) : 0,
      DefaultAddrPool: f.list('default-addr-pool').flatMap((p) => p.split(',')),
      ForceNewCluster: f.bool('force-new-cluster'),
      Spec: await mergeSpec({}, f),
      AutoLockManagers: f.bool('autolock'),
      ...(avail ? { Availability: avail } : {}),
      SubnetSize: Number(f.str('default-addr-pool-mask-length') ?? 24),
    });
  } catch (e) {
    const m = (e as Error).message;
    if (/could not choose an IP address to advertise|could not find the system's IP address/.test(m))
      (e as Error).message = `${m} - specify one with --advertise-addr`;
    throw e;
  }
  cli.out(`Swarm initialized: current node (${nodeId}) is now a manager.\n\n`);
  await printJoinCommand(cli, nodeId, true, false);
  cli.out("To add a manager to this swarm, run 'engine swarm join-token manager' and follow the instructions.\n");
  if (f.bool('autolock')) {
    const key = await cli.api.cluster.unlockKey().catch((e: Error) => {
      throw new Error(`could not fetch unlock key: ${e.message}`);
    });
    printUnlockCommand(cli, key.UnlockKey);
  }
  return 0;
}

async function join(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('swarm join', T.join, argv, { min: 1, max: 1 });
  const avail = availability(f);
  await cli.api.cluster.join({
    JoinToken: f.str('token') ?? '',
    ListenAddr: f.str('listen-addr') ?? '0.0.0.0:2377',
    AdvertiseAddr: f.str('advertise-addr') ?? '',
    DataPathAddr: f.str('data-path-addr') ?? '',
    RemoteAddrs: [f.args[0]!],
    ...(avail ? { Availability: avail } : {}),
  });
  const info = await cli.api.info();
  cli.out(info.Swarm?.ControlAvailable ? 'This node joined a swarm as a manager.\n' : 'This node joined a swarm as a worker.\n');
  return 0;
}

async function joinToken(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('swarm join-token', T['join-token'], argv, { min: 1, max: 1 });
  const role = f.args[0]!;
  if (role !== 'worker' && role !== 'manager') throw new Error(`unknown role ${role}`);
  const worker = role === 'worker';
  if (f.bool('rotate')) {
    const sw = (await cli.api.cluster.inspect()) as Obj;
    await cli.api.cluster.updateSwarm(sw.Version.Index, sw.Spec, { rotateWorkerToken: worker, rotateManagerToken: !worker });
    if (!f.bool('quiet')) cli.out(`Successfully rotated ${role} join token.\n\n`);
  }
  if (f.bool('quiet')) {
    const sw = (await cli.api.cluster.inspect()) as Obj;
    cli.out(`${worker ? sw.JoinTokens.Worker : sw.JoinTokens.Manager}\n`);
    return 0;
  }
  await printJoinCommand(cli, await selfId(cli), worker, !worker);
  return 0;
}

async function leave(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('swarm leave', T.leave, argv, { max: 0 });
  await cli.api.cluster.leave({ force: f.bool('force') });
  cli.out('Node left the swarm.\n');
  return 0;
}

async function update(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('swarm update', T.update, argv, { max: 0 });
  // No flag: the usage, as the docker CLI answers.
  if (f.p.flags.size === 0) throw new HelpRequested([]);
  const sw = (await cli.api.cluster.inspect()) as Obj;
  const before = !!sw.Spec?.EncryptionConfig?.AutoLockManagers;
  await mergeSpec(sw.Spec, f, sw.ClusterInfo?.TLSInfo?.TrustRoot ?? sw.TLSInfo?.TrustRoot);
  await cli.api.cluster.updateSwarm(sw.Version.Index, sw.Spec);
  cli.out('Swarm updated.\n');
  if (sw.Spec?.EncryptionConfig?.AutoLockManagers && !before) {
    const key = await cli.api.cluster.unlockKey().catch((e: Error) => {
      throw new Error(`could not fetch unlock key: ${e.message}`);
    });
    printUnlockCommand(cli, key.UnlockKey);
  }
  return 0;
}

async function readKey(prompt: string): Promise<string> {
  if (process.stdin.isTTY) realStdout().write(prompt);
  const rl = createInterface({ input: process.stdin, terminal: false });
  try {
    for await (const line of rl) return line.trim();
    return '';
  } finally {
    rl.close();
    if (process.stdin.isTTY) realStdout().write('\n');
  }
}

async function unlock(cli: Cli, argv: string[]): Promise<number> {
  parseFor('swarm unlock', T.unlock, argv, { max: 0 });
  const state = (await cli.api.info()).Swarm?.LocalNodeState;
  if (state === 'inactive') throw new Error('error: this node is not part of a swarm');
  if (state !== 'locked') throw new Error('error: swarm is not locked');
  await cli.api.cluster.unlock(await readKey('Enter unlock key: '));
  return 0;
}

async function unlockKey(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('swarm unlock-key', T['unlock-key'], argv, { max: 0 });
  if (f.bool('rotate')) {
    const sw = (await cli.api.cluster.inspect()) as Obj;
    if (!sw.Spec?.EncryptionConfig?.AutoLockManagers) throw new Error('cannot rotate because autolock is not turned on');
    await cli.api.cluster.updateSwarm(sw.Version.Index, sw.Spec, { rotateManagerUnlockKey: true });
    if (!f.bool('quiet')) cli.out('Successfully rotated manager unlock key.\n');
  }
  const r = await cli.api.cluster.unlockKey().catch((e: Error) => {
    throw new Error(`could not fetch unlock key: ${e.message}`);
  });
  if (!r.UnlockKey) throw new Error('no unlock key is set');
  if (f.bool('quiet')) cli.out(`${r.UnlockKey}\n`);
  else printUnlockCommand(cli, r.UnlockKey);
  return 0;
}

function trustRoot(sw: Obj): string {
  const root = String(sw.TLSInfo?.TrustRoot ?? sw.ClusterInfo?.TLSInfo?.TrustRoot ?? '').trim();
  if (!root) throw new Error('no CA information available');
  return `${root}\n`;
}

async function ca(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('swarm ca', T.ca, argv, { max: 0 });
  const sw = (await cli.api.cluster.inspect()) as Obj;
  if (!f.bool('rotate')) {
    for (const flag of ['ca-cert', 'ca-key', 'cert-expiry', 'external-ca'])
      if (f.has(flag)) throw new Error(`\`--${flag}\` flag requires the \`--rotate\` flag to update the CA`);
    cli.out(trustRoot(sw));
    return 0;
  }
  if (f.list('external-ca').length && !f.has('ca-cert'))
    throw new Error(
      "rotating to an external CA requires the `--ca-cert` flag to specify the external CA's cert - to add an external CA with the current root CA certificate, use the `update` command instead",
    );
  if (f.has('ca-cert') && !f.list('external-ca').length && !f.has('ca-key'))
    throw new Error('the --ca-cert flag requires that a --ca-key flag and/or --external-ca flag be provided as well');
  const caCert = f.str('ca-cert') ? await readFile(f.str('ca-cert')!, 'utf8') : '';
  const caKey = f.str('ca-key') ? await readFile(f.str('ca-key')!, 'utf8') : '';
  const spec = await mergeSpec(sw.Spec, f, caCert);
  spec.CAConfig = { ...spec.CAConfig, SigningCACert: caCert, SigningCAKey: caKey };
  if (!caCert && !caKey) spec.CAConfig.ForceRotate = Number(spec.CAConfig.ForceRotate ?? 0) + 1;
  await cli.api.cluster.updateSwarm(sw.Version.Index, spec);
  if (f.bool('detach')) return 0;
  // Waits for the rotation to converge (every node on the new root), as the docker CLI's progress
  // does: the new root's digest, the nodes' counts, then (unless --quiet) the new root.
  const quiet = f.bool('quiet');
  let shownDigest = '';
  for (;;) {
    const now = (await cli.api.cluster.inspect()) as Obj;
    const desired = String(now.TLSInfo?.TrustRoot ?? now.ClusterInfo?.TLSInfo?.TrustRoot ?? '');
    const digest = `sha256:${createHash('sha256').update(desired).digest('hex')}`;
    if (!quiet && digest !== shownDigest && desired) {
      cli.out(`desired root digest: ${digest}\n`);
      shownDigest = digest;
    }
    if (!now.ClusterInfo?.RootRotationInProgress && !now.RootRotationInProgress) {
      if (quiet) return 0;
      const nodes = ((await cli.api.cluster.list('nodes')) as Obj[]).length;
      cli.out(`  rotated TLS certificates: ${nodes}/${nodes} nodes\n  rotated CA certificates: ${nodes}/${nodes} nodes\n`);
      cli.out(trustRoot(now));
      return 0;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

export const SPECS: CommandSpec[] = [
  management('swarm', 'swarm', 'Manage Swarm', [
    leaf('ca', T.ca, ca),
    leaf('init', T.init, init),
    leaf('join', T.join, join),
    leaf('join-token', T['join-token'], joinToken),
    leaf('leave', T.leave, leave),
    leaf('unlock', T.unlock, unlock),
    leaf('unlock-key', T['unlock-key'], unlockKey),
    leaf('update', T.update, update),
  ]),
];
