// engine images / pull / push / tag / rmi / history / save / load / build / login / logout.
// Credentials for pull/push come from the config directory (config.ts); progress is rendered by
// progress.ts (bars on a terminal, plain lines otherwise).
import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { ImageSummary } from '../../types/api/index.ts';
import { filtersOf, flagsOf, keyValues } from '../args.ts';
import type { CommandSpec, FlagHelp } from '../command-spec.ts';
import { eachName, ExitError, type Cli } from '../cli.ts';
import { DEFAULT_REGISTRY, registryKey } from '../config.ts';
import { ago, humanSize, printFormatted, shortId } from '../output.ts';
import { renderProgress } from '../progress.ts';
import { realStdout } from '../out.ts';
import { ROW } from '../go-types.ts';

const IMAGES_TITLES = {
  Repository: 'REPOSITORY',
  Tag: 'TAG',
  ID: 'IMAGE ID',
  Digest: 'DIGEST',
  CreatedSince: 'CREATED',
  CreatedAt: 'CREATED AT',
  Size: 'SIZE',
};

export function imageRows(list: ImageSummary[], all: boolean, noTrunc: boolean): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const img of list) {
    const tags = img.RepoTags?.length ? img.RepoTags : all || !img.Containers ? ['<none>:<none>'] : [];
    for (const t of tags) {
      const i = t.lastIndexOf(':');
      rows.push({
        Repository: t.slice(0, i),
        Tag: t.slice(i + 1),
        ID: noTrunc ? img.Id : shortId(img.Id),
        Digest: img.RepoDigests?.[0]?.split('@')[1] ?? '<none>',
        CreatedSince: ago(img.Created),
        CreatedAt: new Date((img.Created ?? 0) * 1000).toISOString(),
        Size: humanSize(img.Size ?? 0),
      });
    }
  }
  return rows;
}

const IMAGES_FLAGS: FlagHelp[] = [
  { name: 'all', short: 'a', kind: 'bool', description: 'Show all images (default hides intermediate images)' },
  { name: 'quiet', short: 'q', kind: 'bool', description: 'Only show image IDs' },
  { name: 'no-trunc', kind: 'bool', description: "Don't truncate output" },
  { name: 'digests', kind: 'bool', description: 'Show digests' },
  { name: 'filter', short: 'f', kind: 'list', description: 'Filter output based on conditions provided' },
  { name: 'format', kind: 'string', description: 'Pretty-print images using a Go template' },
];

export async function images(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('images', argv, IMAGES_FLAGS, { max: 1 });
  const filters = filtersOf(f.list('filter')) ?? {};
  if (f.args[0]) filters.reference = [f.args[0]];
  const list = await cli.api.images.list({ all: f.bool('all'), filters });
  if (f.bool('quiet')) {
    cli.out([...new Set(list.map((i) => (f.bool('no-trunc') ? i.Id : shortId(i.Id))))].map((id) => `${id}\n`).join(''));
    return 0;
  }
  const fallback = `table {{.Repository}}\t{{.Tag}}${f.bool('digests') ? '\t{{.Digest}}' : ''}\t{{.ID}}\t{{.CreatedSince}}\t{{.Size}}`;
  const format = f.str('format') ?? cli.config.data.imagesFormat ?? fallback;
  printFormatted(
    imageRows(list, f.bool('all'), f.bool('no-trunc')),
    format === 'table' ? fallback : format,
    IMAGES_TITLES,
    (s) => cli.out(s),
    cli.tableFit(f.bool('no-trunc')),
    { type: ROW.image },
  );
  return 0;
}

/** Familiar reference with a tag: busybox → busybox:latest; and its fully qualified form. */
export function qualified(ref: string): { withTag: string; full: string } {
  const withTag = /@|:[^/]*$/.test(ref) ? ref : `${ref}:latest`;
  const first = withTag.split('/')[0]!;
  const hasHost = withTag.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  const full = hasHost ? withTag : `docker.io/${withTag.includes('/') ? '' : 'library/'}${withTag}`;
  return { withTag, full };
}

const PULL_FLAGS: FlagHelp[] = [
  { name: 'quiet', short: 'q', kind: 'bool', description: 'Suppress verbose output' },
  { name: 'platform', kind: 'string', description: 'Set platform if server is multi-platform capable' },
  { name: 'all-tags', short: 'a', kind: 'bool', description: 'Download all tagged images in the repository' },
];

