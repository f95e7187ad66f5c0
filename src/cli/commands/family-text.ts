// The docker CLI's usage lines, descriptions and flags of engine secret, config, stack, plugin and
// builder (the commands are in secrets.ts, stack.ts, plugins.ts and builder.ts).
import { PRETTY_INSPECT_FLAGS, type SpecText } from './spec-text.ts';

/** ls, inspect and rm of secrets and configs: the same words but for the noun. */
function storedObjectText(noun: 'secret' | 'config') {
  const NAME = noun.toUpperCase();
  return {
    ls: {
      usage: '[OPTIONS]',
      description: `List ${noun}s`,
      aliases: ['list'],
      flags: [
        { name: 'filter', short: 'f', kind: 'list', description: 'Filter output based on conditions provided' },
        { name: 'format', kind: 'string', description: 'Format output using a custom template' },
        { name: 'quiet', short: 'q', kind: 'bool', description: 'Only display IDs' },
      ],
    },
    inspect: {
      usage: `[OPTIONS] ${NAME} [${NAME}...]`,
      description: `Display detailed information on one or more ${noun}s`,
      flags: PRETTY_INSPECT_FLAGS,
    },
    rm: {
      usage: `${NAME} [${NAME}...]`,
      description: `Remove one or more ${noun}s`,
      aliases: ['remove'],
      flags: [],
    },
  } satisfies Record<string, SpecText>;
}

export const SECRET_TEXT = {
  create: {
    usage: '[OPTIONS] SECRET [file|-]',
    description: 'Create a secret from a file or STDIN as content',
    flags: [
      { name: 'driver', short: 'd', kind: 'string', description: 'Secret driver' },
      { name: 'label', short: 'l', kind: 'list', description: 'Secret labels' },
      { name: 'template-driver', kind: 'string', description: 'Template driver' },
    ],
  },
  ...storedObjectText('secret'),
} satisfies Record<string, SpecText>;

export const CONFIG_TEXT = {
  create: {
    usage: '[OPTIONS] CONFIG file|-',
    description: 'Create a config from a file or STDIN',
    flags: [
      { name: 'label', short: 'l', kind: 'list', description: 'Config labels' },
      { name: 'template-driver', kind: 'string', description: 'Template driver' },
    ],
  },
  ...storedObjectText('config'),
} satisfies Record<string, SpecText>;

export const STACK_TEXT = {
  deploy: {
    usage: '[OPTIONS] STACK',
    description: 'Deploy a new stack or update an existing stack',
    aliases: ['up'],
    flags: [
      { name: 'compose-file', short: 'c', kind: 'list', description: 'Path to a Compose file, or \"-\" to read from stdin' },
      {
        name: 'detach',
        short: 'd',
        kind: 'bool',
        description: 'Exit immediately instead of waiting for the stack services to converge (default true)',
      },
      { name: 'prune', kind: 'bool', description: 'Prune services that are no longer referenced' },
      { name: 'quiet', short: 'q', kind: 'bool', description: 'Suppress progress output' },
      {
        name: 'resolve-image',
        kind: 'string',
        description:
          'Query the registry to resolve image digest and supported platforms (\"always\", \"changed\", \"never\") (default \"always\")',
      },
      { name: 'with-registry-auth', kind: 'bool', description: 'Send registry authentication details to Swarm agents' },
    ],
  },
  ls: {
    usage: '[OPTIONS]',
    description: 'List stacks',
    aliases: ['list'],
    flags: [
      {
        name: 'format',
        kind: 'string',
        description: 'Format output using a custom template',
      },
    ],
  },
  ps: {
    usage: '[OPTIONS] STACK',
    description: 'List the tasks in the stack',
    flags: [
      { name: 'filter', short: 'f', kind: 'list', description: 'Filter output based on conditions provided' },
      {
        name: 'format',
        kind: 'string',
        description: 'Format output using a custom template',
      },
      { name: 'no-resolve', kind: 'bool', description: 'Do not map IDs to Names' },
      { name: 'no-trunc', kind: 'bool', description: 'Do not truncate output' },
      { name: 'quiet', short: 'q', kind: 'bool', description: 'Only display task IDs' },
    ],
  },
  services: {
    usage: '[OPTIONS] STACK',
    description: 'List the services in the stack',
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
    usage: '[OPTIONS] STACK [STACK...]',
    description: 'Remove one or more stacks',
    aliases: ['remove', 'down'],
    flags: [{ name: 'detach', short: 'd', kind: 'bool', description: 'Do not wait for stack removal (default true)' }],
  },
  config: {
    usage: '[OPTIONS]',
    description: 'Outputs the final config file, after doing merges and interpolations',
    flags: [
      { name: 'compose-file', short: 'c', kind: 'list', description: 'Path to a Compose file, or \"-\" to read from stdin' },
      { name: 'skip-interpolation', kind: 'bool', description: 'Skip interpolation and output only merged config' },
    ],
  },
} satisfies Record<string, SpecText>;

