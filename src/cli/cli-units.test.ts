// Unit tests of the CLI's pure parts: the flag parser, the Go-template subset, run's flag
// translation (ports, sizes, durations, mounts), table alignment and human units, .dockerignore
// matching, the progress line rules, and detach-key parsing.
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Flags, filtersOf, parseArgs, UsageError } from './args.ts';
import { alignTable, humanDuration, humanSize } from './output.ts';
import { messageLine, progressBar } from './progress.ts';
import { createBody, parseBytes, parseDuration, parsePorts, RUN_FLAGS } from './run-options.ts';
import { parseDetachKeys } from './stdio.ts';
import { tarContext } from './tar-context.ts';
import { IgnoreMatcher } from '../wire/dockerignore.ts';
import { compile, TemplateError } from './template.ts';
import { collect } from '../client/streams.ts';

test('flags: combined shorts, attached values, =values, repeats, -- and stopping at the image', () => {
  const p = parseArgs(
    ['-it', '-p80:80', '-p', '81:81', '--name=x', '-e', 'A=1', '--rm', 'busybox', '-c', 'ls', '--', 'x'],
    RUN_FLAGS,
    false,
  );
  const f = new Flags(p);
  assert.equal(f.bool('interactive'), true);
  assert.equal(f.bool('tty'), true);
  assert.deepEqual(f.list('publish'), ['80:80', '81:81']);
  assert.equal(f.str('name'), 'x');
  assert.deepEqual(f.args, ['busybox', '-c', 'ls', '--', 'x']);
  assert.throws(
    () => parseArgs(['--nope'], RUN_FLAGS),
    (e: unknown) => e instanceof UsageError && /unknown flag: --nope/.test(e.message),
  );
  assert.throws(() => parseArgs(['--name'], RUN_FLAGS), /flag needs an argument: --name/);
  assert.equal(new Flags(parseArgs(['--rm=false'], RUN_FLAGS)).bool('rm'), false);
  assert.deepEqual(filtersOf(['label=a', 'label=b', 'status=exited']), { label: ['a', 'b'], status: ['exited'] });
});

test('templates: fields, json, index, join, if/else, range, printf, table header; unknown function is an error', () => {
  const dot = { Name: '/c1', State: { Running: false, ExitCode: 3 }, Env: ['A=1', 'B=2'], Labels: { k: 'v' } };
  assert.equal(compile('{{.Name}} {{.State.ExitCode}}').render(dot), '/c1 3');
  assert.equal(compile('{{json .Env}}').render(dot), '["A=1","B=2"]');
  assert.equal(compile('{{index .Labels "k"}}|{{join .Env ","}}').render(dot), 'v|A=1,B=2');
  assert.equal(compile('{{if .State.Running}}up{{else}}down{{end}}').render(dot), 'down');
  assert.equal(compile('{{range .Env}}[{{.}}]{{end}}').render(dot), '[A=1][B=2]');
  assert.equal(compile('{{printf "%s=%d" .Name .State.ExitCode}}').render(dot), '/c1=3');
  assert.equal(compile('{{.Labels}}').render(dot), 'map[k:v]');
  const t = compile('table {{.ID}}\\t{{.Names}}');
  assert.equal(t.table, true);
  assert.equal(t.header({ ID: 'CONTAINER ID', Names: 'NAMES' }), 'CONTAINER ID\tNAMES');
  assert.throws(
    () => compile('{{nosuch .Name}}').render(dot),
    (e: unknown) => e instanceof TemplateError && /function "nosuch" not defined/.test(e.message),
  );
});

