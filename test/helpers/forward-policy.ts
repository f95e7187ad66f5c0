// The FORWARD policy of a fresh host. At boot net.ipv4.ip_forward is 0; the first daemon turns it on
// and sets the policy to DROP, as dockerd does. Tests run in that state whatever the machine was
// left in: the harness sets DROP in a daemon's network namespace before it starts (never ACCEPT),
// so networking that only works under ACCEPT fails here as it would on a fresh host.
import { execFile } from 'node:child_process';

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) =>
    execFile(cmd, args, (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr })),
  );
}

function inNs(netns: string | undefined, cmd: string, args: string[]): [string, string[]] {
  return netns ? ['ip', ['netns', 'exec', netns, cmd, ...args]] : [cmd, args];
}

/** The FORWARD chain's policy ('DROP', 'ACCEPT') in the host's or a named namespace. */
export async function forwardPolicy(netns?: string, tool = 'iptables'): Promise<string> {
  const [cmd, args] = inNs(netns, tool, ['-w', '-S', 'FORWARD']);
  const r = await run(cmd, args);
  if (r.code !== 0) throw new Error(`${tool} -S FORWARD: ${r.stderr}`);
  const m = /^-P FORWARD (\S+)$/m.exec(r.stdout);
  if (!m) throw new Error(`${tool} -S FORWARD printed no policy: ${r.stdout}`);
  return m[1]!;
}

/** Sets the FORWARD policy to DROP (IPv4, and IPv6 where ip6tables works) and checks it took. */
export async function forwardDrop(netns?: string): Promise<void> {
  const [cmd, args] = inNs(netns, 'iptables', ['-w', '-P', 'FORWARD', 'DROP']);
  const r = await run(cmd, args);
  if (r.code !== 0) throw new Error(`iptables -P FORWARD DROP: ${r.stderr}`);
  const policy = await forwardPolicy(netns);
  if (policy !== 'DROP') throw new Error(`the FORWARD policy is ${policy} after setting DROP`);
  const [cmd6, args6] = inNs(netns, 'ip6tables', ['-w', '-P', 'FORWARD', 'DROP']);
  await run(cmd6, args6); // its failure (no ip6tables, no IPv6) leaves nothing to set
}
