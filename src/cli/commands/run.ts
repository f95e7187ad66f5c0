// engine run / create / start / attach / exec: the commands that create or enter processes.
// run follows the docker CLI's order: create (pulling the image when it is missing), attach
// before start so no output is lost, wait registered before start (condition "removed" with
// --rm), start, then copy the streams and exit with the container's status. Exit statuses as
// docker's: 125 daemon or usage error, 126 command not executable, 127 command not found.
import { existsSync, writeFileSync } from 'node:fs';
import { EngineError } from '../../client/errors.ts';
import type { ContainerCreateBody } from '../../types/container-api.ts';
import { flagsOf } from '../args.ts';
import type { CommandSpec, FlagHelp } from '../command-spec.ts';
import { describedRunFlags } from '../run-flag-help.ts';
import { ExitError, type Cli } from '../cli.ts';
import { registryKey } from '../config.ts';
import { renderProgress } from '../progress.ts';
import { createBody, CREATE_FLAGS, RUN_FLAGS } from '../run-options.ts';
import { pump, terminalSize } from '../stdio.ts';
import { realStderr, realStdout } from '../out.ts';

const PROXIED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];

/** Forwards the usual signals to the container instead of letting them end the CLI. */
function proxySignals(kill: (sig: string) => Promise<void>): void {
  for (const sig of PROXIED)
    process.on(sig, () => {
      kill(sig).catch(() => {
        // the container may have exited meanwhile: nothing left to signal
      });
    });
}

/** The exit status docker gives a failed start, from the runtime's message. */
export function startErrorStatus(message: string): number {
  if (/executable file not found|no such file or directory|system cannot find the file/i.test(message)) return 127;
  if (/permission denied/i.test(message)) return 126;
  return 125;
}

async function pullImage(cli: Cli, image: string, platform: string | undefined, toStderr: boolean): Promise<void> {
  const auth = cli.config.credentials(registryKey(image));
  await renderProgress(cli.api.images.pull(image, { platform, auth }), toStderr ? realStderr() : realStdout());
}

async function createContainer(
  cli: Cli,
  body: ContainerCreateBody,
  name: string | undefined,
  platform: string | undefined,
  pull: string | undefined,
  cidfile?: string,
): Promise<string> {
  // --cidfile: refused when the file exists (another container may own it), written once created.
  if (cidfile && existsSync(cidfile))
    throw new ExitError(125, `container ID file found, make sure the other container isn't running or delete ${cidfile}`);
  const id = await createOrPull(cli, body, name, platform, pull);
  if (cidfile) writeFileSync(cidfile, id);
  return id;
}

async function createOrPull(
  cli: Cli,
  body: ContainerCreateBody,
  name: string | undefined,
  platform: string | undefined,
  pull: string | undefined,
): Promise<string> {
  const image = body.Image!;
  const withTag = /[:@][^/]*$/.test(image) ? image : `${image}:latest`;
  if (pull === 'always') await pullImage(cli, withTag, platform, true);
  try {
    const r = await cli.api.containers.create(body, { name, platform });
    for (const w of r.Warnings ?? []) cli.err(`WARNING: ${w}\n`);
    return r.Id;
  } catch (e) {
    if (!(e instanceof EngineError && e.status === 404 && /no such image/i.test(e.message)) || pull === 'never') throw e;
    cli.err(`Unable to find image '${withTag}' locally\n`);
    await pullImage(cli, withTag, platform, true);
    const r = await cli.api.containers.create(body, { name, platform });
    return r.Id;
  }
}

export async function create(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('create', argv, CREATE_FLAGS, { interspersed: false, min: 1 });
  const { body, name, platform } = createBody(f, true);
  const id = await createContainer(cli, body, name, platform, f.str('pull'), f.str('cidfile'));
  cli.out(`${id}\n`);
  return 0;
}

