// The two daemons a conformance run compares: engined (the test harness's, temporary roots, its own
// containerd) and Debian's dockerd in a network namespace of its own (so its bridge and iptables
// rules never touch the host's), each holding the same images the client suites expect: busybox,
// busybox tagged alpine:3.10 and alpine:latest, and `ubuntu` (busybox with a /bin/bash that runs sh).
// Prints `ENGINED=<socket>` and `DOCKERD=<socket>` once both are ready, and tears both down on
// SIGTERM or SIGINT. Used by run.sh; not part of the test suite.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, startDaemon } from '../../test/helpers/daemon.ts';
import { loadBusybox } from '../../test/helpers/images.ts';
import { until } from '../../test/helpers/until.ts';

const NETNS = 'engconf';

async function must(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const r = await run(cmd, args, { env, timeoutMs: 300_000 });
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

const dockerAt = (sock: string) => (args: string[]) => must('docker', args, { ...process.env, DOCKER_HOST: `unix://${sock}` });

async function startDockerd(dir: string): Promise<{ sock: string; child: ChildProcess }> {
  await run('ip', ['netns', 'del', NETNS]);
  await must('ip', ['netns', 'add', NETNS]);
  await must('ip', ['netns', 'exec', NETNS, 'ip', 'link', 'set', 'lo', 'up']);
  // A second link with an address, so that swarm init finds an address to advertise.
  await must('ip', ['netns', 'exec', NETNS, 'ip', 'link', 'add', 'cf0', 'type', 'veth', 'peer', 'name', 'cf1']);
  await must('ip', ['netns', 'exec', NETNS, 'ip', 'addr', 'add', '198.18.0.2/24', 'dev', 'cf0']);
  for (const l of ['cf0', 'cf1']) await must('ip', ['netns', 'exec', NETNS, 'ip', 'link', 'set', l, 'up']);
  await writeFile(join(dir, 'daemon.json'), '{}\n');
  const sock = join(dir, 'docker.sock');
  // nsenter (not `ip netns exec`, which remounts /sys and hides the cgroup mounts) joins the network namespace only.
  const child = spawn(
    'nsenter',
    [`--net=/run/netns/${NETNS}`, 'dockerd', '--data-root', join(dir, 'data'), '--exec-root', join(dir, 'exec')].concat([
      '-H',
      `unix://${sock}`,
      '--pidfile',
      join(dir, 'docker.pid'),
      '--config-file',
      join(dir, 'daemon.json'),
    ]),
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  await until('dockerd answers', async () => (await run('docker', ['-H', `unix://${sock}`, 'version'])).code === 0 || undefined, 60_000);
  return { sock, child };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'engine-conformance-'));
  const engined = await startDaemon();
  await loadBusybox(engined);
  const dd = await startDockerd(dir);
  const ours = dockerAt(engined.socket);
  const theirs = dockerAt(dd.sock);
  const tar = join(dir, 'busybox.tar');
  await ours(['save', '-o', tar, 'busybox:latest']);
  await theirs(['load', '-i', tar]);
  const ctx = join(dir, 'ubuntu');
  await mkdir(ctx);
  await writeFile(
    join(ctx, 'Dockerfile'),
    'FROM busybox\nRUN printf \'#!/bin/sh\\nexec /bin/sh "$@"\\n\' > /bin/bash && chmod +x /bin/bash\n',
  );
  for (const d of [ours, theirs]) {
    for (const tag of ['alpine:3.10', 'alpine:latest']) await d(['tag', 'busybox:latest', tag]);
    await d(['build', '-q', '-t', 'ubuntu:latest', ctx]);
  }
  process.stdout.write(`ENGINED=${engined.socket}\nDOCKERD=${dd.sock}\n`);
  const stop = async () => {
    dd.child.kill('SIGTERM');
    await new Promise((r) => dd.child.once('exit', r));
    await run('ip', ['netns', 'del', NETNS]);
    await engined.cleanup();
    await rm(dir, { recursive: true, force: true });
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((err: Error) => {
  process.stderr.write(`conformance daemons: ${err.message}\n`);
  process.exit(1);
});