export async function pull(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('pull', argv, PULL_FLAGS, { min: 1, max: 1 });
  const ref = f.args[0]!;
  const { withTag, full } = qualified(ref);
  const auth = cli.config.credentials(registryKey(ref));
  const stream = cli.api.images.pull(f.bool('all-tags') ? ref : withTag, { platform: f.str('platform'), auth });
  if (f.bool('quiet')) for await (const _ of stream);
  else await renderProgress(stream, realStdout());
  cli.out(`${full}\n`);
  return 0;
}

const PUSH_FLAGS: FlagHelp[] = [
  { name: 'quiet', short: 'q', kind: 'bool', description: 'Suppress verbose output' },
  { name: 'all-tags', short: 'a', kind: 'bool', description: 'Push all tagged images in the repository' },
  { name: 'platform', kind: 'string', description: 'Set platform if server is multi-platform capable' },
];

export async function push(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('push', argv, PUSH_FLAGS, { min: 1, max: 1 });
  const ref = f.args[0]!;
  const at = ref.lastIndexOf(':');
  const [name, tag] = at > ref.lastIndexOf('/') ? [ref.slice(0, at), ref.slice(at + 1)] : [ref, f.bool('all-tags') ? undefined : 'latest'];
  const auth = cli.config.credentials(registryKey(ref));
  const stream = cli.api.images.push(name, { tag, auth, platform: f.str('platform') });
  if (f.bool('quiet')) for await (const _ of stream);
  else await renderProgress(stream, realStdout());
  if (f.bool('quiet')) cli.out(`${ref}\n`);
  return 0;
}

export async function tag(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('tag', argv, [], { min: 2, max: 2 });
  const target = f.args[1]!;
  const at = target.lastIndexOf(':');
  const [repo, t] = at > target.lastIndexOf('/') ? [target.slice(0, at), target.slice(at + 1)] : [target, 'latest'];
  await cli.api.images.tag(f.args[0]!, repo, t);
  return 0;
}

const RMI_FLAGS: FlagHelp[] = [
  { name: 'force', short: 'f', kind: 'bool', description: 'Force removal of the image' },
  { name: 'no-prune', kind: 'bool', description: 'Do not delete untagged parents' },
];

export async function rmi(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('rmi', argv, RMI_FLAGS, { min: 1 });
  let failed = false;
  for (const n of f.args) {
    try {
      for (const d of await cli.api.images.remove(n, { force: f.bool('force'), noprune: f.bool('no-prune') }))
        cli.out(d.Untagged ? `Untagged: ${d.Untagged}\n` : `Deleted: ${d.Deleted}\n`);
    } catch (e) {
      failed = true;
      cli.err(`Error response from daemon: ${(e as Error).message}\n`);
    }
  }
  return failed ? 1 : 0;
}

const HISTORY_FLAGS: FlagHelp[] = [
  { name: 'quiet', short: 'q', kind: 'bool', description: 'Only show image IDs' },
  { name: 'no-trunc', kind: 'bool', description: "Don't truncate output" },
  { name: 'format', kind: 'string', description: 'Pretty-print images using a Go template' },
  { name: 'human', short: 'H', kind: 'bool', description: 'Print sizes and dates in human readable format (default true)' },
];

export async function history(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('history', argv, HISTORY_FLAGS, { min: 1, max: 1 });
  const h = await cli.api.images.history(f.args[0]!);
  const rows = h.map((e) => ({
    ID: e.Id === '<missing>' ? e.Id : f.bool('no-trunc') ? e.Id : shortId(e.Id),
    CreatedSince: ago(e.Created),
    CreatedBy: f.bool('no-trunc') ? e.CreatedBy : e.CreatedBy.length > 45 ? `${e.CreatedBy.slice(0, 44)}…` : e.CreatedBy,
    Size: humanSize(e.Size),
    Comment: e.Comment,
  }));
  if (f.bool('quiet')) cli.out(rows.map((r) => `${r.ID}\n`).join(''));
  else
    printFormatted(
      rows,
      f.str('format') ?? 'table {{.ID}}\t{{.CreatedSince}}\t{{.CreatedBy}}\t{{.Size}}\t{{.Comment}}',
      { ID: 'IMAGE', CreatedSince: 'CREATED', CreatedBy: 'CREATED BY', Size: 'SIZE', Comment: 'COMMENT' },
      (s) => cli.out(s),
      undefined,
      { type: ROW.history },
    );
  return 0;
}

const SAVE_FLAGS: FlagHelp[] = [
  { name: 'output', short: 'o', kind: 'string', description: 'Write to a file, instead of STDOUT' },
  { name: 'platform', kind: 'string', description: 'Set platform if server is multi-platform capable' },
];