export async function run(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('run', argv, RUN_FLAGS, { interspersed: false, min: 1 });
  const detached = f.bool('detach');
  const { body, name, platform } = createBody(f, detached);
  const tty = !!body.Tty;
  // As docker: only a run that attaches stdin needs a terminal (`run -dit` does not attach).
  if (!detached && tty && f.bool('interactive') && !process.stdin.isTTY) throw new ExitError(1, 'the input device is not a TTY');
  const id = await createContainer(cli, body, name, platform, f.str('pull'), f.str('cidfile'));
  const api = cli.api.containers;
  if (detached) {
    try {
      await api.start(id);
    } catch (e) {
      throw new ExitError(startErrorStatus((e as Error).message), `Error response from daemon: ${(e as Error).message}`);
    }
    cli.out(`${id}\n`);
    return 0;
  }
  const detachKeys = f.str('detach-keys') ?? cli.config.data.detachKeys;
  const streams = { stdout: !!body.AttachStdout, stderr: !!body.AttachStderr, stream: true, detachKeys };
  // Without stdin the connection is only read: attachOutput() (Bun's own socket in the compiled CLI).
  const [attached, { result: waited }] = await Promise.all([
    body.AttachStdin ? api.attach(id, { stdin: true, ...streams }) : api.attachOutput(id, streams),
    api.waitRegistered(id, { condition: body.HostConfig?.AutoRemove ? 'removed' : 'next-exit' }),
  ]);
  waited.catch(() => {
    // reported below when awaited; a start failure makes it moot
  });
  try {
    await api.start(id);
  } catch (e) {
    attached.stream.destroy();
    throw new ExitError(startErrorStatus((e as Error).message), `Error response from daemon: ${(e as Error).message}`);
  }
  const size = tty ? terminalSize() : undefined;
  if (size) await api.resize(id, size[0], size[1]).catch(() => {}); // The container may already have exited; a lost resize is harmless, as with docker.
  // --sig-proxy (default on without a TTY): signals the CLI receives go to the container.
  if (!tty && (f.has('sig-proxy') ? f.bool('sig-proxy') : true)) proxySignals((sig) => api.kill(id, { killSignal: sig }));
  const { detached: left } = await pump(attached, {
    tty,
    stdin: !!body.AttachStdin,
    detachKeys,
    resize: tty ? (h, w) => api.resize(id, h, w) : undefined,
  });
  // The output ended: the session was detached (the container runs on), or the container exited.
  if (left) return 0;
  const r = await waited;
  if (r.Error?.Message) cli.err(`${r.Error.Message}\n`);
  return r.StatusCode;
}

const START_FLAGS: FlagHelp[] = [
  { name: 'attach', short: 'a', kind: 'bool', description: 'Attach STDOUT/STDERR and forward signals' },
  { name: 'interactive', short: 'i', kind: 'bool', description: "Attach container's STDIN" },
  { name: 'detach-keys', kind: 'string', description: 'Override the key sequence for detaching a container' },
];

export async function start(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('start', argv, START_FLAGS, { min: 1 });
  const api = cli.api.containers;
  if (!f.bool('attach') && !f.bool('interactive')) {
    let failed = false;
    for (const n of f.args) {
      try {
        await api.start(n);
        cli.out(`${n}\n`);
      } catch (e) {
        failed = true;
        cli.err(`Error response from daemon: ${(e as Error).message}\n`);
      }
    }
    if (failed) throw new ExitError(1, 'Error: failed to start containers: ' + f.args.join(', '));
    return 0;
  }
  const id = f.args[0]!;
  const info = await api.inspect(id);
  const tty = !!info.Config?.Tty;
  const detachKeys = f.str('detach-keys') ?? cli.config.data.detachKeys;
  const h = f.bool('interactive')
    ? await api.attach(id, { stdin: true, stream: true, detachKeys })
    : await api.attachOutput(id, { stream: true, detachKeys });
  const { result: waited } = await api.waitRegistered(id, { condition: 'next-exit' });
  await api.start(id);
  const { detached } = await pump(h, {
    tty,
    stdin: f.bool('interactive'),
    detachKeys,
    resize: tty ? (hh, w) => api.resize(id, hh, w) : undefined,
  });
  if (detached) return 0;
  return (await waited).StatusCode;
}

const ATTACH_FLAGS: FlagHelp[] = [
  { name: 'no-stdin', kind: 'bool', description: 'Do not attach STDIN' },
  { name: 'sig-proxy', kind: 'bool', description: 'Proxy all received signals to the process (default true)' },
  { name: 'detach-keys', kind: 'string', description: 'Override the key sequence for detaching a container' },
];

export async function attach(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('attach', argv, ATTACH_FLAGS, { min: 1, max: 1 });
  const api = cli.api.containers;
  const id = f.args[0]!;
  const info = await api.inspect(id);
  if (!info.State?.Running) throw new ExitError(1, 'You cannot attach to a stopped container, start it first');
  const tty = !!info.Config?.Tty;
  const stdin = !f.bool('no-stdin') && !!info.Config?.OpenStdin;
  const detachKeys = f.str('detach-keys') ?? cli.config.data.detachKeys;
  const { result: waited } = await api.waitRegistered(id, { condition: 'next-exit' });
  const h = stdin ? await api.attach(id, { stdin, stream: true, detachKeys }) : await api.attachOutput(id, { stream: true, detachKeys });
  const { detached } = await pump(h, { tty, stdin, detachKeys, resize: tty ? (hh, w) => api.resize(id, hh, w) : undefined });
  if (detached) {
    cli.err('read escape sequence\n');
    return 1;
  }
  return (await waited).StatusCode;
}