test('run flags become the create body: ports, env, volumes, resources, restart, entrypoint, health', () => {
  const f = new Flags(
    parseArgs(
      [
        '--rm',
        '-p',
        '127.0.0.1:8080:80/udp',
        '-p',
        '9000-9001:90-91',
        '-e',
        'X=1',
        '-v',
        '/host:/c:ro',
        '-v',
        '/anon',
        '-m',
        '64m',
        '--cpus',
        '1.5',
        '--restart',
        'on-failure:3',
        '--entrypoint',
        '/bin/sh',
        '-w',
        '/w',
        '-u',
        '1000',
        '--health-cmd',
        'true',
        '--health-interval',
        '1m30s',
        '--network',
        'n1',
        '--network-alias',
        'svc',
        'busybox',
        '-c',
        'true',
      ],
      RUN_FLAGS,
      false,
    ),
  );
  const { body } = createBody(f, false);
  assert.deepEqual(body.HostConfig?.PortBindings, {
    '80/udp': [{ HostIp: '127.0.0.1', HostPort: '8080' }],
    '90/tcp': [{ HostIp: '', HostPort: '9000' }],
    '91/tcp': [{ HostIp: '', HostPort: '9001' }],
  });
  assert.deepEqual(Object.keys(body.ExposedPorts ?? {}).sort(), ['80/udp', '90/tcp', '91/tcp']);
  assert.deepEqual(body.HostConfig?.Binds, ['/host:/c:ro']);
  assert.deepEqual(body.Volumes, { '/anon': {} });
  assert.equal(body.HostConfig?.Memory, 64 * 1024 * 1024);
  assert.equal(body.HostConfig?.NanoCpus, 1.5e9);
  assert.deepEqual(body.HostConfig?.RestartPolicy, { Name: 'on-failure', MaximumRetryCount: 3 });
  assert.equal(body.HostConfig?.AutoRemove, true);
  assert.deepEqual(body.Entrypoint, ['/bin/sh']);
  assert.deepEqual(body.Cmd, ['-c', 'true']);
  assert.equal(body.WorkingDir, '/w');
  assert.equal(body.User, '1000');
  assert.deepEqual(body.Healthcheck, { Test: ['CMD-SHELL', 'true'], Interval: 90e9 });
  assert.deepEqual(body.NetworkingConfig?.EndpointsConfig?.n1?.Aliases, ['svc']);
  assert.equal(body.AttachStdin, false);
  assert.equal(parseBytes('1g'), 1024 ** 3);
  assert.equal(parseDuration('500ms'), 5e8);
  assert.throws(() => parseDuration('5'), /invalid duration/);
  assert.throws(() => parsePorts(['abc'], {}, {}), /invalid containerPort/);
});

test('tables align as tabwriter (min 10, padding 3); human units as go-units', () => {
  assert.equal(
    alignTable([
      ['A', 'LONGER HEADER', 'Z'],
      ['value-long-1', 'b', 'c'],
    ]),
    'A              LONGER HEADER   Z\nvalue-long-1   b               c\n',
  );
  assert.equal(humanSize(2_030_000), '2.03MB');
  assert.equal(humanSize(999), '999B');
  assert.equal(humanDuration(500), 'Less than a second');
  assert.equal(humanDuration(90_000), 'About a minute');
  assert.equal(humanDuration(3 * 3600_000), '3 hours');
  assert.equal(humanDuration(3 * 24 * 3600_000), '3 days');
});

test('progress: byte updates are skipped when piped and shown as a bar on a terminal', () => {
  const m = { status: 'Downloading', id: 'abc', progressDetail: { current: 500, total: 1000 } };
  assert.equal(messageLine(m, false), undefined);
  assert.match(messageLine(m, true)!, /^abc: Downloading \[={24}> {25}\] +500B\/1kB$/);
  assert.equal(messageLine({ status: 'Pull complete', id: 'abc' }, false), 'abc: Pull complete');
  assert.equal(progressBar({ progressDetail: { current: 1000, total: 1000 } }, 10), '[==========]      1kB/1kB');
});

test('detach keys: ctrl-<c> and single characters; a bad spec is refused', () => {
  assert.deepEqual([...parseDetachKeys(undefined)], [0x10, 0x11]);
  assert.deepEqual([...parseDetachKeys('ctrl-a,x')], [0x01, 0x78]);
  assert.throws(() => parseDetachKeys('ctrl-1,'), /Invalid detach keys/);
});

test('.dockerignore: globs, ** and exceptions; the build context tar leaves ignored files out', async () => {
  const rules = IgnoreMatcher.fromFile('# comment\n*.log\n**/tmp\nsecret/\n!keep.log\n');
  assert.equal(rules.ignores('a.log'), true);
  assert.equal(rules.ignores('keep.log'), false);
  assert.equal(rules.ignores('x/y/tmp/z'), true);
  assert.equal(rules.ignores('secret/key'), true);
  assert.equal(rules.ignores('src/a.ts'), false);
  const dir = await mkdtemp(join(tmpdir(), 'engine-ctx-'));
  try {
    await mkdir(join(dir, 'secret'));
    await writeFile(join(dir, 'Dockerfile'), 'FROM busybox\n');
    await writeFile(join(dir, '.dockerignore'), 'secret\n*.log\n');
    await writeFile(join(dir, 'secret', 'key'), 'no');
    await writeFile(join(dir, 'a.log'), 'no');
    await writeFile(join(dir, 'app.txt'), 'yes');
    const { stream, dockerfile } = await tarContext(dir);
    const tar = await collect(stream);
    const names: string[] = [];
    for (let off = 0; off + 512 <= tar.length;) {
      const name = tar
        .subarray(off, off + 100)
        .toString('utf8')
        .replace(/\0.*$/s, '');
      if (!name) break;
      const size = parseInt(
        tar
          .subarray(off + 124, off + 136)
          .toString('ascii')
          .replace(/\0.*$/s, '')
          .trim() || '0',
        8,
      );
      names.push(name);
      off += 512 + Math.ceil(size / 512) * 512;
    }
    assert.equal(dockerfile, 'Dockerfile');
    assert.deepEqual(names.sort(), ['.dockerignore', 'Dockerfile', 'app.txt']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
