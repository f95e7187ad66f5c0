// The environment variables the daemon reads besides its options: switches that pick an older code
// path for comparison (the benchmark measures one against the other), test knobs, and locations.
// Read once at start-up (readEnvironment); `engined --help` lists them.

export interface EnvironmentSpec {
  name: string;
  /** The values it takes (the first is what an unset variable means), or a description of a free value. */
  values: readonly string[] | string;
  help: string;
}

export const ENVIRONMENT = [
  {
    name: 'ENGINE_PULL_UNPACK',
    values: ['staged', 'service'],
    help: "How pulled layers are unpacked: on worker threads while they download (staged), or by containerd's diff service after each download (service)",
  },
  {
    name: 'ENGINE_PULL_FETCH',
    values: ['worker', 'main'],
    help: 'Who receives layer downloads: the unpacking worker threads (worker) or the main thread, handing the bytes over (main)',
  },
  {
    name: 'ENGINE_PULL_HASH',
    values: ['main', 'worker'],
    help: "Who computes the digest of a layer a worker thread downloads: the daemon's main thread, beside the worker's unpacking (main), or the worker (worker)",
  },
  {
    name: 'ENGINE_PULL_WORKERS',
    values: 'a number (default 2)',
    help: 'How many worker threads pulls share for downloading and unpacking layers',
  },
  {
    name: 'ENGINE_PULL_TRIM_MS',
    values: 'milliseconds (default 200)',
    help: 'How often a stage worker hands freed memory back to the OS while a pull job runs (0: never)',
  },
  {
    name: 'ENGINE_COMMIT_DIFF',
    values: ['upper', 'service'],
    help: "How commit and the builder's layers are made: read from the snapshot's upper directory on overlayfs, or from a metadata comparison of the two trees on other snapshotters (upper), or by containerd's diff service (service)",
  },
  {
    name: 'ENGINE_DISABLE_PIGZ',
    values: ['', '1'],
    help: 'Set to keep containerd from decompressing with pigz',
  },
  {
    name: 'ENGINE_CONTAINERD_GOGC',
    values: 'a percentage (default 50)',
    help: "GOGC of the containerd the daemon starts: how far its Go heap grows between collections (Go's own default is 100)",
  },
  {
    name: 'ENGINE_RAMDISK',
    values: ['', '1'],
    help: 'Set when the root file system is a ramdisk: containers start without pivot_root',
  },
  { name: 'ENGINE_CERTS_D', values: 'a directory', help: 'Where per-registry TLS certificates are looked up (default <config>/certs.d)' },
  {
    name: 'ENGINE_TEST_JOURNAL_SOCKET',
    values: 'a socket path',
    help: "Tests only: where the journald log driver sends (instead of systemd-journald's socket)",
  },
  { name: 'ENGINE_TEST_CERT_RENEW_MS', values: 'milliseconds', help: 'Tests only: how often a cluster node renews its certificate' },
] as const satisfies readonly EnvironmentSpec[];

type SwitchName = Extract<(typeof ENVIRONMENT)[number], { values: readonly string[] }>['name'];
type ValuesOf<N extends SwitchName> = Extract<(typeof ENVIRONMENT)[number], { name: N }>['values'][number];
export type EnvironmentSwitches = { [N in SwitchName]: ValuesOf<N> };

/** The switches in force: each variable's value if it is one of its values, else its default. */
export function readEnvironment(env: NodeJS.ProcessEnv = process.env): EnvironmentSwitches {
  const out: Record<string, string> = {};
  for (const spec of ENVIRONMENT as readonly EnvironmentSpec[]) {
    if (typeof spec.values === 'string') continue;
    const v = env[spec.name];
    out[spec.name] = v !== undefined && spec.values.includes(v) ? v : spec.values[0]!;
  }
  return out as EnvironmentSwitches;
}