export async function save(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('save', argv, SAVE_FLAGS, { min: 1 });
  const out = f.str('output');
  if (!out && realStdout().isTTY) throw new ExitError(1, 'cowardly refusing to save to a terminal. Use the -o flag or redirect');
  const tar = await cli.api.images.save(f.args, { platform: f.str('platform') });
  await pipeline(tar, out ? createWriteStream(out) : realStdout());
  return 0;
}

const LOAD_FLAGS: FlagHelp[] = [
  { name: 'input', short: 'i', kind: 'string', description: 'Read from tar archive file, instead of STDIN' },
  { name: 'quiet', short: 'q', kind: 'bool', description: 'Suppress the load output' },
  { name: 'platform', kind: 'string', description: 'Set platform if server is multi-platform capable' },
];

export async function load(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('load', argv, LOAD_FLAGS, { max: 0 });
  const input = f.str('input');
  if (!input && process.stdin.isTTY) throw new ExitError(1, 'requested load from stdin, but stdin is empty');
  const src = input ? createReadStream(input) : process.stdin;
  for await (const m of cli.api.images.load(src, { quiet: f.bool('quiet'), platform: f.str('platform') })) {
    const s = (m as { stream?: string }).stream ?? (m.status ? `${m.status}\n` : '');
    cli.out(s);
  }
  return 0;
}

const BUILD_FLAGS: FlagHelp[] = [
  { name: 'tag', short: 't', kind: 'list', description: "Name and optionally a tag in the 'name:tag' format" },
  { name: 'file', short: 'f', kind: 'string', description: "Name of the Dockerfile (Default is 'PATH/Dockerfile')" },
  { name: 'build-arg', kind: 'list', description: 'Set build-time variables' },
  { name: 'label', kind: 'list', description: 'Set metadata for an image' },
  { name: 'no-cache', kind: 'bool', description: 'Do not use cache when building the image' },
  { name: 'pull', kind: 'bool', description: 'Always attempt to pull a newer version of the image' },
  { name: 'quiet', short: 'q', kind: 'bool', description: 'Suppress the build output and print image ID on success' },
  { name: 'rm', kind: 'bool', description: 'Remove intermediate containers after a successful build (default true)' },
  { name: 'force-rm', kind: 'bool', description: 'Always remove intermediate containers' },
  { name: 'target', kind: 'string', description: 'Set the target build stage to build.' },
  { name: 'platform', kind: 'string', description: 'Set platform if server is multi-platform capable' },
];

export async function build(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('build', argv, BUILD_FLAGS, { min: 1, max: 1 });
  // The tar writer and .dockerignore matcher are build's alone: imported here, not at start-up.
  const { stdinContext, tarContext } = await import('../tar-context.ts');
  const { stream, dockerfile } =
    f.args[0] === '-' ? await stdinContext(process.stdin, f.str('file')) : await tarContext(f.args[0]!, f.str('file'));
  const buildArgs = keyValues(f.list('build-arg'));
  for (const [k, v] of Object.entries(buildArgs))
    if (v === '' && !f.list('build-arg').some((a) => a.startsWith(`${k}=`)) && process.env[k] !== undefined) buildArgs[k] = process.env[k]!;
  const messages = cli.api.images.build(stream, {
    tags: f.list('tag'),
    dockerfile,
    buildArgs,
    labels: keyValues(f.list('label')),
    noCache: f.bool('no-cache'),
    pull: f.bool('pull'),
    quiet: f.bool('quiet'),
    rm: f.has('rm') ? f.bool('rm') : true,
    forceRm: f.bool('force-rm'),
    target: f.str('target'),
    platform: f.str('platform'),
  });
  // Quiet: the daemon streams only the image ID (q=1), which is printed once the build is over, as
  // the docker CLI prints its buffer.
  const quiet: string[] = [];
  try {
    await renderProgress(
      messages,
      f.bool('quiet') ? { write: (chunk: string | Uint8Array) => (quiet.push(String(chunk)), true) } : realStdout(),
    );
  } catch (e) {
    // A failed step: the docker CLI exits with the error's code (a RUN's exit status), 1 without one.
    const detail = (e as { progressMessage?: { errorDetail?: { code?: number } } }).progressMessage?.errorDetail;
    if (!detail) throw e;
    throw new ExitError(detail.code || 1, (e as Error).message);
  }
  if (f.bool('quiet')) cli.out(quiet.join(''));
  return 0;
}

