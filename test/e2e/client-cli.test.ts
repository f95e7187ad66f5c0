// The `engine` command-line client end to end against a real daemon, as users get it: the executable
// compiled with Bun (dist/bin/engine, scripts/build-cli.mjs; the ssh:// remote runs it through bin/engine):
// run/ps/logs/exec/inspect/images/rm and docker's exit statuses, run -it under a pseudo-terminal
// (script(1)), pull progress as plain lines and as terminal bars from a local registry, cp, network
// and volume commands, --format templates, TLS flags, and ssh:// through a local sshd on loopback
// with a throw-away key (Debian openssh-server; skipped with a message when /usr/sbin/sshd is absent).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { REPO_ROOT, run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { freePort } from '../helpers/ports.ts';
import { startRegistry, type TestRegistry } from '../helpers/registry.ts';
import { makeCerts, tlsDaemonArgs, type TestCerts } from '../helpers/tls-certs.ts';

const ENGINE = join(REPO_ROOT, 'dist/bin/engine');
const SSHD = '/usr/sbin/sshd';

describe('engine CLI against the daemon', () => {
  let d: TestDaemon;
  let work: string;
  let certs: TestCerts;
  let tlsPort: number;
  let reg: TestRegistry;
  let env: NodeJS.ProcessEnv;
  const engine = (args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}) =>
    run(ENGINE, args, { env: { ...env, ...opts.env }, input: opts.input, timeoutMs: 120_000 });

  // A terminal of a chosen size for the CLI; input typed after pauses; stdin kept open until exit.
  function inTerminal(command: string, typed: string[], pauseMs = 1500, cols = 111): Promise<{ code: number | null; out: string }> {
    return new Promise((resolve) => {
      const child = spawn('script', ['-qec', `stty rows 33 cols ${cols}; ${command}`, '/dev/null'], { env });
      let out = '';
      child.stdout.on('data', (b) => (out += b));
      let i = 0;
      const typeNext = () => {
        if (i < typed.length) {
          child.stdin.write(typed[i++]!);
          setTimeout(typeNext, 700);
        }
      };
      setTimeout(typeNext, pauseMs);
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, out });
      });
    });
  }

  before(async () => {
    assert.ok(existsSync(ENGINE), `${ENGINE} is missing: the build makes it (bin/node scripts/bundle.mjs)`);
    work = await mkdtemp(join(tmpdir(), 'engine-cli-test-'));
    certs = await makeCerts(join(work, 'certs'));
    tlsPort = await freePort();
    d = await startDaemon({ args: tlsDaemonArgs(certs, tlsPort) });
    await loadBusybox(d);
    reg = await startRegistry();
    env = { PATH: process.env.PATH, HOME: work, ENGINE_HOST: d.host, ENGINE_CONFIG: join(work, 'config') };
  });
  after(async () => {
    await d?.cleanup();
    await reg?.cleanup();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('run prints output and exits with the container status; ps, logs, inspect --format, rm', async () => {
    const r = await engine(['run', '--name', 'job1', '-e', 'X=42', 'busybox', 'sh', '-c', 'echo out-$X; echo err >&2; exit 3']);
    assert.equal(r.code, 3);
    assert.equal(r.stdout, 'out-42\n');
    assert.equal(r.stderr, 'err\n');
    const ps = await engine(['ps', '-a']);
    assert.match(ps.stdout, /^CONTAINER ID {3}IMAGE {5}COMMAND {18}CREATED {1,}STATUS {1,}PORTS {1,}NAMES\n/);
    // COMMAND is quoted and cut to 20 characters with an ellipsis, as docker ps does.
    assert.match(ps.stdout, /busybox {3}"sh -c 'echo out-\$X;…" .*Exited \(3\) .* job1\n/);
    assert.equal((await engine(['ps', '-a', '--format', '{{.Names}}|{{.State}}', '--filter', 'name=job1'])).stdout, 'job1|exited\n');
    assert.equal((await engine(['ps', '-q'])).stdout, '');
    const logs = await engine(['logs', 'job1']);
    assert.equal(logs.stdout, 'out-42\n');
    assert.equal(logs.stderr, 'err\n');
    assert.match((await engine(['logs', '-t', 'job1'])).stdout, /^\d{4}-\d\d-\d\dT\S+Z out-42\n$/);
    assert.equal(
      (await engine(['inspect', '-f', '{{.State.ExitCode}} {{index .Config.Env 0}} {{json .Config.Cmd}}', 'job1'])).stdout,
      `3 X=42 ["sh","-c","echo out-$X; echo err >&2; exit 3"]\n`,
    );
    const full = JSON.parse((await engine(['inspect', 'job1'])).stdout);
    assert.equal(full[0].Name, '/job1');
    assert.deepEqual(await engine(['rm', 'job1']), { code: 0, stdout: 'job1\n', stderr: '' });
    const missing = await engine(['inspect', 'job1']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /No such object: job1/);
  });

  test("exit statuses as docker's: 125 daemon/usage error, 127 not found, 126 not executable; --rm removes", async () => {
    const notFound = await engine(['run', '--rm', 'busybox', 'no-such-command']);
    assert.equal(notFound.code, 127, notFound.stderr);
    const notExec = await engine(['run', '--rm', 'busybox', '/etc/passwd']);
    assert.equal(notExec.code, 126, notExec.stderr);
    const badFlag = await engine(['run', '--no-such-flag', 'busybox']);
    assert.equal(badFlag.code, 125);
    assert.match(badFlag.stderr, /unknown flag: --no-such-flag/);
    const badImage = await engine(['run', '--rm', 'busybox', 'true'], { env: { ENGINE_HOST: `unix://${join(work, 'none.sock')}` } });
    assert.equal(badImage.code, 125);
    assert.match(badImage.stderr, /Cannot connect to the engine daemon/);
    const rmRun = await engine(['run', '--rm', '--name', 'gone', 'busybox', 'sh', '-c', 'exit 9']);
    assert.equal(rmRun.code, 9);
    assert.equal((await engine(['ps', '-aq', '--filter', 'name=gone'])).stdout, '');
    const stopErr = await engine(['stop', 'no-such-container']);
    assert.equal(stopErr.code, 1);
    assert.match(stopErr.stderr, /^Error response from daemon: No such container: no-such-container/);
  });

  test('run -d, exec with piped stdin and exit status, top, port, stop, start, restart, kill, wait', async () => {
    const id = (await engine(['run', '-d', '--name', 'bg', '-p', '127.0.0.1::8080', 'busybox', 'sleep', '300'])).stdout.trim();
    assert.match(id, /^[0-9a-f]{64}$/);
    const ex = await engine(['exec', '-i', 'bg', 'sh', '-c', 'cat; exit 4'], { input: 'through exec\n' });
    assert.equal(ex.code, 4);
    assert.equal(ex.stdout, 'through exec\n');
    assert.match((await engine(['top', 'bg'])).stdout, /sleep 300/);
    assert.match((await engine(['port', 'bg'])).stdout, /^8080\/tcp -> 127\.0\.0\.1:\d+\n$/);
    assert.equal((await engine(['stop', '-t', '1', 'bg'])).stdout, 'bg\n');
    assert.equal((await engine(['inspect', '-f', '{{.State.Running}}', 'bg'])).stdout, 'false\n');
    assert.equal((await engine(['start', 'bg'])).code, 0);
    assert.equal((await engine(['restart', '-t', '1', 'bg'])).code, 0);
    assert.equal((await engine(['kill', 'bg'])).code, 0);
    assert.equal((await engine(['wait', 'bg'])).stdout, '137\n');
    assert.equal((await engine(['rm', '-f', 'bg'])).code, 0);
  });

  test('a reader that pauses still gets all the output: a megabyte from run and exec, read after 1.5 s', async () => {
    // The process must not exit before a pipe read slowly has taken its output (Bun's pipe writer
    // held 800 kB after writableLength read 0).
    const slowRead = (args: string[]) =>
      new Promise<[number | null, number]>((resolve) => {
        const child = spawn(ENGINE, args, { env });
        let n = 0;
        child.stdout.pause();
        setTimeout(() => child.stdout.resume(), 1500);
        child.stdout.on('data', (b: Buffer) => (n += b.length));
        child.on('close', (code) => resolve([code, n]));
      });
    const mb = ['sh', '-c', 'head -c 1000000 /dev/zero | tr "\\0" a'];
    assert.deepEqual(await slowRead(['run', '--rm', 'busybox', ...mb]), [0, 1_000_000]);
    assert.equal((await engine(['run', '-d', '--name', 'slowread', 'busybox', 'sleep', '300'])).code, 0);
    assert.deepEqual(await slowRead(['exec', 'slowread', ...mb]), [0, 1_000_000]);
    assert.equal((await engine(['rm', '-f', 'slowread'])).code, 0);
  });

  test('run without a terminal proxies signals to the container (--sig-proxy)', async () => {
    const child = spawn(
      ENGINE,
      ['run', '--rm', 'busybox', 'sh', '-c', "trap 'echo got-term; exit 5' TERM; echo ready; while true; do sleep 0.1; done"],
      { env },
    );
    let out = '';
    const ready = new Promise<void>((resolve) =>
      child.stdout.on('data', (b) => {
        out += b;
        if (out.includes('ready')) resolve();
      }),
    );
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    await ready;
    child.kill('SIGTERM');
    assert.equal(await closed, 5);
    assert.match(out, /got-term/);
  });

  test('run -it under a pseudo-terminal: the shell sees the terminal size, output echoes, the exit status comes back', async () => {
    const r = await inTerminal(`${ENGINE} run -it --rm busybox sh`, ['stty size\n', 'echo hello-$((40+2))\n', 'exit 3\n']);
    assert.match(r.out, /33 111/);
    assert.match(r.out, /hello-42/);
    assert.equal(r.code, 3);
  });

  test('tables fit a narrow terminal of 72 columns (ps, images, network ls, volume ls); piped and --no-trunc output keeps full lines', async () => {
    const long = 'a-container-name-long-enough-to-overflow-the-terminal';
    const made = await engine(['run', '-d', '--name', long, 'busybox', 'sh', '-c', 'sleep 300; echo a long command line']);
    assert.equal(made.code, 0, made.stderr);
    const netName = 'a-network-whose-name-is-long-enough-to-overflow-the-terminal';
    const volName = 'a-volume-whose-name-is-long-enough-to-overflow-the-terminal-of-seventy-two-columns';
    assert.equal((await engine(['network', 'create', netName])).code, 0);
    assert.equal((await engine(['volume', 'create', volName])).code, 0);
    try {
      const lists = ['ps', 'images', 'network ls', 'volume ls'];
      const script = lists.map((l) => `echo '### ${l}'; ${ENGINE} ${l}`).join('; ');
      const tty = await inTerminal(`${script}; echo '### no-trunc'; ${ENGINE} ps --no-trunc`, [], 0, 72);
      assert.equal(tty.code, 0, tty.out);
      const sections = new Map<string, string[]>();
      let cur = '';
      for (const line of tty.out.replace(/\r/g, '').split('\n')) {
        const m = /^### (.*)$/.exec(line);
        if (m) sections.set((cur = m[1]!), []);
        else if (cur && line) sections.get(cur)!.push(line);
      }
      for (const l of lists) {
        const lines = sections.get(l) ?? [];
        assert.ok(lines.length >= 2, `${l}: ${JSON.stringify(tty.out)}`);
        for (const line of lines) assert.ok(line.length <= 72, `${l}: ${JSON.stringify(line)} is ${line.length} wide`);
      }
      const ps = sections.get('ps')!;
      assert.match(ps[0]!, /^CONTAINER ID +IMAGE +COMMAND +CREATED +STATUS +PORTS +NAMES$/);
      assert.match(ps[1]!, /^[0-9a-f]{12} +busybox +"[^"]*…" /);
      assert.match(ps[1]!, / a-con[^ ]*…$/);
      assert.ok(sections.get('network ls')!.some((x) => /^[0-9a-f]{12} +a-network[^ ]*… /.test(x)));
      assert.ok(sections.get('volume ls')!.some((x) => /^local +a-volume[^ ]*…$/.test(x)));
      assert.ok(sections.get('images')!.some((x) => /^busybox +latest +[0-9a-f]{12} /.test(x)));
      // --no-trunc on the terminal: full ID and name, wider than the terminal.
      assert.ok(sections.get('no-trunc')!.some((x) => x.includes(long) && /^[0-9a-f]{64} /.test(x)));
      // Piped: no fitting, docker's usual columns (short ID, COMMAND cut at 20) and the whole name.
      const piped = (await engine(['ps'])).stdout.split('\n');
      assert.ok(
        piped.some((x) => /^[0-9a-f]{12} +busybox +"sh -c 'sleep 300; e…" /.test(x) && x.endsWith(long)),
        piped.join('\n'),
      );
      assert.match((await engine(['network', 'ls'])).stdout, new RegExp(` ${netName} +bridge +local\n`));
      assert.match((await engine(['volume', 'ls'])).stdout, new RegExp(`\nlocal +${volName}\n`));
    } finally {
      await engine(['rm', '-f', long]);
      await engine(['network', 'rm', netName]);
      await engine(['volume', 'rm', volName]);
    }
  });

  test('pull: plain progress lines when piped, progress bars on a terminal; images, tag, rmi', async () => {
    const name = `${reg.host}/cli-busybox`;
    assert.equal((await engine(['tag', 'busybox:latest', `${name}:v1`])).code, 0);
    const push = await engine(['push', `${name}:v1`]);
    assert.equal(push.code, 0, push.stderr);
    assert.match(push.stdout, /: Pushed\n/);
    assert.match((await engine(['rmi', `${name}:v1`])).stdout, new RegExp(`^Untagged: ${name}:v1\n`));
    // busybox:latest holds the same layers; without it the pull downloads them.
    const rmiBase = await engine(['rmi', 'busybox:latest']);
    assert.equal(rmiBase.code, 0, `${rmiBase.stderr}${JSON.stringify((await engine(['ps', '-a', '--no-trunc'])).stdout)}`);
    const plain = await engine(['pull', `${name}:v1`]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /^v1: Pulling from cli-busybox\n/);
    assert.match(plain.stdout, /^[0-9a-f]{12}: Pull complete$/m);
    assert.doesNotMatch(plain.stdout, /\x1b\[|Downloading/, 'no cursor movement or byte counts when piped');
    assert.match(plain.stdout, new RegExp(`Status: Downloaded newer image for ${name}:v1\n${name}:v1\n$`));
    const images = await engine(['images', '--format', 'table {{.Repository}}\t{{.Tag}}']);
    assert.match(images.stdout, new RegExp(`^REPOSITORY +TAG\n(.*\n)*${name} +v1\n`));
    assert.equal((await engine(['rmi', `${name}:v1`])).code, 0);
    const tty = await inTerminal(`${ENGINE} pull ${name}:v1`, []);
    assert.equal(tty.code, 0, tty.out);
    assert.match(tty.out, /\x1b\[\d+A/, 'lines are updated in place');
    assert.match(tty.out, /Pull complete/);
    assert.equal((await engine(['tag', `${name}:v1`, 'busybox:latest'])).code, 0);
    assert.equal((await engine(['rmi', `${name}:v1`])).code, 0);
    // run of an image that is not here pulls it first, reporting on stderr as docker does.
    const pulledByRun = await engine(['run', '--rm', `${name}:v1`, 'echo', 'pulled-by-run']);
    assert.equal(pulledByRun.code, 0, pulledByRun.stderr);
    assert.equal(pulledByRun.stdout, 'pulled-by-run\n');
    assert.match(pulledByRun.stderr, new RegExp(`^Unable to find image '${name}:v1' locally\nv1: Pulling from cli-busybox\n`));
    assert.equal((await engine(['rmi', `${name}:v1`])).code, 0);
  });

  test('push and build: progress in place on a terminal, plain lines when piped', async () => {
    const base = `${reg.host}/cli-progress:v1`;
    assert.equal((await engine(['tag', 'busybox:latest', base])).code, 0);
    const push = await inTerminal(`${ENGINE} push ${base}`, [], 0);
    assert.equal(push.code, 0, push.out);
    assert.match(push.out, /\x1b\[\d+A/, 'layer lines are updated in place');
    assert.match(push.out, /[0-9a-f]{12}: (Pushed|Layer already exists|Mounted from cli-busybox)/);
    assert.match(push.out, /v1: digest: sha256:[0-9a-f]{64} size: \d+/);
    // Without busybox:latest or the base, the build's FROM downloads the layers (progress to show).
    assert.equal((await engine(['rmi', base, 'busybox:latest'])).code, 0);
    const ctx = join(work, 'progress-ctx');
    await mkdir(ctx, { recursive: true });
    await writeFile(join(ctx, 'Dockerfile'), `FROM ${base}\nRUN echo built-$((6*7))\n`);
    const piped = await engine(['build', '-t', 'cli-built', ctx]);
    assert.equal(piped.code, 0, piped.stderr);
    assert.match(piped.stdout, new RegExp(`^Step 1/2 : FROM ${base}\n`));
    assert.match(piped.stdout, /^[0-9a-f]{12}: Pull complete$/m);
    assert.match(piped.stdout, /built-42\n/);
    assert.match(piped.stdout, /Successfully built [0-9a-f]{12}\nSuccessfully tagged cli-built:latest\n$/);
    assert.doesNotMatch(piped.stdout, /\x1b\[|Downloading/, 'no cursor movement or byte counts when piped');
    assert.equal((await engine(['rmi', 'cli-built', base])).code, 0);
    const tty = await inTerminal(`${ENGINE} build -t cli-built ${ctx}`, [], 0);
    assert.equal(tty.code, 0, tty.out);
    assert.match(tty.out, /\x1b\[\d+A/, 'the pull of FROM updates its lines in place');
    assert.match(tty.out, /: (Downloading|Extracting) +\[=*>? *\] +[\d.]+[kMG]?B\/[\d.]+[kMG]?B/, 'byte counts as bars');
    assert.match(tty.out, /Pull complete/);
    assert.match(tty.out, /built-42\r?\n/);
    assert.match(tty.out, /Successfully tagged cli-built:latest/);
    const quiet = await engine(['build', '-q', ctx]);
    assert.match(quiet.stdout, /^sha256:[0-9a-f]{64}\n$/, 'build -q prints the image ID alone');
    assert.equal((await engine(['rmi', 'cli-built'])).code, 0);
    assert.equal((await engine(['tag', base, 'busybox:latest'])).code, 0);
    assert.equal((await engine(['rmi', base])).code, 0);
  });

  test('cp into and out of a container; network and volume commands; system df; version', async () => {
    assert.equal((await engine(['run', '-d', '--name', 'cpx', 'busybox', 'sleep', '300'])).code, 0);
    const src = join(work, 'cp-src');
    await mkdir(join(src, 'sub'), { recursive: true });
    await writeFile(join(src, 'sub', 'f.txt'), 'copied in\n');
    assert.equal((await engine(['cp', src, 'cpx:/tmp/in'])).code, 0);
    assert.equal((await engine(['exec', 'cpx', 'cat', '/tmp/in/sub/f.txt'])).stdout, 'copied in\n');
    assert.equal((await engine(['cp', 'cpx:/tmp/in/sub/f.txt', join(work, 'back.txt')])).code, 0);
    assert.equal(await readFile(join(work, 'back.txt'), 'utf8'), 'copied in\n');
    assert.equal((await engine(['rm', '-f', 'cpx'])).code, 0);

    assert.match((await engine(['network', 'create', 'cli-net'])).stdout, /^[0-9a-f]{64}\n$/);
    assert.match(
      (await engine(['network', 'ls'])).stdout,
      /^NETWORK ID +NAME +DRIVER +SCOPE\n(.*\n)*[0-9a-f]{12} +cli-net +bridge +local\n/,
    );
    const onNet = await engine([
      'run',
      '--rm',
      '--network',
      'cli-net',
      '--network-alias',
      'svc',
      'busybox',
      'sh',
      '-c',
      'nslookup svc >/dev/null && echo resolved',
    ]);
    assert.equal(onNet.stdout, 'resolved\n', onNet.stderr);
    assert.equal((await engine(['network', 'rm', 'cli-net'])).stdout, 'cli-net\n');
    assert.equal((await engine(['volume', 'create', 'cli-vol'])).stdout, 'cli-vol\n');
    const vrun = await engine(['run', '--rm', '-v', 'cli-vol:/data', 'busybox', 'sh', '-c', 'echo kept > /data/f']);
    assert.equal(vrun.code, 0, vrun.stderr);
    assert.equal((await engine(['run', '--rm', '-v', 'cli-vol:/data', 'busybox', 'cat', '/data/f'])).stdout, 'kept\n');
    assert.match((await engine(['volume', 'ls'])).stdout, /^DRIVER +VOLUME NAME\nlocal +cli-vol\n/);
    assert.equal((await engine(['volume', 'inspect', '-f', '{{.Driver}}', 'cli-vol'])).stdout, 'local\n');
    assert.equal((await engine(['volume', 'rm', 'cli-vol'])).stdout, 'cli-vol\n');
    assert.match((await engine(['system', 'df'])).stdout, /^TYPE +TOTAL +ACTIVE +SIZE +RECLAIMABLE\nImages +1 +\d+ +\d[\d.]*[kMG]?B /);
    assert.equal((await engine(['version', '--format', '{{.Server.ApiVersion}}'])).stdout, '1.51\n');
  });

  test('save and load through files, stats --no-stream, events between two times, login stored in the config dir and logout', async () => {
    const tarPath = join(work, 'busybox.tar');
    assert.equal((await engine(['save', '-o', tarPath, 'busybox:latest'])).code, 0);
    assert.equal((await engine(['tag', 'busybox:latest', 'cli/saved:1'])).code, 0);
    assert.equal((await engine(['rmi', 'cli/saved:1'])).code, 0);
    const loaded = await engine(['load', '-i', tarPath]);
    assert.equal(loaded.code, 0, loaded.stderr);
    assert.match(loaded.stdout, /Loaded image: busybox:latest/);

    const since = Math.floor(Date.now() / 1000) - 1;
    const started = await engine(['run', '-d', '--name', 'st', 'busybox', 'sleep', '300']);
    assert.equal(started.code, 0, started.stderr);
    // Filtered by ID: names match by prefix (as dockerd), and a generated name such as stoic_… may share it.
    const stId = started.stdout.trim();
    const st = await engine(['stats', '--no-stream', 'st']);
    assert.equal(st.code, 0, st.stderr);
    assert.match(
      st.stdout,
      /^CONTAINER ID +NAME +CPU % +MEM USAGE \/ LIMIT +MEM % +NET I\/O +BLOCK I\/O +PIDS\n[0-9a-f]{12} +st +\d+\.\d\d% +[\d.]+[KMG]?i?B \/ [\d.]+[KMG]?i?B +[\d.]+% .* 1\n$/,
    );
    assert.equal((await engine(['rm', '-f', 'st'])).code, 0);
    const ev = await engine([
      'events',
      '--since',
      String(since),
      '--until',
      String(Math.floor(Date.now() / 1000) + 1),
      '--filter',
      `container=${stId}`,
      '--format',
      '{{.Action}}',
    ]);
    assert.equal(ev.code, 0, ev.stderr);
    assert.deepEqual(
      ev.stdout
        .trim()
        .split('\n')
        .filter((a) => ['create', 'start', 'kill', 'die', 'destroy'].includes(a)),
      ['create', 'start', 'kill', 'die', 'destroy'],
    );

    const login = await engine(['login', '-u', 'alice', '--password-stdin', reg.host], { input: 'secret\n' });
    assert.equal(login.code, 0, login.stderr);
    const cfg = JSON.parse(await readFile(join(work, 'config', 'config.json'), 'utf8'));
    assert.equal(Buffer.from(cfg.auths[reg.host].auth, 'base64').toString(), 'alice:secret');
    assert.equal((await engine(['logout', reg.host])).stdout, `Removing login credentials for ${reg.host}\n`);
    assert.equal(JSON.parse(await readFile(join(work, 'config', 'config.json'), 'utf8')).auths[reg.host], undefined);
  });

  test('TLS flags: --tlsverify with ENGINE_CERT_PATH; without a client certificate the daemon refuses', async () => {
    const host = `tcp://127.0.0.1:${tlsPort}`;
    const ok = await engine(['-H', host, '--tlsverify', 'ps'], { env: { ENGINE_CERT_PATH: certs.clientDir } });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^CONTAINER ID/);
    const viaEnv = await engine(['images', '-q'], {
      env: { ENGINE_HOST: host, ENGINE_TLS_VERIFY: '1', ENGINE_CERT_PATH: certs.clientDir },
    });
    assert.match(viaEnv.stdout, /^[0-9a-f]{12}\n/);
    const noCert = await engine(['-H', host, '--tlsverify', '--tlscacert', certs.ca, 'ps'], {
      env: { ENGINE_CERT_PATH: join(work, 'nothing') },
    });
    assert.equal(noCert.code, 1);
  });

  test('contexts: create one with TLS files, use it, ENGINE_HOST and -H override it, remove it', async () => {
    const noHost = { ENGINE_HOST: '' };
    const c = join(certs.clientDir);
    const created = await engine(
      [
        'context',
        'create',
        'remote-tls',
        '--description',
        'tls daemon',
        '--host',
        `tcp://127.0.0.1:${tlsPort}`,
        '--tlscacert',
        join(c, 'ca.pem'),
        '--tlscert',
        join(c, 'cert.pem'),
        '--tlskey',
        join(c, 'key.pem'),
      ],
      { env: noHost },
    );
    assert.equal(created.code, 0, created.stderr);
    assert.equal(
      (await engine(['--context', 'remote-tls', 'version', '--format', '{{.Server.ApiVersion}}'], { env: noHost })).stdout,
      '1.51\n',
    );
    assert.equal((await engine(['context', 'use', 'remote-tls'], { env: noHost })).code, 0);
    assert.equal((await engine(['context', 'show'], { env: noHost })).stdout, 'remote-tls\n');
    assert.match(
      (await engine(['context', 'ls'], { env: noHost })).stdout,
      /^NAME +DESCRIPTION +ENGINE ENDPOINT\ndefault +.*\nremote-tls \* +tls daemon +tcp:\/\/127\.0\.0\.1:\d+\n$/,
    );
    const viaCtx = await engine(['ps', '-a', '--format', '{{.Names}}'], { env: noHost });
    assert.equal(viaCtx.code, 0, viaCtx.stderr);
    assert.equal((await engine(['context', 'show'])).stdout, 'default\n', 'ENGINE_HOST wins over the current context');
    const both = await engine(['--context', 'remote-tls', '-H', d.host, 'ps']);
    assert.equal(both.code, 1);
    assert.match(both.stderr, /either specify --host or --context, not both/);
    assert.equal((await engine(['context', 'rm', 'remote-tls'], { env: noHost })).code, 1, 'in use: needs -f');
    assert.equal((await engine(['context', 'rm', '-f', 'remote-tls'], { env: noHost })).stdout, 'remote-tls\n');
    assert.equal((await engine(['context', 'show'], { env: noHost })).stdout, 'default\n');
  });

  test('help and completion from the compiled executable: engine system --help, unknown commands, the bash script', async () => {
    const h = await engine(['system', '--help']);
    assert.equal(h.code, 0, h.stderr);
    assert.match(h.stdout, /^Usage: {2}engine system COMMAND\n\n.*\n\nCommands:\n {2}df +\S/);
    const u = await engine(['frob']);
    assert.deepEqual(
      [u.code, u.stdout, u.stderr],
      [1, '', "engine: unknown command: engine frob\n\nRun 'engine --help' for more information\n"],
    );
    const script = join(work, 'engine.bash');
    await writeFile(script, (await engine(['completion', 'bash'])).stdout);
    const c = await run('bash', ['-c', `source ${script}; COMP_WORDS=(engine volume p); COMP_CWORD=2; _engine; echo "\${COMPREPLY[@]}"`]);
    assert.equal(c.stdout, 'prune\n', c.stderr);
  });

  test('ssh://: through a local sshd (public key, loopback), the remote runs engine system dial-stdio', async (t) => {
    if (!existsSync(SSHD)) return t.skip(`${SSHD} is missing (Debian openssh-server, in DEB_TEST of scripts/setup.sh)`);
    const dir = join(work, 'ssh');
    await mkdir(dir, { mode: 0o700 });
    for (const k of ['host_key', 'client_key']) {
      const r = await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, k)]);
      assert.equal(r.code, 0, r.stderr);
    }
    const pub = (await readFile(join(dir, 'client_key.pub'), 'utf8')).trim();
    // The remote PATH finds bin/engine (sshd's default PATH would not).
    await writeFile(join(dir, 'authorized_keys'), `environment="PATH=${join(REPO_ROOT, 'bin')}:/usr/bin:/bin" ${pub}\n`, { mode: 0o600 });
    const port = await freePort();
    await writeFile(
      join(dir, 'sshd_config'),
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${join(dir, 'host_key')}`,
        `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
        `PidFile ${join(dir, 'sshd.pid')}`,
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'UsePAM no',
        'StrictModes no',
        'PermitRootLogin prohibit-password',
        'PermitUserEnvironment yes',
        '',
      ].join('\n'),
    );
    await writeFile(
      join(dir, 'ssh_config'),
      [
        `Host *`,
        `  IdentityFile ${join(dir, 'client_key')}`,
        '  IdentitiesOnly yes',
        '  StrictHostKeyChecking no',
        '  UserKnownHostsFile /dev/null',
        '  LogLevel ERROR',
        '',
      ].join('\n'),
    );
    if (!existsSync('/run/sshd')) await mkdir('/run/sshd', { recursive: true, mode: 0o755 }); // sshd's privilege-separation directory
    const sshd: ChildProcess = spawn(SSHD, ['-D', '-e', '-f', join(dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let sshdLog = '';
    sshd.stderr!.on('data', (b) => (sshdLog += b));
    try {
      // A connection before sshd listens fails in ways the CLI may report only as a hang-up.
      for (let i = 0; i < 100 && !/Server listening/.test(sshdLog); i++) await new Promise((r) => setTimeout(r, 100));
      const sshEnv = { ENGINE_HOST: `ssh://root@127.0.0.1:${port}${d.socket}`, ENGINE_SSH_OPTS: `-F ${join(dir, 'ssh_config')}` };
      let ps = await engine(['ps', '-a', '--format', '{{.Names}}'], { env: sshEnv });
      for (let i = 0; i < 20 && ps.code !== 0 && /Connection refused/.test(ps.stderr); i++) {
        await new Promise((r) => setTimeout(r, 250)); // sshd still binding its port
        ps = await engine(['ps', '-a', '--format', '{{.Names}}'], { env: sshEnv });
      }
      assert.equal(ps.code, 0, `${ps.stderr}\nsshd: ${sshdLog}`);
      const r = await engine(['run', '--rm', '-i', 'busybox', 'sh', '-c', 'tr a-z A-Z; exit 6'], { env: sshEnv, input: 'over ssh\n' });
      assert.equal(r.code, 6, r.stderr);
      assert.equal(r.stdout, 'OVER SSH\n');
      assert.match((await engine(['version', '--format', '{{.Server.Version}}'], { env: sshEnv })).stdout, /^\d+\.\d+\.\d+/);
    } finally {
      sshd.kill('SIGTERM');
    }
  });
});
