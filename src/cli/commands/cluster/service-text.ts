// The docker CLI's usage lines, descriptions and flags of engine service (the commands are in
// service.ts).
import { PRETTY_INSPECT_FLAGS, type SpecText, type TextFlag } from '../spec-text.ts';

/** The words of the two rollout policies, whose six flags each are worded alike. */
interface Rollout {
  prefix: 'rollback' | 'update';
  /** "task rollbacks" / "updates" (the delay's). */
  between: string;
  /** "a rollback" / "an update". */
  during: string;
  /** "task rollback" / "task update" (the monitor's). */
  each: string;
  /** "rolled back" / "updated", "roll back" / "update" (the parallelism's). */
  done: string;
  doAll: string;
  actions: string;
}
const ROLLBACK: Rollout = {
  prefix: 'rollback',
  between: 'task rollbacks',
  during: 'a rollback',
  each: 'task rollback',
  done: 'rolled back',
  doAll: 'roll back',
  actions: '"pause", "continue"',
};
const UPDATE: Rollout = {
  prefix: 'update',
  between: 'updates',
  during: 'an update',
  each: 'task update',
  done: 'updated',
  doAll: 'update',
  actions: '"pause", "continue", "rollback"',
};

/** --rollback-* and --update-*: delay, failure action, failure ratio, monitor, order, parallelism. */
function rolloutFlags(r: Rollout): TextFlag[] {
  const noun = r.prefix === 'rollback' ? 'Rollback' : 'Update';
  return [
    { name: `${r.prefix}-delay`, kind: 'string', description: `Delay between ${r.between} (ns|us|ms|s|m|h) (default 0s)` },
    { name: `${r.prefix}-failure-action`, kind: 'string', description: `Action on ${r.prefix} failure (${r.actions}) (default "pause")` },
    { name: `${r.prefix}-max-failure-ratio`, kind: 'string', description: `Failure rate to tolerate during ${r.during} (default 0)` },
    {
      name: `${r.prefix}-monitor`,
      kind: 'string',
      description: `Duration after each ${r.each} to monitor for failure (ns|us|ms|s|m|h) (default 5s)`,
    },
    { name: `${r.prefix}-order`, kind: 'string', description: `${noun} order ("start-first", "stop-first") (default "stop-first")` },
    {
      name: `${r.prefix}-parallelism`,
      kind: 'int',
      description: `Maximum number of tasks ${r.done} simultaneously (0 to ${r.doAll} all at once) (default 1)`,
    },
  ];
}