const LOGIN_FLAGS: FlagHelp[] = [
  { name: 'username', short: 'u', kind: 'string', description: 'Username' },
  { name: 'password', short: 'p', kind: 'string', description: 'Password' },
  { name: 'password-stdin', kind: 'bool', description: 'Take the password from stdin' },
];

export async function login(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('login', argv, LOGIN_FLAGS, { max: 1 });
  const server = f.args[0] ? f.args[0].replace(/^https?:\/\//, '').replace(/\/.*$/, '') : DEFAULT_REGISTRY;
  let password = f.str('password');
  if (f.bool('password-stdin')) {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    password = Buffer.concat(chunks)
      .toString('utf8')
      .replace(/\r?\n$/, '');
  }
  const username = f.str('username');
  if (!username || password === undefined)
    throw new ExitError(
      1,
      'Error: Cannot perform an interactive login from a non TTY device (give --username and --password or --password-stdin)',
    );
  if (f.str('password')) cli.err('WARNING! Using --password via the CLI is insecure. Use --password-stdin.\n');
  const r = await cli.api.auth({ username, password, serveraddress: server });
  cli.config.store(server, r.IdentityToken ? { identitytoken: r.IdentityToken } : { username, password });
  cli.out(`${r.Status || 'Login Succeeded'}\n`);
  return 0;
}

export async function logout(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('logout', argv, [], { max: 1 });
  const server = f.args[0] ? f.args[0].replace(/^https?:\/\//, '').replace(/\/.*$/, '') : DEFAULT_REGISTRY;
  if (!cli.config.erase(server)) cli.out(`Not logged in to ${server}\n`);
  else cli.out(`Removing login credentials for ${server}\n`);
  return 0;
}

export { eachName };

export const IMAGES: CommandSpec = {
  name: 'images',
  group: 'common',
  description: 'List images',
  usage: '[OPTIONS] [REPOSITORY[:TAG]]',
  flags: IMAGES_FLAGS,
  run: images,
};
export const PULL: CommandSpec = {
  name: 'pull',
  group: 'common',
  description: 'Download an image from a registry',
  usage: '[OPTIONS] NAME[:TAG|@DIGEST]',
  flags: PULL_FLAGS,
  run: pull,
};
export const PUSH: CommandSpec = {
  name: 'push',
  group: 'common',
  description: 'Upload an image to a registry',
  usage: '[OPTIONS] NAME[:TAG]',
  flags: PUSH_FLAGS,
  run: push,
};
export const BUILD: CommandSpec = {
  name: 'build',
  group: 'common',
  description: 'Build an image from a Dockerfile',
  usage: '[OPTIONS] PATH | URL | -',
  flags: BUILD_FLAGS,
  run: build,
};
export const TAG: CommandSpec = {
  name: 'tag',
  group: 'other',
  description: 'Create a tag TARGET_IMAGE that refers to SOURCE_IMAGE',
  usage: 'SOURCE_IMAGE[:TAG] TARGET_IMAGE[:TAG]',
  run: tag,
};
export const RMI: CommandSpec = {
  name: 'rmi',
  group: 'other',
  description: 'Remove one or more images',
  usage: '[OPTIONS] IMAGE [IMAGE...]',
  flags: RMI_FLAGS,
  run: rmi,
};
export const HISTORY: CommandSpec = {
  name: 'history',
  group: 'other',
  description: 'Show the history of an image',
  usage: '[OPTIONS] IMAGE',
  flags: HISTORY_FLAGS,
  run: history,
};
export const SAVE: CommandSpec = {
  name: 'save',
  group: 'other',
  description: 'Save one or more images to a tar archive (streamed to STDOUT by default)',
  usage: '[OPTIONS] IMAGE [IMAGE...]',
  flags: SAVE_FLAGS,
  run: save,
};
export const LOAD: CommandSpec = {
  name: 'load',
  group: 'other',
  description: 'Load an image from a tar archive or STDIN',
  flags: LOAD_FLAGS,
  run: load,
};

export const SPECS: CommandSpec[] = [
  IMAGES,
  PULL,
  PUSH,
  BUILD,
  TAG,
  RMI,
  HISTORY,
  SAVE,
  LOAD,
  {
    name: 'login',
    group: 'common',
    description: 'Authenticate to a registry',
    usage: '[OPTIONS] [SERVER]',
    flags: LOGIN_FLAGS,
    run: login,
  },
  { name: 'logout', group: 'common', description: 'Log out from a registry', usage: '[SERVER]', run: logout },
];