const EXEC_FLAGS: FlagHelp[] = [
  { name: 'interactive', short: 'i', kind: 'bool', description: 'Keep STDIN open even if not attached' },
  { name: 'tty', short: 't', kind: 'bool', description: 'Allocate a pseudo-TTY' },
  { name: 'detach', short: 'd', kind: 'bool', description: 'Detached mode: run command in the background' },
  { name: 'privileged', kind: 'bool', description: 'Give extended privileges to the command' },
  { name: 'env', short: 'e', kind: 'list', description: 'Set environment variables' },
  { name: 'user', short: 'u', kind: 'string', description: 'Username or UID (format: <name|uid>[:<group|gid>])' },
  { name: 'workdir', short: 'w', kind: 'string', description: 'Working directory inside the container' },
  { name: 'detach-keys', kind: 'string', description: 'Override the key sequence for detaching a container' },
];

export async function exec(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('exec', argv, EXEC_FLAGS, { interspersed: false, min: 2 });
  const [container, ...cmd] = f.args as [string, ...string[]];
  const tty = f.bool('tty');
  const interactive = f.bool('interactive');
  const detach = f.bool('detach');
  if (!detach && tty && interactive && !process.stdin.isTTY) throw new ExitError(1, 'the input device is not a TTY');
  const size = tty ? terminalSize() : undefined;
  const { Id } = await cli.api.exec.create(container, {
    Cmd: cmd,
    Tty: tty,
    AttachStdin: interactive && !detach,
    AttachStdout: !detach,
    AttachStderr: !detach,
    Privileged: f.bool('privileged'),
    Env: f.list('env'),
    ...(f.str('user') ? { User: f.str('user') } : {}),
    ...(f.str('workdir') ? { WorkingDir: f.str('workdir') } : {}),
    ...((f.str('detach-keys') ?? cli.config.data.detachKeys) ? { DetachKeys: f.str('detach-keys') ?? cli.config.data.detachKeys } : {}),
    ...(size ? { ConsoleSize: size } : {}),
  });
  if (detach) {
    await cli.api.exec.startDetached(Id);
    return 0;
  }
  let h;
  try {
    const startOpts = { tty, ...(size ? { consoleSize: size } : {}) };
    h = interactive ? await cli.api.exec.start(Id, startOpts) : await cli.api.exec.startOutput(Id, startOpts);
  } catch (e) {
    throw new ExitError(startErrorStatus((e as Error).message), `Error response from daemon: ${(e as Error).message}`);
  }
  const { detached } = await pump(h, {
    tty,
    stdin: interactive,
    detachKeys: f.str('detach-keys') ?? cli.config.data.detachKeys,
    resize: tty ? (hh, w) => cli.api.exec.resize(Id, hh, w) : undefined,
  });
  if (detached) return 0;
  const info = await cli.api.exec.inspect(Id);
  return info.ExitCode ?? 0;
}

export const RUN: CommandSpec = {
  name: 'run',
  group: 'common',
  description: 'Create and run a new container from an image',
  usage: '[OPTIONS] IMAGE [COMMAND] [ARG...]',
  flags: describedRunFlags(RUN_FLAGS),
  run,
};
export const CREATE: CommandSpec = {
  name: 'create',
  group: 'other',
  description: 'Create a new container',
  usage: '[OPTIONS] IMAGE [COMMAND] [ARG...]',
  flags: describedRunFlags(CREATE_FLAGS),
  run: create,
};
export const START: CommandSpec = {
  name: 'start',
  group: 'other',
  description: 'Start one or more stopped containers',
  usage: '[OPTIONS] CONTAINER [CONTAINER...]',
  flags: START_FLAGS,
  run: start,
};
export const ATTACH: CommandSpec = {
  name: 'attach',
  group: 'other',
  description: 'Attach local standard input, output, and error streams to a running container',
  usage: '[OPTIONS] CONTAINER',
  flags: ATTACH_FLAGS,
  run: attach,
};
export const EXEC: CommandSpec = {
  name: 'exec',
  group: 'common',
  description: 'Execute a command in a running container',
  usage: '[OPTIONS] CONTAINER COMMAND [ARG...]',
  flags: EXEC_FLAGS,
  run: exec,
};

export const SPECS: CommandSpec[] = [RUN, CREATE, START, ATTACH, EXEC];
