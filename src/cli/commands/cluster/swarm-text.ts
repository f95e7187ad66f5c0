// The docker CLI's usage lines, descriptions and flags of engine swarm and engine node (the
// interface facts help and completion print; the commands are in swarm.ts and node.ts).
import { PRETTY_INSPECT_FLAGS, type SpecText, type TextFlag } from '../spec-text.ts';

/** Rows that `swarm init` shares with `join`, `update` and `ca`, worded once. */
const SHARED = [
  { name: 'advertise-addr', kind: 'string', description: 'Advertised address (format: \"<ip|interface>[:port]\")' },
  {
    name: 'availability',
    kind: 'string',
    description: 'Availability of the node (\"active\", \"pause\", \"drain\") (default \"active\")',
  },
  { name: 'cert-expiry', kind: 'string', description: 'Validity period for node certificates (ns|us|ms|s|m|h) (default 2160h0m0s)' },
  {
    name: 'data-path-addr',
    kind: 'string',
    description: 'Address or interface to use for data path traffic (format: \"<ip|interface>\")',
  },
  { name: 'dispatcher-heartbeat', kind: 'string', description: 'Dispatcher heartbeat period (ns|us|ms|s|m|h) (default 5s)' },
  { name: 'external-ca', kind: 'list', description: 'Specifications of one or more certificate signing endpoints' },
  { name: 'listen-addr', kind: 'string', description: 'Listen address (format: \"<ip|interface>[:port]\") (default 0.0.0.0:2377)' },
  { name: 'max-snapshots', kind: 'int', description: 'Number of additional Raft snapshots to retain' },
  { name: 'snapshot-interval', kind: 'int', description: 'Number of log entries between Raft snapshots (default 10000)' },
  { name: 'task-history-limit', kind: 'int', description: 'Task history retention limit (default 5)' },
] as const satisfies readonly TextFlag[];
const row = (name: (typeof SHARED)[number]['name']): TextFlag => SHARED.find((f) => f.name === name)!;

export const SWARM_TEXT = {
  init: {
    usage: '[OPTIONS]',
    description: 'Initialize a swarm',
    flags: [
      row('advertise-addr'),
      { name: 'autolock', kind: 'bool', description: 'Enable manager autolocking (requiring an unlock key to start a stopped manager)' },
      row('availability'),
      row('cert-expiry'),
      row('data-path-addr'),
      {
        name: 'data-path-port',
        kind: 'string',
        description:
          'Port number to use for data path traffic (1024 - 49151). If no value is set or is set to 0, the default port (4789) is used.',
      },
      { name: 'default-addr-pool', kind: 'list', description: 'default address pool in CIDR format (default [])' },
      { name: 'default-addr-pool-mask-length', kind: 'string', description: 'default address pool subnet mask length (default 24)' },
      row('dispatcher-heartbeat'),
      row('external-ca'),
      { name: 'force-new-cluster', kind: 'bool', description: 'Force create a new cluster from current state' },
      row('listen-addr'),
      row('max-snapshots'),
      row('snapshot-interval'),
      row('task-history-limit'),
    ],
  },
  join: {
    usage: '[OPTIONS] HOST:PORT',
    description: 'Join a swarm as a node and/or manager',
    flags: [
      row('advertise-addr'),
      row('availability'),
      row('data-path-addr'),
      row('listen-addr'),
      { name: 'token', kind: 'string', description: 'Token for entry into the swarm' },
    ],
  },
  'join-token': {
    usage: '[OPTIONS] (worker|manager)',
    description: 'Manage join tokens',
    flags: [
      { name: 'quiet', short: 'q', kind: 'bool', description: 'Only display token' },
      { name: 'rotate', kind: 'bool', description: 'Rotate join token' },
    ],
  },
  leave: {
    usage: '[OPTIONS]',
    description: 'Leave the swarm',
    flags: [{ name: 'force', short: 'f', kind: 'bool', description: 'Force this node to leave the swarm, ignoring warnings' }],
  },
  update: {
    usage: '[OPTIONS]',
    description: 'Update the swarm',
    flags: [
      { name: 'autolock', kind: 'bool', description: 'Change manager autolocking setting (true|false)' },
      row('cert-expiry'),
      row('dispatcher-heartbeat'),
      row('external-ca'),
      row('max-snapshots'),
      row('snapshot-interval'),
      row('task-history-limit'),
    ],
  },
  unlock: {
    usage: '',
    description: 'Unlock swarm',
    flags: [],
  },
  'unlock-key': {
    usage: '[OPTIONS]',
    description: 'Manage the unlock key',
    flags: [
      { name: 'quiet', short: 'q', kind: 'bool', description: 'Only display token' },
      { name: 'rotate', kind: 'bool', description: 'Rotate unlock key' },
    ],
  },
  ca: {
    usage: '[OPTIONS]',
    description: 'Display and rotate the root CA',
    flags: [
      { name: 'ca-cert', kind: 'string', description: 'Path to the PEM-formatted root CA certificate to use for the new cluster' },
      { name: 'ca-key', kind: 'string', description: 'Path to the PEM-formatted root CA key to use for the new cluster' },
      row('cert-expiry'),
      { name: 'detach', short: 'd', kind: 'bool', description: 'Exit immediately instead of waiting for the root rotation to converge' },
      row('external-ca'),
      { name: 'quiet', short: 'q', kind: 'bool', description: 'Suppress progress output' },
      {
        name: 'rotate',
        kind: 'bool',
        description: 'Rotate the swarm CA - if no certificate or key are provided, new ones will be generated',
      },
    ],
  },
} satisfies Record<string, SpecText>;

export const NODE_TEXT = {
  ls: {
    usage: '[OPTIONS]',
    description: 'List nodes in the swarm',
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
  ps: {
    usage: '[OPTIONS] [NODE...]',
    description: 'List tasks running on one or more nodes, defaults to current node',
    flags: [
      { name: 'filter', short: 'f', kind: 'list', description: 'Filter output based on conditions provided' },
      { name: 'format', kind: 'string', description: 'Pretty-print tasks using a Go template' },
      { name: 'no-resolve', kind: 'bool', description: 'Do not map IDs to Names' },
      { name: 'no-trunc', kind: 'bool', description: 'Do not truncate output' },
      { name: 'quiet', short: 'q', kind: 'bool', description: 'Only display task IDs' },
    ],
  },
  inspect: {
    usage: '[OPTIONS] self|NODE [NODE...]',
    description: 'Display detailed information on one or more nodes',
    flags: PRETTY_INSPECT_FLAGS,
  },
  update: {
    usage: '[OPTIONS] NODE',
    description: 'Update a node',
    flags: [
      { name: 'availability', kind: 'string', description: 'Availability of the node (\"active\", \"pause\", \"drain\")' },
      { name: 'label-add', kind: 'list', description: 'Add or update a node label (\"key=value\")' },
      { name: 'label-rm', kind: 'list', description: 'Remove a node label if exists' },
      { name: 'role', kind: 'string', description: 'Role of the node (\"worker\", \"manager\")' },
    ],
  },
  promote: {
    usage: 'NODE [NODE...]',
    description: 'Promote one or more nodes to manager in the swarm',
    flags: [],
  },
  demote: {
    usage: 'NODE [NODE...]',
    description: 'Demote one or more nodes from manager in the swarm',
    flags: [],
  },
  rm: {
    usage: '[OPTIONS] NODE [NODE...]',
    description: 'Remove one or more nodes from the swarm',
    aliases: ['remove'],
    flags: [{ name: 'force', short: 'f', kind: 'bool', description: 'Force remove a node from the swarm' }],
  },
} satisfies Record<string, SpecText>;
