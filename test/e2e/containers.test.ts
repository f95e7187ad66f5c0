// Issue 3: real containers through the docker CLI and raw HTTP — run, logs, stop, rm, wait,
// restart policies, AutoRemove, crash-safe state, runtimes, seccomp, OOM, filters, errors.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { clientShellLine } from '../helpers/cli-client.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';

describe('containers through the docker CLI', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => d?.cleanup());

  test('docker run --rm busybox echo hi prints hi, and exit codes propagate', async () => {
    const r = await d.docker(['run', '--rm', 'busybox', 'echo', 'hi']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'hi\n');
    const e = await d.docker(['run', '--rm', 'busybox', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
    assert.equal(e.code, 3);
    assert.equal(e.stdout, 'out\n');
    assert.equal(e.stderr, 'err\n');
    const ps = await d.docker(['ps', '-aq']);
    assert.equal(ps.stdout.trim(), '', 'run --rm left containers behind');
  });

  test('-d, logs -f, ps, stop and rm behave as against dockerd', async () => {
    const run = await d.docker([
      'run',
      '-d',
      '--name',
      'web',
      'busybox',
      'sh',
      '-c',
      'i=0; while true; do echo line $i; i=$((i+1)); sleep 0.2; done',
    ]);
    assert.equal(run.code, 0, run.stderr);
    const id = run.stdout.trim();
    assert.match(id, /^[0-9a-f]{64}$/);
    const ps = await d.docker(['ps', '--format', '{{.Names}} {{.Status}} {{.Image}}']);
    assert.match(ps.stdout, /^web Up .* busybox$/m);
    await until('some log lines', async () => ((await d.docker(['logs', 'web'])).stdout.includes('line 2') ? true : undefined));
    const follow = d.docker(['logs', '-f', 'web'], { timeoutMs: 30_000 });
    await new Promise((r) => setTimeout(r, 600));
    const stop = await d.docker(['stop', '-t', '1', 'web']);
    assert.equal(stop.code, 0, stop.stderr);
    const followed = await follow;
    assert.equal(followed.code, 0, 'logs -f must end when the container stops');
    assert.match(followed.stdout, /^line 0\nline 1\n/);
    const inspect = JSON.parse((await d.docker(['inspect', 'web'])).stdout)[0];
    assert.equal(inspect.State.Status, 'exited');
    assert.equal(inspect.State.Running, false);
    assert.equal(inspect.State.ExitCode, 137);
    assert.equal(inspect.Id, id);
    assert.equal(inspect.Name, '/web');
    const rm = await d.docker(['rm', 'web']);
    assert.equal(rm.code, 0, rm.stderr);
    assert.equal((await d.request('GET', `/containers/${id}/json`)).status, 404);
  });

  test('a TTY container logs raw bytes with \\r\\n', async () => {
    const r = await d.docker(['run', '-t', '--name', 'tty1', 'busybox', 'echo', 'tty-out']);
    assert.equal(r.code, 0, r.stderr);
    const logs = await d.request('GET', '/containers/tty1/logs?stdout=1&stderr=1');
    assert.equal(logs.status, 200);
    assert.equal(logs.text(), 'tty-out\r\n');
    await d.docker(['rm', '-f', 'tty1']);
  });

  test('name conflicts are 409 and unknown images 404', async () => {
    await d.docker(['create', '--name', 'dup', 'busybox', 'true']);
    const again = await d.request('POST', '/containers/create?name=dup', { body: { Image: 'busybox', Cmd: ['true'] } });
    assert.equal(again.status, 409);
    assert.match(again.json().message, /Conflict\. The container name "\/dup" is already in use by container "[0-9a-f]{64}"/);
    const missing = await d.request('POST', '/containers/create', { body: { Image: 'no-such-image:1' } });
    assert.equal(missing.status, 404);
    assert.match(missing.json().message, /No such image: no-such-image:1/);
    await d.docker(['rm', 'dup']);
  });

  test('bad create bodies are 400 JSON', async () => {
    const malformed = await d.request('POST', '/containers/create', {
      body: '{"Image": "busybox",',
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(malformed.status, 400);
    assert.equal(typeof malformed.json().message, 'string');
    const wrongType = await d.request('POST', '/containers/create', { body: { Image: 'busybox', Cmd: 42 } });
    assert.equal(wrongType.status, 400);
    assert.match(wrongType.json().message, /Cmd/);
    const badName = await d.request('POST', '/containers/create?name=bad%20name', { body: { Image: 'busybox' } });
    assert.equal(badName.status, 400);
    assert.match(badName.json().message, /Invalid container name/);
    const big = await d.request('POST', '/containers/create', {
      body: Buffer.alloc(20 * 1024 * 1024, 0x20),
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(big.status, 400);
    const policy = await d.request('POST', '/containers/create', {
      body: { Image: 'busybox', HostConfig: { RestartPolicy: { Name: 'sometimes' } } },
    });
    assert.equal(policy.status, 400);
  });

  test('wait conditions: not-running, next-exit, removed', async () => {
    const c = await d.request('POST', '/containers/create', { body: { Image: 'busybox', Cmd: ['sh', '-c', 'sleep 0.3; exit 5'] } });
    assert.equal(c.status, 201, c.text());
    const id = c.json().Id;
    const nextExit = d.request('POST', `/containers/${id}/wait?condition=next-exit`);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await d.request('POST', `/containers/${id}/start`)).status, 204);
    const w = await nextExit;
    assert.equal(w.status, 200);
    assert.deepEqual(w.json(), { StatusCode: 5, Error: null });
    const notRunning = await d.request('POST', `/containers/${id}/wait`);
    assert.equal(notRunning.json().StatusCode, 5);
    const removed = d.request('POST', `/containers/${id}/wait?condition=removed`);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await d.request('DELETE', `/containers/${id}`)).status, 204);
    assert.equal((await removed).json().StatusCode, 5);
    assert.equal((await d.request('POST', `/containers/${id}/wait`)).status, 404);
  });

  test('restart policy on-failure:2 restarts twice; AutoRemove removes', async () => {
    const r = await d.docker(['run', '-d', '--name', 'flaky', '--restart', 'on-failure:2', 'busybox', 'sh', '-c', 'exit 1']);
    assert.equal(r.code, 0, r.stderr);
    const state = await until('two restarts then exited', async () => {
      const i = JSON.parse((await d.docker(['inspect', 'flaky'])).stdout)[0];
      return i.RestartCount === 2 && i.State.Status === 'exited' ? i : undefined;
    });
    assert.equal(state.State.ExitCode, 1);
    await d.docker(['rm', '-f', 'flaky']);
    const auto = await d.docker(['run', '-d', '--rm', '--name', 'gone', 'busybox', 'true']);
    assert.equal(auto.code, 0, auto.stderr);
    await until('auto-removed', async () => ((await d.request('GET', '/containers/gone/json')).status === 404 ? true : undefined));
  });

  test('ps -a filters and ambiguous prefixes', async () => {
    await d.docker(['run', '--name', 'f-ok', '--label', 'team=a', 'busybox', 'true']);
    await d.docker(['run', '--name', 'f-bad', '--label', 'team=b', 'busybox', 'sh', '-c', 'exit 2']);
    const exited2 = await d.docker(['ps', '-a', '--filter', 'exited=2', '--format', '{{.Names}}']);
    assert.equal(exited2.stdout.trim(), 'f-bad');
    const label = await d.docker(['ps', '-a', '--filter', 'label=team=a', '--format', '{{.Names}}']);
    assert.equal(label.stdout.trim(), 'f-ok');
    const status = await d.docker(['ps', '-a', '--filter', 'status=exited', '--filter', 'name=f-', '--format', '{{.Names}}']);
    assert.deepEqual(status.stdout.trim().split('\n').sort(), ['f-bad', 'f-ok']);
    const ancestor = await d.docker(['ps', '-a', '--filter', 'ancestor=busybox', '--filter', 'name=f-ok', '--format', '{{.Names}}']);
    assert.equal(ancestor.stdout.trim(), 'f-ok');
    // Two containers share some first hex digit; that one-character prefix is ambiguous.
    const ids = (await d.docker(['ps', '-aq', '--no-trunc'])).stdout.trim().split('\n');
    const firsts = new Map<string, number>();
    for (const id of ids) firsts.set(id[0]!, (firsts.get(id[0]!) ?? 0) + 1);
    for (let i = 0; i < 20 && ![...firsts.values()].some((n) => n > 1); i++) {
      const extra = (await d.docker(['create', 'busybox', 'true'])).stdout.trim();
      firsts.set(extra[0]!, (firsts.get(extra[0]!) ?? 0) + 1);
    }
    const shared = [...firsts.entries()].find(([, n]) => n > 1)![0];
    const amb = await d.request('GET', `/containers/${shared}/json`);
    assert.ok(amb.status === 400 || amb.status === 409 || amb.status === 404, `status ${amb.status}`);
    assert.match(amb.json().message, /ambiguous|multiple/i);
    await d.docker(['container', 'prune', '-f']);
  });

  // A terminal for the docker CLI: script(1) gives it a pty of a chosen size; input is typed after a pause.
  async function inTerminal(command: string, typed: string[], pauseMs = 1500): Promise<{ code: number | null; out: string }> {
    const { spawn } = await import('node:child_process');
    // The client under test (cli-client.ts): docker, or engine in the twin run.
    const client = await clientShellLine(command, { ...process.env, DOCKER_HOST: d.host });
    return new Promise((resolve) => {
      const child = spawn('script', ['-qec', `stty rows 33 cols 111; ${client.line}`, '/dev/null'], { env: client.env });
      let out = '';
      child.stdout.on('data', (b) => (out += b));
      let i = 0;
      const typeNext = () => {
        if (i < typed.length) {
          child.stdin.write(typed[i++]!);
          setTimeout(typeNext, 700);
        } else setTimeout(() => child.stdin.end(), 2000);
      };
      setTimeout(typeNext, pauseMs);
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, out });
      });
    });
  }

  test('docker run -it gives a working shell whose size follows the terminal; exit codes propagate', async () => {
    const r = await inTerminal('docker run -it --rm busybox sh', ['stty size\n', 'echo hello-$((40+2))\n', 'exit 3\n']);
    assert.match(r.out, /33 111/);
    assert.match(r.out, /hello-42/);
    assert.equal(r.code, 3);
  });

  test('docker attach to a running container, then detach with ctrl-p ctrl-q: the container keeps running', async () => {
    assert.equal((await d.docker(['run', '-dit', '--name', 'att', 'busybox', 'sh'])).code, 0);
    const r = await inTerminal('docker attach att', ['echo attached-$((1+1))\n', '\x10\x11']);
    assert.match(r.out, /attached-2/);
    assert.match(r.out, /read escape sequence/);
    const state = JSON.parse((await d.docker(['inspect', 'att'])).stdout)[0].State;
    assert.equal(state.Status, 'running');
    await d.docker(['rm', '-f', 'att']);
  });

  test('the default seccomp profile blocks unshare -U; unconfined allows it', async () => {
    const blocked = await d.docker(['run', '--rm', 'busybox', 'unshare', '-U', 'true']);
    assert.notEqual(blocked.code, 0);
    const allowed = await d.docker(['run', '--rm', '--security-opt', 'seccomp=unconfined', 'busybox', 'unshare', '-U', 'true']);
    assert.equal(allowed.code, 0, allowed.stderr);
  });

  test('a memory limit that is hit reports OOMKilled', async () => {
    const r = await d.docker([
      'run',
      '--name',
      'oom',
      '-m',
      '8m',
      '--memory-swap',
      '8m',
      'busybox',
      'sh',
      '-c',
      'x=aaaaaaaaaaaaaaaa; while true; do x=$x$x; done',
    ]);
    assert.notEqual(r.code, 0);
    const i = JSON.parse((await d.docker(['inspect', 'oom'])).stdout)[0];
    assert.equal(i.State.OOMKilled, true);
    assert.equal(i.State.ExitCode, 137);
    await d.docker(['rm', 'oom']);
  });
});