const CREATE_FLAGS: TextFlag[] = [
  { name: 'cap-add', kind: 'list', description: 'Add Linux capabilities' },
  { name: 'cap-drop', kind: 'list', description: 'Drop Linux capabilities' },
  { name: 'config', kind: 'list', description: 'Specify configurations to expose to the service' },
  { name: 'constraint', kind: 'list', description: 'Placement constraints' },
  { name: 'container-label', kind: 'list', description: 'Container labels' },
  { name: 'credential-spec', kind: 'string', description: 'Credential spec for managed service account (Windows only)' },
  { name: 'detach', short: 'd', kind: 'bool', description: 'Exit immediately instead of waiting for the service to converge' },
  { name: 'dns', kind: 'list', description: 'Set custom DNS servers' },
  { name: 'dns-option', kind: 'list', description: 'Set DNS options' },
  { name: 'dns-search', kind: 'list', description: 'Set custom DNS search domains' },
  { name: 'endpoint-mode', kind: 'string', description: 'Endpoint mode (vip or dnsrr) (default \"vip\")' },
  { name: 'entrypoint', kind: 'string', description: 'Overwrite the default ENTRYPOINT of the image' },
  { name: 'env', short: 'e', kind: 'list', description: 'Set environment variables' },
  { name: 'env-file', kind: 'list', description: 'Read in a file of environment variables' },
  { name: 'generic-resource', kind: 'list', description: 'User defined resources' },
  { name: 'group', kind: 'list', description: 'Set one or more supplementary user groups for the container' },
  { name: 'health-cmd', kind: 'string', description: 'Command to run to check health' },
  { name: 'health-interval', kind: 'string', description: 'Time between running the check (ms|s|m|h)' },
  { name: 'health-retries', kind: 'int', description: 'Consecutive failures needed to report unhealthy' },
  { name: 'health-start-interval', kind: 'string', description: 'Time between running the check during the start period (ms|s|m|h)' },
  {
    name: 'health-start-period',
    kind: 'string',
    description: 'Start period for the container to initialize before counting retries towards unstable (ms|s|m|h)',
  },
  { name: 'health-timeout', kind: 'string', description: 'Maximum time to allow one check to run (ms|s|m|h)' },
  { name: 'host', kind: 'list', description: 'Set one or more custom host-to-IP mappings (host:ip)' },
  { name: 'hostname', kind: 'string', description: 'Container hostname' },
  { name: 'init', kind: 'bool', description: 'Use an init inside each service container to forward signals and reap processes' },
  { name: 'isolation', kind: 'string', description: 'Service container isolation mode' },
  { name: 'label', short: 'l', kind: 'list', description: 'Service labels' },
  { name: 'limit-cpu', kind: 'string', description: 'Limit CPUs' },
  { name: 'limit-memory', kind: 'string', description: 'Limit Memory' },
  { name: 'limit-pids', kind: 'int', description: 'Limit maximum number of processes (default 0 = unlimited)' },
  { name: 'log-driver', kind: 'string', description: 'Logging driver for service' },
  { name: 'log-opt', kind: 'list', description: 'Logging driver options' },
  { name: 'max-concurrent', kind: 'int', description: 'Number of job tasks to run concurrently (default equal to --replicas)' },
  {
    name: 'mode',
    kind: 'string',
    description: 'Service mode (\"replicated\", \"global\", \"replicated-job\", \"global-job\") (default \"replicated\")',
  },
  { name: 'mount', kind: 'list', description: 'Attach a filesystem mount to the service' },
  { name: 'name', kind: 'string', description: 'Service name' },
  { name: 'network', kind: 'list', description: 'Network attachments' },
  { name: 'no-healthcheck', kind: 'bool', description: 'Disable any container-specified HEALTHCHECK' },
  { name: 'no-resolve-image', kind: 'bool', description: 'Do not query the registry to resolve image digest and supported platforms' },
  { name: 'oom-score-adj', kind: 'int', description: "Tune host's OOM preferences (-1000 to 1000)" },
  { name: 'placement-pref', kind: 'list', description: 'Add a placement preference' },
  { name: 'publish', short: 'p', kind: 'list', description: 'Publish a port as a node port' },
  { name: 'quiet', short: 'q', kind: 'bool', description: 'Suppress progress output' },
  { name: 'read-only', kind: 'bool', description: "Mount the container's root filesystem as read only" },
  { name: 'replicas', kind: 'int', description: 'Number of tasks' },
  { name: 'replicas-max-per-node', kind: 'int', description: 'Maximum number of tasks per node (default 0 = unlimited)' },
  { name: 'reserve-cpu', kind: 'string', description: 'Reserve CPUs' },
  { name: 'reserve-memory', kind: 'string', description: 'Reserve Memory' },
  {
    name: 'restart-condition',
    kind: 'string',
    description: 'Restart when condition is met (\"none\", \"on-failure\", \"any\") (default \"any\")',
  },
  { name: 'restart-delay', kind: 'string', description: 'Delay between restart attempts (ns|us|ms|s|m|h) (default 5s)' },
  { name: 'restart-max-attempts', kind: 'int', description: 'Maximum number of restarts before giving up' },
  { name: 'restart-window', kind: 'string', description: 'Window used to evaluate the restart policy (ns|us|ms|s|m|h)' },
  ...rolloutFlags(ROLLBACK),
  { name: 'secret', kind: 'list', description: 'Specify secrets to expose to the service' },
  {
    name: 'stop-grace-period',
    kind: 'string',
    description: 'Time to wait before force killing a container (ns|us|ms|s|m|h) (default 10s)',
  },
  { name: 'stop-signal', kind: 'string', description: 'Signal to stop the container' },
  { name: 'sysctl', kind: 'list', description: 'Sysctl options' },
  { name: 'tty', short: 't', kind: 'bool', description: 'Allocate a pseudo-TTY' },
  { name: 'ulimit', kind: 'list', description: 'Ulimit options (default [])' },
  ...rolloutFlags(UPDATE),
  { name: 'user', short: 'u', kind: 'string', description: 'Username or UID (format: <name|uid>[:<group|gid>])' },
  { name: 'with-registry-auth', kind: 'bool', description: 'Send registry authentication details to swarm agents' },
  { name: 'workdir', short: 'w', kind: 'string', description: 'Working directory inside the container' },
];

/**
 * `service update` repeats most of `service create`'s flags; docker prints them without the
 * "(default …)" note (an update changes only what it is given). A name stands for create's row so
 * read; an object is a flag of update's own or worded otherwise.
 */