export const PLUGIN_TEXT = {
  install: {
    usage: '[OPTIONS] PLUGIN [KEY=VALUE...]',
    description: 'Install a plugin',
    flags: [
      { name: 'alias', kind: 'string', description: 'Local name for plugin' },
      { name: 'disable', kind: 'bool', description: 'Do not enable the plugin on install' },
      { name: 'disable-content-trust', kind: 'bool', description: 'Skip image verification (default true)' },
      { name: 'grant-all-permissions', kind: 'bool', description: 'Grant all permissions necessary to run the plugin' },
    ],
  },
  create: {
    usage: '[OPTIONS] PLUGIN PLUGIN-DATA-DIR',
    description: 'Create a plugin from a rootfs and configuration. Plugin data directory must contain config.json and rootfs directory.',
    flags: [{ name: 'compress', kind: 'bool', description: 'Compress the context using gzip' }],
  },
  enable: {
    usage: '[OPTIONS] PLUGIN',
    description: 'Enable a plugin',
    flags: [{ name: 'timeout', kind: 'int', description: 'HTTP client timeout (in seconds) (default 30)' }],
  },
  disable: {
    usage: '[OPTIONS] PLUGIN',
    description: 'Disable a plugin',
    flags: [{ name: 'force', short: 'f', kind: 'bool', description: 'Force the disable of an active plugin' }],
  },
  set: {
    usage: 'PLUGIN KEY=VALUE [KEY=VALUE...]',
    description: 'Change settings for a plugin',
    flags: [],
  },
  push: {
    usage: '[OPTIONS] PLUGIN[:TAG]',
    description: 'Push a plugin to a registry',
    flags: [{ name: 'disable-content-trust', kind: 'bool', description: 'Skip image signing (default true)' }],
  },
  rm: {
    usage: '[OPTIONS] PLUGIN [PLUGIN...]',
    description: 'Remove one or more plugins',
    aliases: ['remove'],
    flags: [{ name: 'force', short: 'f', kind: 'bool', description: 'Force the removal of an active plugin' }],
  },
  upgrade: {
    usage: '[OPTIONS] PLUGIN [REMOTE]',
    description: 'Upgrade an existing plugin',
    flags: [
      { name: 'disable-content-trust', kind: 'bool', description: 'Skip image verification (default true)' },
      { name: 'grant-all-permissions', kind: 'bool', description: 'Grant all permissions necessary to run the plugin' },
      { name: 'skip-remote-check', kind: 'bool', description: 'Do not check if specified remote plugin matches existing plugin image' },
    ],
  },
  ls: {
    usage: '[OPTIONS]',
    description: 'List plugins',
    aliases: ['list'],
    flags: [
      { name: 'filter', short: 'f', kind: 'list', description: 'Provide filter values (e.g. \"enabled=true\")' },
      {
        name: 'format',
        kind: 'string',
        description: 'Format output using a custom template',
      },
      { name: 'no-trunc', kind: 'bool', description: "Don't truncate output" },
      { name: 'quiet', short: 'q', kind: 'bool', description: 'Only display plugin IDs' },
    ],
  },
  inspect: {
    usage: '[OPTIONS] PLUGIN [PLUGIN...]',
    description: 'Display detailed information on one or more plugins',
    flags: [
      {
        name: 'format',
        short: 'f',
        kind: 'string',
        description: 'Format output using a custom template',
      },
    ],
  },
} satisfies Record<string, SpecText>;

export const BUILDER_TEXT = {
  prune: {
    usage: '',
    description: 'Remove build cache',
    flags: [
      { name: 'all', short: 'a', kind: 'bool', description: 'Remove all unused build cache, not just dangling ones' },
      { name: 'filter', kind: 'list', description: 'Provide filter values (e.g. \"until=24h\")' },
      { name: 'force', short: 'f', kind: 'bool', description: 'Do not prompt for confirmation' },
      { name: 'keep-storage', kind: 'string', description: 'Amount of disk space to keep for cache' },
    ],
  },
} satisfies Record<string, SpecText>;
