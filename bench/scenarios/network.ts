// Network set-up cost: `docker run --rm busybox true` and the API lifecycle with the default bridge
// vs --network none, engined beside a dockerd that has a bridge of its own (iptables on; the main
// bench dockerd runs with --bridge none). Each daemon gets its own bridge name so they do not share
// addresses. dockerd never removes its DOCKER* chains: its rules for the bench bridge are deleted
// at the end, the chains too when nothing else uses them.

import { join } from 'node:path';
import { run } from '../../test/helpers/daemon.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';
import { Dockerd } from '../targets/dockerd.ts';
import { Engined } from '../targets/engined.ts';
import { apiLifecycle, NETWORK_NONE } from './api-lifecycle.ts';

export const ENGINED_BRIDGE = 'engbench0';
export const DOCKERD_BRIDGE = 'dkbench0';
const DOCKERD_SUBNET = '10.238.0.0/16';

/** `docker run --rm --network <net> busybox true` with the CLI pointed at `d`, ms. */
export async function cliRunTrue(d: DaemonUnderTest, net: 'bridge' | 'none'): Promise<number> {
  const env: NodeJS.ProcessEnv = { ...process.env, DOCKER_HOST: `unix://${d.socket}`, DOCKER_CONFIG: join(d.dir, 'docker-config') };
  delete env.DOCKER_CONTEXT;
  const t0 = performance.now();
  const r = await run('docker', ['run', '--rm', '--network', net, 'busybox', 'true'], { env, timeoutMs: 120_000 });
  if (r.code !== 0) throw new Error(`${d.kind}: docker run --network ${net} → ${r.code}: ${r.stderr.trim()}`);
  return performance.now() - t0;
}

/** The four cases for one daemon. */
export function networkCases(d: DaemonUnderTest): Record<string, () => Promise<number>> {
  return {
    [`${d.kind}ApiNone`]: async () => (await apiLifecycle(d, NETWORK_NONE)).total,
    [`${d.kind}ApiBridge`]: async () => (await apiLifecycle(d, {})).total,
    [`${d.kind}CliNone`]: () => cliRunTrue(d, 'none'),
    [`${d.kind}CliBridge`]: () => cliRunTrue(d, 'bridge'),
  };
}

/** engined with a default bridge of its own (ENGINE_DEFAULT_BRIDGE; it creates and removes it). */
export function startEnginedWithBridge(): Promise<{ daemon: Engined; readyMs: number }> {
  return Engined.start({ ENGINE_DEFAULT_BRIDGE: ENGINED_BRIDGE });
}

/**
 * dockerd on a bridge made here (dockerds started elsewhere with --bridge none delete docker0);
 * `cleanup` (after dockerd stopped) removes the bridge and dockerd's iptables rules for it.
 */
export async function startDockerdWithBridge(): Promise<{ daemon: Dockerd; cleanup: () => Promise<void> }> {
  await run('sh', [
    '-c',
    `ip link del ${DOCKERD_BRIDGE} 2>/dev/null; ip link add ${DOCKERD_BRIDGE} type bridge && ip addr add 10.238.0.1/16 dev ${DOCKERD_BRIDGE} && ip link set ${DOCKERD_BRIDGE} up`,
  ]);
  const cleanup = async () => {
    await run('ip', ['link', 'del', DOCKERD_BRIDGE]);
    await dropDockerRules();
  };
  try {
    const { daemon } = await Dockerd.start({ bridge: DOCKERD_BRIDGE });
    return { daemon, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** Deletes dockerd's rules for the bench bridge, and its chains when only their skeleton is left. */
export async function dropDockerRules(): Promise<void> {
  const lines = (await run('iptables-save', [])).stdout.split('\n');
  const othersUse = lines.some((l) => /^-A DOCKER/.test(l) && !l.includes(DOCKERD_BRIDGE) && !/ -j RETURN$/.test(l));
  const script: Record<string, string[]> = { filter: [], nat: [] };
  let table = '';
  for (const line of lines) {
    if (line.startsWith('*')) table = line.slice(1);
    if (!line.startsWith('-A ') || !script[table]) continue;
    const ours = line.includes(DOCKERD_BRIDGE) || line.includes(DOCKERD_SUBNET);
    const jump = /^-A (FORWARD|PREROUTING|OUTPUT|POSTROUTING) .*-j DOCKER/.test(line);
    if (ours || (jump && !othersUse)) script[table]!.push(line.replace(/^-A /, '-D '));
  }
  await run('iptables-restore', ['-w', '--noflush'], {
    input: ['*filter', ...script.filter!, 'COMMIT', '*nat', ...script.nat!, 'COMMIT', ''].join('\n'),
  });
  if (!othersUse) {
    await run('sh', [
      '-c',
      'for c in DOCKER DOCKER-ISOLATION-STAGE-1 DOCKER-ISOLATION-STAGE-2 DOCKER-USER; do iptables -F $c; iptables -X $c; done 2>/dev/null; iptables -t nat -F DOCKER 2>/dev/null; iptables -t nat -X DOCKER 2>/dev/null; true',
    ]);
  }
}