function updateFlags(rows: readonly (string | TextFlag)[]): TextFlag[] {
  return rows.map((r) => {
    if (typeof r !== 'string') return r;
    const c = CREATE_FLAGS.find((f) => f.name === r);
    if (!c) throw new Error(`service update: no create flag ${r}`);
    return { ...c, description: c.description.replace(/ \(default [^)]*\)$/, '') };
  });
}

export const SERVICE_TEXT = {
  create: {
    usage: '[OPTIONS] IMAGE [COMMAND] [ARG...]',
    description: 'Create a new service',
    flags: CREATE_FLAGS,
  },
  update: {
    usage: '[OPTIONS] SERVICE',
    description: 'Update a service',
    flags: updateFlags([
      { name: 'args', kind: 'string', description: 'Service command args' },
      'cap-add',
      'cap-drop',
      { name: 'config-add', kind: 'list', description: 'Add or update a config file on a service' },
      { name: 'config-rm', kind: 'list', description: 'Remove a configuration file' },
      { name: 'constraint-add', kind: 'list', description: 'Add or update a placement constraint' },
      { name: 'constraint-rm', kind: 'list', description: 'Remove a constraint' },
      { name: 'container-label-add', kind: 'list', description: 'Add or update a container label' },
      { name: 'container-label-rm', kind: 'list', description: 'Remove a container label by its key' },
      'credential-spec',
      'detach',
      { name: 'dns-add', kind: 'list', description: 'Add or update a custom DNS server' },
      { name: 'dns-option-add', kind: 'list', description: 'Add or update a DNS option' },
      { name: 'dns-option-rm', kind: 'list', description: 'Remove a DNS option' },
      { name: 'dns-rm', kind: 'list', description: 'Remove a custom DNS server' },
      { name: 'dns-search-add', kind: 'list', description: 'Add or update a custom DNS search domain' },
      { name: 'dns-search-rm', kind: 'list', description: 'Remove a DNS search domain' },
      'endpoint-mode',
      'entrypoint',
      { name: 'env-add', kind: 'list', description: 'Add or update an environment variable' },
      { name: 'env-rm', kind: 'list', description: 'Remove an environment variable' },
      { name: 'force', kind: 'bool', description: 'Force update even if no changes require it' },
      { name: 'generic-resource-add', kind: 'list', description: 'Add a Generic resource' },
      { name: 'generic-resource-rm', kind: 'list', description: 'Remove a Generic resource' },
      { name: 'group-add', kind: 'list', description: 'Add an additional supplementary user group to the container' },
      { name: 'group-rm', kind: 'list', description: 'Remove a previously added supplementary user group from the container' },
      'health-cmd',
      'health-interval',
      'health-retries',
      'health-start-interval',
      'health-start-period',
      'health-timeout',
      { name: 'host-add', kind: 'list', description: 'Add a custom host-to-IP mapping ("host:ip")' },
      { name: 'host-rm', kind: 'list', description: 'Remove a custom host-to-IP mapping ("host:ip")' },
      'hostname',
      { name: 'image', kind: 'string', description: 'Service image tag' },
      'init',
      'isolation',
      { name: 'label-add', kind: 'list', description: 'Add or update a service label' },
      { name: 'label-rm', kind: 'list', description: 'Remove a label by its key' },
      'limit-cpu',
      'limit-memory',
      { name: 'limit-pids', kind: 'int', description: 'Limit maximum number of processes (default 0 = unlimited)' },
      'log-driver',
      'log-opt',
      { name: 'max-concurrent', kind: 'int', description: 'Number of job tasks to run concurrently (default equal to --replicas)' },
      { name: 'mount-add', kind: 'list', description: 'Add or update a mount on a service' },
      { name: 'mount-rm', kind: 'list', description: 'Remove a mount by its target path' },
      { name: 'network-add', kind: 'list', description: 'Add a network' },
      { name: 'network-rm', kind: 'list', description: 'Remove a network' },
      'no-healthcheck',
      'no-resolve-image',
      'oom-score-adj',
      { name: 'placement-pref-add', kind: 'list', description: 'Add a placement preference' },
      { name: 'placement-pref-rm', kind: 'list', description: 'Remove a placement preference' },
      { name: 'publish-add', kind: 'list', description: 'Add or update a published port' },
      { name: 'publish-rm', kind: 'list', description: 'Remove a published port by its target port' },
      'quiet',
      'read-only',
      'replicas',
      { name: 'replicas-max-per-node', kind: 'int', description: 'Maximum number of tasks per node (default 0 = unlimited)' },
      'reserve-cpu',
      'reserve-memory',
      'restart-condition',
      'restart-delay',
      'restart-max-attempts',
      'restart-window',
      { name: 'rollback', kind: 'bool', description: 'Rollback to previous specification' },
      'rollback-delay',
      'rollback-failure-action',
      'rollback-max-failure-ratio',
      'rollback-monitor',
      'rollback-order',
      'rollback-parallelism',
      { name: 'secret-add', kind: 'list', description: 'Add or update a secret on a service' },
      { name: 'secret-rm', kind: 'list', description: 'Remove a secret' },
      'stop-grace-period',
      'stop-signal',
      { name: 'sysctl-add', kind: 'list', description: 'Add or update a Sysctl option' },
      { name: 'sysctl-rm', kind: 'list', description: 'Remove a Sysctl option' },
      'tty',
      { name: 'ulimit-add', kind: 'list', description: 'Add or update a ulimit option (default [])' },
      { name: 'ulimit-rm', kind: 'list', description: 'Remove a ulimit option' },
      'update-delay',
      'update-failure-action',
      'update-max-failure-ratio',
      'update-monitor',
      'update-order',
      'update-parallelism',
      'user',
      'with-registry-auth',
      'workdir',
    ]),
  },
  scale: {
    usage: 'SERVICE=REPLICAS [SERVICE=REPLICAS...]',
    description: 'Scale one or multiple replicated services',
    flags: [{ name: 'detach', short: 'd', kind: 'bool', description: 'Exit immediately instead of waiting for the service to converge' }],
  },
  ps: {
    usage: '[OPTIONS] SERVICE [SERVICE...]',
    description: 'List the tasks of one or more services',
    flags: [
      { name: 'filter', short: 'f', kind: 'list', description: 'Filter output based on conditions provided' },
      { name: 'format', kind: 'string', description: 'Pretty-print tasks using a Go template' },
      { name: 'no-resolve', kind: 'bool', description: 'Do not map IDs to Names' },
      { name: 'no-trunc', kind: 'bool', description: 'Do not truncate output' },
      { name: 'quiet', short: 'q', kind: 'bool', description: 'Only display task IDs' },
    ],
  },
  logs: {
    usage: '[OPTIONS] SERVICE|TASK',
    description: 'Fetch the logs of a service or task',
    flags: [
      { name: 'details', kind: 'bool', description: 'Show extra details provided to logs' },
      { name: 'follow', short: 'f', kind: 'bool', description: 'Follow log output' },
      { name: 'no-resolve', kind: 'bool', description: 'Do not map IDs to Names in output' },
      { name: 'no-task-ids', kind: 'bool', description: 'Do not include task IDs in output' },
      { name: 'no-trunc', kind: 'bool', description: 'Do not truncate output' },
      { name: 'raw', kind: 'bool', description: 'Do not neatly format logs' },
      {
        name: 'since',
        kind: 'string',
        description: 'Show logs since timestamp (e.g. \"2013-01-02T13:23:37Z\") or relative (e.g. \"42m\" for 42 minutes)',
      },
      { name: 'tail', short: 'n', kind: 'string', description: 'Number of lines to show from the end of the logs (default \"all\")' },
      { name: 'timestamps', short: 't', kind: 'bool', description: 'Show timestamps' },
    ],
  },
  rollback: {
    usage: '[OPTIONS] SERVICE',
    description: "Revert changes to a service's configuration",
    flags: [
      { name: 'detach', short: 'd', kind: 'bool', description: 'Exit immediately instead of waiting for the service to converge' },
      { name: 'quiet', short: 'q', kind: 'bool', description: 'Suppress progress output' },
    ],
  },
  inspect: {
    usage: '[OPTIONS] SERVICE [SERVICE...]',
    description: 'Display detailed information on one or more services',
    flags: PRETTY_INSPECT_FLAGS,
  },
  ls: {
    usage: '[OPTIONS]',
    description: 'List services',
    aliases: ['list'],
    flags: [
      { name: 'filter', short: 'f', kind: 'list', description: 'Filter output based on conditions provided' },
      {
        name: 'format',
        kind: 'string',
        description: 'Format output using a custom template',
      },
      { name: 'quiet', short: 'q', kind: 'bool', description: 'Only display IDs' },
    ],
  },
  rm: {
    usage: 'SERVICE [SERVICE...]',
    description: 'Remove one or more services',
    aliases: ['remove'],
    flags: [],
  },
} satisfies Record<string, SpecText>;
