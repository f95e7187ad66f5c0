// Issue 3, part 1: the container endpoints against dockerd's wire shapes, status codes and stream
// formats (../shared/api/engine-api-v1.51.yaml), through raw HTTP, the docker CLI, docker-py and
// dockerode.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import type { Socket } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SupervisorClient } from '../../src/supervisor/client.ts';
import { run, startDaemon, type HttpResult, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { apiSpecMissing, definition, missingProperties, responseSchema, validate } from '../helpers/openapi.ts';
import { until } from '../helpers/until.ts';

function readdirSyncSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Mismatches against a path's 200 response schema; none to report where ../shared is absent. */
function conformance(value: unknown, path: string, method: string): string[] {
  return apiSpecMissing() ? [] : validate(value, responseSchema(path, method, '200'));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Frame {
  stream: number;
  data: Buffer;
}

/** Splits a multiplexed stream into its frames; every byte must belong to a well-formed frame. */
function demux(buf: Buffer): Frame[] {
  const frames: Frame[] = [];
  let off = 0;
  while (off < buf.length) {
    assert.ok(off + 8 <= buf.length, `truncated frame header at ${off} of ${buf.length}`);
    const stream = buf[off]!;
    assert.ok(stream === 0 || stream === 1 || stream === 2, `stream id ${stream} at ${off}`);
    assert.deepEqual([...buf.subarray(off + 1, off + 4)], [0, 0, 0], 'header bytes 1-3 must be zero');
    const size = buf.readUInt32BE(off + 4);
    assert.ok(off + 8 + size <= buf.length, `frame at ${off} claims ${size} bytes past the end`);
    frames.push({ stream, data: buf.subarray(off + 8, off + 8 + size) });
    off += 8 + size;
  }
  return frames;
}

function streamText(frames: Frame[], stream: number): string {
  return Buffer.concat(frames.filter((f) => f.stream === stream).map((f) => f.data)).toString();
}

describe('container API', () => {
  let d: TestDaemon;

  const api = (method: string, path: string, body?: unknown): Promise<HttpResult> =>
    d.request(method, path, body === undefined ? {} : { body });

  async function create(body: Record<string, unknown>, name?: string): Promise<string> {
    const r = await api('POST', `/containers/create${name ? `?name=${encodeURIComponent(name)}` : ''}`, { Image: 'busybox', ...body });
    assert.equal(r.status, 201, r.text());
    return r.json().Id;
  }

  async function runDetached(cmd: string[], extra: Record<string, unknown> = {}, name?: string): Promise<string> {
    const id = await create({ Cmd: cmd, ...extra }, name);
    const s = await api('POST', `/containers/${id}/start`);
    assert.equal(s.status, 204, s.text());
    return id;
  }

  async function inspect(ref: string): Promise<any> {
    const r = await api('GET', `/containers/${ref}/json`);
    assert.equal(r.status, 200, r.text());
    return r.json();
  }

  async function waitExit(ref: string): Promise<{ StatusCode: number; Error: unknown }> {
    const r = await api('POST', `/containers/${ref}/wait`);
    assert.equal(r.status, 200, r.text());
    return r.json();
  }

  async function forceRemove(...refs: string[]): Promise<void> {
    for (const ref of refs) await api('DELETE', `/containers/${ref}?force=1`);
  }

  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => d?.cleanup());

  // ---- statuses ----------------------------------------------------------------------------------

  test('create answers 201 with Id and a Warnings array; generated names follow the rule', async () => {
    const r = await api('POST', '/containers/create', { Image: 'busybox', Cmd: ['true'], HostConfig: { NetworkMode: 'none' } });
    assert.equal(r.status, 201, r.text());
    const body = r.json();
    assert.match(body.Id, /^[0-9a-f]{64}$/);
    assert.ok(Array.isArray(body.Warnings), `Warnings must be an array, got ${JSON.stringify(body.Warnings)}`);
    assert.deepEqual(body.Warnings, [], 'network mode none needs no warning');
    const i = await inspect(body.Id);
    assert.match(i.Name, /^\/[a-zA-Z0-9][a-zA-Z0-9_.-]+$/);
    assert.equal(i.State.Status, 'created');
    // The default (bridge) mode is real networking now: no warning either.
    const w = await api('POST', '/containers/create', { Image: 'busybox', Cmd: ['true'] });
    assert.equal(w.status, 201);
    assert.deepEqual(w.json().Warnings, []);
    await forceRemove(body.Id, w.json().Id);
  });

  test("create's platform (API 1.41+): the host's is served, another is dockerd's 404; an API 1.40 client's is ignored", async () => {
    const arch = process.arch === 'x64' ? 'amd64' : process.arch;
    const other = arch === 'amd64' ? 'arm64' : 'amd64';
    const same = await d.request('POST', `/v1.51/containers/create?platform=linux/${arch}`, { body: { Image: 'busybox', Cmd: ['true'] } });
    assert.equal(same.status, 201, same.text());
    const wrong = await d.request('POST', `/v1.51/containers/create?platform=linux/${other}`, {
      body: { Image: 'busybox', Cmd: ['true'] },
    });
    assert.equal(wrong.status, 404, wrong.text());
    assert.match(
      wrong.json().message,
      new RegExp(
        `^image with reference busybox was found but its platform \\(linux/${arch}\\) does not match the specified platform \\(linux/${other}\\)$`,
      ),
    );
    const old = await d.request('POST', `/v1.40/containers/create?platform=linux/${other}`, { body: { Image: 'busybox', Cmd: ['true'] } });
    assert.equal(old.status, 201, old.text());
    await forceRemove(same.json().Id, old.json().Id);
  });

  test('start 204 then 304; stop 204 then 304; restart 204; kill 409 when not running', async () => {
    const id = await create({ Cmd: ['sleep', '300'], HostConfig: { NetworkMode: 'none' } });
    assert.equal((await api('POST', `/containers/${id}/start`)).status, 204);
    const again = await api('POST', `/containers/${id}/start`);
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    assert.equal((await inspect(id)).State.Running, true);
    const started = (await inspect(id)).State.StartedAt;
    const restart = await api('POST', `/containers/${id}/restart?t=0`);
    assert.equal(restart.status, 204, restart.text());
    const afterRestart = await inspect(id);
    assert.equal(afterRestart.State.Running, true);
    assert.notEqual(afterRestart.State.StartedAt, started, 'restart starts the process anew');
    assert.equal(afterRestart.RestartCount, 0, 'a manual restart is not counted');
    const t0 = Date.now();
    assert.equal((await api('POST', `/containers/${id}/stop?t=0`)).status, 204);
    assert.ok(Date.now() - t0 < 5000, 't=0 kills at once');
    const stopped = await inspect(id);
    assert.equal(stopped.State.Status, 'exited');
    assert.equal(stopped.State.ExitCode, 137);
    assert.notEqual(stopped.State.FinishedAt, '0001-01-01T00:00:00Z');
    assert.equal((await api('POST', `/containers/${id}/stop`)).status, 304);
    const kill = await api('POST', `/containers/${id}/kill`);
    assert.equal(kill.status, 409);
    assert.match(kill.json().message, new RegExp(`^cannot kill container: ${id}: Container ${id} is not running$`));
    // restart of a stopped container starts it
    assert.equal((await api('POST', `/containers/${id}/restart`)).status, 204);
    assert.equal((await inspect(id)).State.Running, true);
    for (const path of ['start', 'stop', 'restart', 'kill'])
      assert.equal((await api('POST', `/containers/no-such-thing/${path}`)).status, 404, path);
    assert.equal(
      (await api('POST', '/containers/no-such-thing/kill')).json().message,
      'cannot kill container: no-such-thing: No such container: no-such-thing',
    );
    await forceRemove(id);
  });

  test("a start that fails records Error and dockerd's exit code (127 not found, 126 not executable)", async () => {
    for (const [cmd, code] of [
      ['no-such-command', 127],
      ['/etc', 126],
    ] as const) {
      const id = await create({ Cmd: [cmd], HostConfig: { NetworkMode: 'none' } });
      const r = await api('POST', `/containers/${id}/start`);
      assert.equal(r.status, 400, r.text());
      assert.match(r.json().message, cmd === '/etc' ? /permission denied/ : /executable file not found/);
      const i = await inspect(id);
      assert.equal(i.State.Status, 'created');
      assert.equal(i.State.Running, false);
      assert.equal(i.State.ExitCode, code);
      assert.equal(i.State.Error, r.json().message);
      const cli = await d.docker(['start', id]);
      assert.equal(cli.code, 1);
      await forceRemove(id);
    }
  });

  test('stop sends the stop signal first: signal= and StopSignal are honoured, t is the grace', async () => {
    const script = 'trap "exit 7" USR1; trap "exit 8" TERM; while true; do sleep 0.1; done';
    const a = await runDetached(['sh', '-c', script], { HostConfig: { NetworkMode: 'none' } });
    await sleep(300);
    assert.equal((await api('POST', `/containers/${a}/stop?signal=SIGUSR1&t=10`)).status, 204);
    assert.equal((await inspect(a)).State.ExitCode, 7);
    const b = await runDetached(['sh', '-c', script], { StopSignal: 'SIGUSR1', HostConfig: { NetworkMode: 'none' } });
    await sleep(300);
    assert.equal((await api('POST', `/containers/${b}/stop`)).status, 204);
    assert.equal((await inspect(b)).State.ExitCode, 7);
    // A process that ignores the signal is killed when the grace runs out.
    const c = await runDetached(['sh', '-c', 'trap "" TERM; while true; do sleep 0.1; done'], { HostConfig: { NetworkMode: 'none' } });
    await sleep(300);
    const t0 = Date.now();
    assert.equal((await api('POST', `/containers/${c}/stop?t=1`)).status, 204);
    const took = Date.now() - t0;
    assert.ok(took >= 900 && took < 6000, `stop -t 1 took ${took} ms`);
    assert.equal((await inspect(c)).State.ExitCode, 137);
    await forceRemove(a, b, c);
  });

  test('kill sends the signal; 204', async () => {
    const id = await runDetached(['sh', '-c', 'trap "exit 9" HUP; while true; do sleep 0.1; done'], {
      HostConfig: { NetworkMode: 'none' },
    });
    await sleep(300);
    assert.equal((await api('POST', `/containers/${id}/kill?signal=HUP`)).status, 204);
    assert.equal((await waitExit(id)).StatusCode, 9);
    const bad = await runDetached(['sleep', '300'], { HostConfig: { NetworkMode: 'none' } });
    const badSig = await api('POST', `/containers/${bad}/kill?signal=NOPE`);
    assert.equal(badSig.status, 400, badSig.text());
    assert.equal((await api('POST', `/containers/${bad}/kill`)).status, 204);
    assert.equal((await inspect(bad)).State.Running, false, 'SIGKILL is waited for before the answer');
    await forceRemove(id, bad);
  });

  test('pause and unpause: 204, 409 when already in that state or not running', async () => {
    const id = await runDetached(['sleep', '300'], { HostConfig: { NetworkMode: 'none' } });
    assert.equal((await api('POST', `/containers/${id}/pause`)).status, 204);
    const i = await inspect(id);
    assert.equal(i.State.Status, 'paused');
    assert.equal(i.State.Paused, true);
    assert.equal(i.State.Running, true);
    const again = await api('POST', `/containers/${id}/pause`);
    assert.equal(again.status, 409);
    assert.equal(again.json().message, `Container ${id} is already paused`);
    assert.equal((await api('POST', `/containers/${id}/unpause`)).status, 204);
    assert.equal((await inspect(id)).State.Status, 'running');
    const notPaused = await api('POST', `/containers/${id}/unpause`);
    assert.equal(notPaused.status, 409);
    assert.equal(notPaused.json().message, `Container ${id} is not paused`);
    // A paused container cannot be started or removed without force, but it can be stopped.
    assert.equal((await api('POST', `/containers/${id}/pause`)).status, 204);
    const startPaused = await api('POST', `/containers/${id}/start`);
    assert.equal(startPaused.status, 409);
    assert.equal(startPaused.json().message, 'cannot start a paused container, try unpause instead');
    const rmPaused = await api('DELETE', `/containers/${id}`);
    assert.equal(rmPaused.status, 409);
    assert.match(rmPaused.json().message, /container is paused and must be unpaused first$/);
    assert.equal((await api('POST', `/containers/${id}/stop?t=0`)).status, 204);
    const stopped = await inspect(id);
    assert.equal(stopped.State.Status, 'exited');
    assert.equal(stopped.State.Paused, false);
    const pauseStopped = await api('POST', `/containers/${id}/pause`);
    assert.equal(pauseStopped.status, 409);
    assert.equal(pauseStopped.json().message, `Container ${id} is not running`);
    assert.equal((await api('POST', `/containers/nope-nope/pause`)).status, 404);
    // A paused container can be killed; and force-removed.
    const k = await runDetached(['sleep', '300'], { HostConfig: { NetworkMode: 'none' } });
    assert.equal((await api('POST', `/containers/${k}/pause`)).status, 204);
    const t0 = Date.now();
    assert.equal((await api('POST', `/containers/${k}/kill`)).status, 204);
    assert.ok(Date.now() - t0 < 5000, `kill of a paused container took ${Date.now() - t0} ms`);
    const killed = await inspect(k);
    assert.equal(killed.State.Status, 'exited');
    assert.equal(killed.State.ExitCode, 137);
    const f = await runDetached(['sleep', '300'], { HostConfig: { NetworkMode: 'none' } });
    assert.equal((await api('POST', `/containers/${f}/pause`)).status, 204);
    assert.equal((await api('DELETE', `/containers/${f}?force=1`)).status, 204);
    await forceRemove(id, k);
  });

  test('wait: 200 with StatusCode and Error; 404 for an unknown container; 400 for a bad condition', async () => {
    const id = await runDetached(['sh', '-c', 'exit 4'], { HostConfig: { NetworkMode: 'none' } });
    const w = await api('POST', `/containers/${id}/wait?condition=not-running`);
    assert.equal(w.status, 200);
    assert.equal(w.headers['content-type'], 'application/json');
    assert.deepEqual(w.json(), { StatusCode: 4, Error: null });
    const unknown = await api('POST', '/containers/does-not-exist/wait');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json().message, 'No such container: does-not-exist');
    const bad = await api('POST', `/containers/${id}/wait?condition=whenever`);
    assert.equal(bad.status, 400);
    assert.match(bad.json().message, /invalid condition: "whenever"/);
    await forceRemove(id);
  });

  test('DELETE: 204; 409 for a running container without force; 404 unknown', async () => {
    const id = await runDetached(['sleep', '300'], { HostConfig: { NetworkMode: 'none' } }, 'del-me');
    // dockerd quotes the reference as the request gave it (containerRm's name), ID or name.
    const running = await api('DELETE', `/containers/${id}`);
    assert.equal(running.status, 409);
    assert.equal(
      running.json().message,
      `cannot remove container "${id}": container is running: stop the container before removing or force remove`,
    );
    const byName = await api('DELETE', '/containers/del-me');
    assert.equal(byName.status, 409);
    assert.equal(
      byName.json().message,
      'cannot remove container "del-me": container is running: stop the container before removing or force remove',
    );
    assert.equal((await inspect(id)).State.Running, true, 'a refused delete leaves it alone');
    const forced = await api('DELETE', '/containers/del-me?force=1');
    assert.equal(forced.status, 204);
    assert.equal(forced.body.length, 0);
    assert.equal((await api('GET', `/containers/${id}/json`)).status, 404);
    const gone = await api('DELETE', `/containers/${id}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.json().message, `No such container: ${id}`);
    // The name is free again.
    const again = await create({ Cmd: ['true'], HostConfig: { NetworkMode: 'none' } }, 'del-me');
    await forceRemove(again);
  });

  test('rename: 204; 409 when the name is taken; 400 for the same or an invalid name', async () => {
    const a = await create({ Cmd: ['true'], HostConfig: { NetworkMode: 'none' } }, 'ren-a');
    const b = await create({ Cmd: ['true'], HostConfig: { NetworkMode: 'none' } }, 'ren-b');
    const ok = await api('POST', '/containers/ren-a/rename?name=ren-c');
    assert.equal(ok.status, 204, ok.text());
    assert.equal((await inspect(a)).Name, '/ren-c');
    assert.equal((await api('GET', '/containers/ren-a/json')).status, 404, 'the old name is released');
    const taken = await api('POST', `/containers/${a}/rename?name=ren-b`);
    assert.equal(taken.status, 409);
    assert.equal(
      taken.json().message,
      `Conflict. The container name "/ren-b" is already in use by container "${b}". You have to remove (or rename) that container to be able to reuse that name.`,
    );
    const same = await api('POST', `/containers/${a}/rename?name=ren-c`);
    assert.equal(same.status, 400);
    const invalid = await api('POST', `/containers/${a}/rename?name=${encodeURIComponent('bad name!')}`);
    assert.equal(invalid.status, 400);
    assert.match(invalid.json().message, /Invalid container name/);
    const cli = await d.docker(['rename', 'ren-c', 'ren-d']);
    assert.equal(cli.code, 0, cli.stderr);
    assert.equal((await inspect(a)).Name, '/ren-d');
    // The old name can be used by a new container; the store keeps the rename across a lookup by name.
    const c = await create({ Cmd: ['true'], HostConfig: { NetworkMode: 'none' } }, 'ren-c');
    await forceRemove(a, b, c);
  });
  // ---- update, resize, top, prune ----------------------------------------------------------------

  /** The host path of a v1 controller's cgroup (or the v2 unified one) of a running process. */
  function cgroupDir(pid: number, controller: string): string {
    const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n');
    for (const l of lines) {
      const [, ctrls, path] = l.split(':');
      if (ctrls!.split(',').includes(controller)) {
        const mount = readdirSyncSafe('/sys/fs/cgroup').find(
          (m) => m.split(',').includes(controller) && existsSync(join('/sys/fs/cgroup', m, path!)),
        );
        return join('/sys/fs/cgroup', mount ?? controller, path!);
      }
    }
    const unified = lines.find((l) => l.startsWith('0::'));
    return join('/sys/fs/cgroup', unified!.slice(3));
  }

  test('update: 200 {Warnings: []}; new memory and CPU limits reach the live cgroup; RestartPolicy changes', async () => {
    const id = await runDetached(['sleep', '300'], { HostConfig: { NetworkMode: 'none', Memory: 64 << 20 } });
    const pid = (await inspect(id)).State.Pid;
    assert.ok(pid > 0);
    const v2 = !existsSync('/sys/fs/cgroup/memory');
    const memFile = v2 ? join(cgroupDir(pid, 'memory'), 'memory.max') : join(cgroupDir(pid, 'memory'), 'memory.limit_in_bytes');
    assert.equal(readFileSync(memFile, 'utf8').trim(), String(64 << 20));
    const r = await api('POST', `/containers/${id}/update`, {
      Memory: 96 << 20,
      MemorySwap: -1,
      NanoCpus: 500_000_000,
      RestartPolicy: { Name: 'on-failure', MaximumRetryCount: 3 },
    });
    assert.equal(r.status, 200, r.text());
    assert.deepEqual(r.json(), { Warnings: [] });
    assert.equal(readFileSync(memFile, 'utf8').trim(), String(96 << 20));
    if (v2) {
      assert.equal(readFileSync(join(cgroupDir(pid, 'cpu'), 'cpu.max'), 'utf8').trim(), '50000 100000');
    } else {
      const cpu = cgroupDir(pid, 'cpu');
      assert.equal(readFileSync(join(cpu, 'cpu.cfs_quota_us'), 'utf8').trim(), '50000');
      assert.equal(readFileSync(join(cpu, 'cpu.cfs_period_us'), 'utf8').trim(), '100000');
    }
    const i = await inspect(id);
    assert.equal(i.HostConfig.Memory, 96 << 20);
    assert.equal(i.HostConfig.NanoCpus, 500_000_000);
    assert.deepEqual(i.HostConfig.RestartPolicy, { Name: 'on-failure', MaximumRetryCount: 3 });
    // The CLI's update goes through the same endpoint.
    const cli = await d.docker(['update', '--memory', '128m', '--memory-swap', '256m', '--restart', 'always', id]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.equal(readFileSync(memFile, 'utf8').trim(), String(128 << 20));
    assert.equal((await inspect(id)).HostConfig.RestartPolicy.Name, 'always');
    // The CLI sends an empty RestartPolicy with every update: it must not reset the policy.
    assert.equal((await d.docker(['update', '--cpu-shares', '256', id])).code, 0);
    const after = await inspect(id);
    assert.equal(after.HostConfig.RestartPolicy.Name, 'always');
    assert.equal(after.HostConfig.CpuShares, 256);
    assert.equal(after.HostConfig.Memory, 128 << 20);
    const badPolicy = await api('POST', `/containers/${id}/update`, { RestartPolicy: { Name: 'sometimes' } });
    assert.equal(badPolicy.status, 400);
    assert.match(badPolicy.json().message, /invalid restart policy/);
    // Limits dockerd refuses change nothing.
    const refused = await api('POST', `/containers/${id}/update`, { Memory: 1024 * 1024 * 1024, MemorySwap: 512 * 1024 * 1024 });
    assert.equal(refused.status, 400, refused.text());
    assert.equal(refused.json().message, 'Minimum memoryswap limit should be larger than memory limit, see usage');
    const tiny = await api('POST', `/containers/${id}/update`, { Memory: 1024 });
    assert.equal(tiny.status, 400);
    assert.equal(tiny.json().message, 'Minimum memory limit allowed is 6MB');
    assert.equal((await inspect(id)).HostConfig.Memory, 128 << 20);
    assert.equal(readFileSync(memFile, 'utf8').trim(), String(128 << 20));
    // AutoRemove containers keep "no"
    const auto = await create({ Cmd: ['sleep', '1'], HostConfig: { NetworkMode: 'none', AutoRemove: true } });
    const autoUpd = await api('POST', `/containers/${auto}/update`, { RestartPolicy: { Name: 'always' } });
    assert.equal(autoUpd.status, 400);
    assert.equal((await inspect(auto)).HostConfig.RestartPolicy.Name, 'no');
    await forceRemove(auto);
    const unknown = await api('POST', '/containers/nope-nope/update', { Memory: 1 << 20 });
    assert.equal(unknown.status, 404);
    await forceRemove(id);
  });

  test('resize: 200 for a running TTY container; 409 when not running', async () => {
    const id = await runDetached(['sh', '-c', 'while true; do stty size; sleep 0.2; done'], {
      Tty: true,
      HostConfig: { NetworkMode: 'none' },
    });
    const r = await api('POST', `/containers/${id}/resize?h=33&w=101`);
    assert.equal(r.status, 200, r.text());
    await until('the new size inside', async () => {
      const logs = await api('GET', `/containers/${id}/logs?stdout=1&tail=2`);
      return logs.text().includes('33 101') ? true : undefined;
    });
    assert.equal((await api('POST', `/containers/${id}/resize?h=-1&w=10`)).status, 400);
    const plain = await runDetached(['sleep', '300'], { HostConfig: { NetworkMode: 'none' } });
    assert.equal((await api('POST', `/containers/${plain}/resize?h=10&w=10`)).status, 200, 'a non-TTY container ignores a resize');
    await forceRemove(plain);
    assert.equal((await api('POST', `/containers/${id}/stop?t=0`)).status, 204);
    const stopped = await api('POST', `/containers/${id}/resize?h=10&w=10`);
    assert.equal(stopped.status, 409);
    assert.equal(stopped.json().message, `Container ${id} is not running`);
    await forceRemove(id);
  });

  test('top: 200 with Titles and Processes; ps_args; 409 when not running', async () => {
    const id = await runDetached(['sh', '-c', 'sleep 301 & sleep 302 & wait'], { HostConfig: { NetworkMode: 'none' } });
    await sleep(300);
    const r = await api('GET', `/containers/${id}/top`);
    assert.equal(r.status, 200, r.text());
    const top = r.json();
    assert.deepEqual(conformance(top, '/containers/{id}/top', 'get'), []);
    assert.ok(top.Titles.includes('PID') && top.Titles.includes('CMD'), JSON.stringify(top.Titles));
    const cmds = top.Processes.map((p: string[]) => p[top.Titles.indexOf('CMD')]);
    assert.ok(cmds.includes('sleep 301') && cmds.includes('sleep 302'), JSON.stringify(cmds));
    assert.equal(top.Processes.length, 3, "only the container's processes: sh and two sleeps");
    for (const p of top.Processes) assert.equal(p.length, top.Titles.length);
    const aux = (await api('GET', `/containers/${id}/top?ps_args=aux`)).json();
    assert.deepEqual(aux.Titles.slice(0, 3), ['USER', 'PID', '%CPU']);
    assert.equal(aux.Titles.at(-1), 'COMMAND');
    assert.equal(aux.Processes.length, 3);
    assert.ok(aux.Processes.some((p: string[]) => p.at(-1) === 'sleep 302'));
    const cli = await d.docker(['top', id]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /sleep 301/);
    assert.equal((await api('POST', `/containers/${id}/kill`)).status, 204);
    const stopped = await api('GET', `/containers/${id}/top`);
    assert.equal(stopped.status, 409);
    assert.equal(stopped.json().message, `Container ${id} is not running`);
    await forceRemove(id);
  });

  test('prune: 200 {ContainersDeleted, SpaceReclaimed}; label and until filters; null when nothing goes', async () => {
    const keep = await runDetached(['sleep', '300'], { HostConfig: { NetworkMode: 'none' } });
    const a = await runDetached(['sh', '-c', 'head -c 300000 /dev/zero > /blob'], {
      Labels: { prune: 'yes' },
      HostConfig: { NetworkMode: 'none' },
    });
    const b = await runDetached(['true'], { Labels: { prune: 'no' }, HostConfig: { NetworkMode: 'none' } });
    await waitExit(a);
    await waitExit(b);
    const bad = await api('POST', `/containers/prune?filters=${encodeURIComponent(JSON.stringify({ name: ['x'] }))}`);
    assert.equal(bad.status, 400);
    const future = await api(
      'POST',
      `/containers/prune?filters=${encodeURIComponent(JSON.stringify({ until: ['2000-01-01T00:00:00Z'] }))}`,
    );
    assert.equal(future.status, 200);
    assert.deepEqual(future.json(), { ContainersDeleted: null, SpaceReclaimed: 0 });
    const r = await api('POST', `/containers/prune?filters=${encodeURIComponent(JSON.stringify({ label: ['prune=yes'] }))}`);
    assert.equal(r.status, 200, r.text());
    const body = r.json();
    assert.deepEqual(conformance(body, '/containers/prune', 'post'), []);
    assert.deepEqual(body.ContainersDeleted, [a]);
    assert.ok(body.SpaceReclaimed >= 300000, `SpaceReclaimed ${body.SpaceReclaimed}`);
    const neg = await api('POST', `/containers/prune?filters=${encodeURIComponent(JSON.stringify({ 'label!': ['prune=no'] }))}`);
    assert.equal(neg.status, 200);
    assert.equal((neg.json().ContainersDeleted ?? []).includes(b), false);
    const all = (await api('POST', '/containers/prune')).json();
    assert.ok(all.ContainersDeleted.includes(b));
    assert.ok(!all.ContainersDeleted.includes(keep), 'running containers stay');
    assert.equal((await inspect(keep)).State.Running, true);
    await forceRemove(keep);
  });

  // ---- logs --------------------------------------------------------------------------------------

  test('logs: multiplexed framing with stream ids, stdout/stderr selection, tail, timestamps, since/until', async () => {
    const id = await runDetached(
      ['sh', '-c', 'echo out1; sleep 0.1; echo err1 >&2; sleep 1.2; echo out2; sleep 0.1; echo err2 >&2; sleep 0.1; printf "no-newline"'],
      { HostConfig: { NetworkMode: 'none' } },
    );
    await waitExit(id);
    const both = await api('GET', `/containers/${id}/logs?stdout=1&stderr=1`);
    assert.equal(both.status, 200);
    assert.equal(both.headers['content-type'], 'application/vnd.docker.multiplexed-stream');
    const frames = demux(both.body);
    assert.equal(streamText(frames, 1), 'out1\nout2\nno-newline');
    assert.equal(streamText(frames, 2), 'err1\nerr2\n');
    assert.ok(frames.every((f) => f.stream === 1 || f.stream === 2));
    const outOnly = demux((await api('GET', `/containers/${id}/logs?stdout=1`)).body);
    assert.ok(outOnly.every((f) => f.stream === 1));
    assert.equal(streamText(outOnly, 1), 'out1\nout2\nno-newline');
    const errOnly = demux((await api('GET', `/containers/${id}/logs?stderr=1`)).body);
    assert.ok(errOnly.every((f) => f.stream === 2));
    assert.equal(streamText(errOnly, 2), 'err1\nerr2\n');
    const none = await api('GET', `/containers/${id}/logs`);
    assert.equal(none.status, 400);
    assert.equal(none.json().message, 'Bad parameters: you must choose at least one stream');
    const tail = demux((await api('GET', `/containers/${id}/logs?stdout=1&stderr=1&tail=2`)).body);
    assert.deepEqual(
      tail.map((f) => f.data.toString()),
      ['err2\n', 'no-newline'],
    );
    const tail0 = await api('GET', `/containers/${id}/logs?stdout=1&stderr=1&tail=0`);
    assert.equal(tail0.body.length, 0);
    const ts = demux((await api('GET', `/containers/${id}/logs?stdout=1&stderr=1&timestamps=1`)).body);
    const stamps = ts.map((f) => {
      const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z) (.*)$/s.exec(f.data.toString());
      assert.ok(m, `timestamped line ${JSON.stringify(f.data.toString())}`);
      return { at: m[1]!, text: m[2]! };
    });
    assert.deepEqual(
      stamps.map((s) => s.text),
      ['out1\n', 'err1\n', 'out2\n', 'err2\n', 'no-newline'],
    );
    // since/until in unix seconds with a fraction, between the two bursts (1.2 s apart).
    const secs = (iso: string) => Date.parse(iso) / 1000;
    const mid = ((secs(stamps[1]!.at) + secs(stamps[2]!.at)) / 2).toFixed(3);
    const since = demux((await api('GET', `/containers/${id}/logs?stdout=1&stderr=1&since=${mid}`)).body);
    assert.deepEqual(
      since.map((f) => f.data.toString()),
      ['out2\n', 'err2\n', 'no-newline'],
    );
    const untilR = demux((await api('GET', `/containers/${id}/logs?stdout=1&stderr=1&until=${mid}`)).body);
    assert.deepEqual(
      untilR.map((f) => f.data.toString()),
      ['out1\n', 'err1\n'],
    );
    const unknown = await api('GET', '/containers/nope-nope/logs?stdout=1');
    assert.equal(unknown.status, 404);
    const cli = await d.docker(['logs', '--tail', '1', id]);
    assert.equal(cli.stdout, 'no-newline');
    await forceRemove(id);
  });

  test('logs follow streams while the container runs and ends when it exits; TTY logs are raw', async () => {
    const id = await runDetached(['sh', '-c', 'for i in 1 2 3 4 5; do echo tick $i; sleep 0.3; done'], {
      HostConfig: { NetworkMode: 'none' },
    });
    const chunks: Array<{ at: number; buf: Buffer }> = [];
    const t0 = Date.now();
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({ socketPath: d.socket, path: `/containers/${id}/logs?stdout=1&stderr=1&follow=1`, method: 'GET' }, (res) => {
        res.on('data', (c: Buffer) => chunks.push({ at: Date.now() - t0, buf: c }));
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(status, 200);
    const frames = demux(Buffer.concat(chunks.map((c) => c.buf)));
    assert.equal(streamText(frames, 1), 'tick 1\ntick 2\ntick 3\ntick 4\ntick 5\n');
    assert.ok(chunks.at(-1)!.at - chunks[0]!.at >= 600, 'lines arrived as they were written, not all at the end');
    const tty = await runDetached(['sh', '-c', 'echo to-out; echo to-err >&2'], { Tty: true, HostConfig: { NetworkMode: 'none' } });
    await waitExit(tty);
    const raw = await api('GET', `/containers/${tty}/logs?stdout=1&stderr=1`);
    assert.equal(raw.headers['content-type'], 'application/vnd.docker.raw-stream');
    assert.equal(raw.text(), 'to-out\r\nto-err\r\n');
    await forceRemove(id, tty);
  });
  // ---- inspect and list against the OpenAPI description -----------------------------------------

  test('inspect and list JSON conform to the API description; size=1 adds SizeRw/SizeRootFs', async (t) => {
    const missing = apiSpecMissing();
    if (missing) return t.skip(missing);
    const bindDir = await mkdtemp(join(tmpdir(), 'engine-bind-'));
    const body = {
      Cmd: ['sh', '-c', 'head -c 200000 /dev/zero > /rw-data; sleep 300'],
      Env: ['FOO=bar', 'EMPTY='],
      Labels: { 'com.example.team': 'core', tier: 'db' },
      ExposedPorts: { '8080/tcp': {}, '53/udp': {} },
      WorkingDir: '/tmp',
      User: '0:0',
      Hostname: 'api-host',
      StopSignal: 'SIGINT',
      StopTimeout: 7,
      Volumes: { '/data': {} },
      Healthcheck: { Test: ['NONE'] },
      HostConfig: {
        NetworkMode: 'none',
        Binds: [`${bindDir}:/bound:ro`],
        Tmpfs: { '/scratch': 'size=1m' },
        RestartPolicy: { Name: 'on-failure', MaximumRetryCount: 2 },
        Memory: 32 << 20,
        CpuShares: 512,
        PidsLimit: 100,
        CapAdd: ['NET_ADMIN'],
        Ulimits: [{ Name: 'nofile', Soft: 1024, Hard: 2048 }],
      },
    };
    const id = await create(body, 'shape-test');
    const started = await api('POST', `/containers/${id}/start`);
    assert.equal(started.status, 204, started.text());
    await sleep(500);
    const r = await api('GET', `/containers/${id}/json?size=1`);
    assert.equal(r.status, 200);
    const i = r.json();
    const inspectSchema = responseSchema('/containers/{id}/json', 'get', '200');
    assert.deepEqual(validate(i, inspectSchema), []);
    assert.deepEqual(
      missingProperties(i, inspectSchema).filter((k) => !['ImageManifestDescriptor', 'Storage'].includes(k)),
      [],
      'inspect lacks fields',
    );
    assert.deepEqual(
      missingProperties(i.State, definition('ContainerState')).filter((k) => k !== 'Health'),
      [],
    );
    assert.deepEqual(validate(i.Config, definition('ContainerConfig')), []);
    // Config is the Config part of the body only; unset Entrypoint/OnBuild are null as in dockerd.
    assert.ok(!('HostConfig' in i.Config) && !('NetworkingConfig' in i.Config), `stray keys in Config: ${Object.keys(i.Config)}`);
    assert.equal(i.Config.Entrypoint, null);
    assert.equal(i.Config.OnBuild, null);
    assert.deepEqual(validate(i.HostConfig, definition('HostConfig')), []);
    // State
    assert.equal(i.State.Status, 'running');
    assert.equal(i.State.Running, true);
    assert.equal(i.State.Paused, false);
    assert.equal(i.State.Restarting, false);
    assert.equal(i.State.OOMKilled, false);
    assert.equal(i.State.Dead, false);
    assert.ok(i.State.Pid > 0);
    assert.equal(i.State.ExitCode, 0);
    assert.equal(i.State.Error, '');
    assert.match(i.State.StartedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
    assert.equal(i.State.FinishedAt, '0001-01-01T00:00:00Z');
    // Round trip of what was sent
    assert.equal(i.Id, id);
    assert.equal(i.Name, '/shape-test');
    assert.equal(i.Path, 'sh');
    assert.deepEqual(i.Args, ['-c', body.Cmd[2]]);
    assert.deepEqual(i.Config.Cmd, body.Cmd);
    assert.equal(i.Config.Image, 'busybox');
    assert.match(i.Image, /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(i.Config.Labels, body.Labels);
    assert.ok(i.Config.Env.includes('FOO=bar') && i.Config.Env.includes('EMPTY='), JSON.stringify(i.Config.Env));
    assert.ok(
      i.Config.Env.some((e: string) => e.startsWith('PATH=')),
      'the image PATH is merged in',
    );
    assert.deepEqual(i.Config.ExposedPorts, body.ExposedPorts);
    assert.deepEqual(i.Config.Volumes, body.Volumes);
    assert.deepEqual(i.Config.Healthcheck, body.Healthcheck);
    assert.equal(i.Config.WorkingDir, '/tmp');
    assert.equal(i.Config.User, '0:0');
    assert.equal(i.Config.Hostname, 'api-host');
    assert.equal(i.Config.StopSignal, 'SIGINT');
    assert.equal(i.Config.StopTimeout, 7);
    assert.deepEqual(i.HostConfig.RestartPolicy, body.HostConfig.RestartPolicy);
    assert.deepEqual(i.HostConfig.Binds, body.HostConfig.Binds);
    assert.deepEqual(i.HostConfig.Tmpfs, body.HostConfig.Tmpfs);
    assert.equal(i.HostConfig.Memory, 32 << 20);
    assert.equal(i.HostConfig.CpuShares, 512);
    assert.equal(i.HostConfig.PidsLimit, 100);
    assert.deepEqual(i.HostConfig.CapAdd, ['NET_ADMIN']);
    assert.deepEqual(i.HostConfig.Ulimits, body.HostConfig.Ulimits);
    assert.equal(i.HostConfig.NetworkMode, 'none');
    assert.deepEqual(i.HostConfig.LogConfig, { Type: 'json-file', Config: {} });
    // Mounts: the bind, read-only, with the mode text it was given; --tmpfs mounts are not listed (as in dockerd)
    // …and the image-style VOLUME /data becomes an anonymous local volume, as in dockerd.
    assert.deepEqual(i.Mounts[0], { Type: 'bind', Source: bindDir, Destination: '/bound', Mode: 'ro', RW: false, Propagation: 'rprivate' });
    assert.equal(i.Mounts.length, 2);
    const vol = i.Mounts[1];
    assert.match(vol.Name, /^[0-9a-f]{64}$/);
    assert.deepEqual(vol, {
      Type: 'volume',
      Name: vol.Name,
      Source: join(d.dataRoot, 'volumes', vol.Name, '_data'),
      Destination: '/data',
      Driver: 'local',
      Mode: '',
      RW: true,
      Propagation: '',
    });
    // Bookkeeping fields
    assert.equal(i.RestartCount, 0);
    assert.equal(i.Driver, (await api('GET', '/info')).json().Driver, 'the storage driver /info reports');
    assert.equal(i.GraphDriver.Name, i.Driver);
    assert.equal(i.LogPath, join(d.dataRoot, 'containers', id, `${id}-json.log`));
    assert.ok(existsSync(i.LogPath), 'LogPath names the real log file');
    assert.ok(i.SizeRw >= 200000, `SizeRw ${i.SizeRw}`);
    assert.ok(i.SizeRootFs > i.SizeRw, `SizeRootFs ${i.SizeRootFs}`);
    const plain = (await api('GET', `/containers/${id}/json`)).json();
    assert.ok(!('SizeRw' in plain) && !('SizeRootFs' in plain), 'sizes only with size=1');

    // The list entry
    const list = await api('GET', `/containers/json?size=1&filters=${encodeURIComponent(JSON.stringify({ id: [id] }))}`);
    assert.equal(list.status, 200);
    const entries = list.json();
    assert.deepEqual(validate(entries, responseSchema('/containers/json', 'get', '200')), []);
    assert.equal(entries.length, 1);
    const e = entries[0];
    assert.deepEqual(
      missingProperties(e, definition('ContainerSummary')).filter((k) => !['ImageManifestDescriptor', 'Health'].includes(k)),
      [],
      'list entry lacks fields',
    );
    assert.equal(e.Id, id);
    assert.deepEqual(e.Names, ['/shape-test']);
    assert.equal(e.Image, 'busybox');
    assert.equal(e.ImageID, i.Image);
    assert.equal(e.Command, `sh -c '${body.Cmd[2]}'`);
    assert.equal(e.Created, Math.floor(Date.parse(i.Created) / 1000));
    assert.equal(e.State, 'running');
    assert.match(e.Status, /^Up /);
    assert.deepEqual(e.Labels, body.Labels);
    assert.equal(e.HostConfig.NetworkMode, 'none');
    assert.ok(e.SizeRw >= 200000);
    assert.equal(e.SizeRootFs, i.SizeRootFs);
    assert.ok(Array.isArray(e.Mounts) && e.Mounts.length === i.Mounts.length);
    const noSize = (await api('GET', '/containers/json')).json().find((c: any) => c.Id === id);
    assert.ok(!('SizeRw' in noSize), 'sizes only with size=1');
    // Created containers and exited ones validate too (zero times, exit codes).
    const created = await create({ Cmd: ['true'] });
    assert.deepEqual(validate(await inspect(created), inspectSchema), []);
    assert.equal((await inspect(created)).State.Status, 'created');
    await forceRemove(id, created);
    await rm(bindDir, { recursive: true, force: true });
  });

  test('Mounts list binds and --mount entries as dockerd does', async () => {
    const src = await mkdtemp(join(tmpdir(), 'engine-mnt-'));
    const r = await d.docker([
      'create',
      '--network',
      'none',
      '-v',
      `${src}:/a`,
      '--mount',
      'type=tmpfs,dst=/t',
      '--mount',
      `type=bind,src=${src},dst=/b,readonly`,
      '--tmpfs',
      '/not-listed',
      'busybox',
      'true',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const id = r.stdout.trim();
    const mounts = (await inspect(id)).Mounts.sort((x: any, y: any) => x.Destination.localeCompare(y.Destination));
    assert.deepEqual(mounts, [
      { Type: 'bind', Source: src, Destination: '/a', Mode: '', RW: true, Propagation: 'rprivate' },
      { Type: 'bind', Source: src, Destination: '/b', Mode: '', RW: false, Propagation: 'rprivate' },
      { Type: 'tmpfs', Source: '', Destination: '/t', Mode: '', RW: true, Propagation: '' },
    ]);
    const listed = (await api('GET', '/containers/json?all=1')).json().find((c: any) => c.Id === id);
    assert.equal(listed.Mounts.length, 3);
    await forceRemove(id);
    await rm(src, { recursive: true, force: true });
  });

  test('list: all, limit, before/since ordering; newest first', async () => {
    const ids: string[] = [];
    for (const n of ['ord-1', 'ord-2', 'ord-3']) ids.push(await create({ Cmd: ['true'], HostConfig: { NetworkMode: 'none' } }, n));
    const running = (await api('GET', '/containers/json')).json().map((c: any) => c.Id);
    for (const id of ids) assert.ok(!running.includes(id), 'created containers only with all=1');
    const all = (await api('GET', `/containers/json?all=1&filters=${encodeURIComponent(JSON.stringify({ name: ['ord-'] }))}`)).json();
    assert.deepEqual(
      all.map((c: any) => c.Names[0]),
      ['/ord-3', '/ord-2', '/ord-1'],
    );
    const limited = (await api('GET', '/containers/json?limit=2')).json();
    assert.equal(limited.length, 2);
    assert.equal(limited[0].Id, ids[2], 'limit implies all and keeps the newest');
    const before = (
      await api('GET', `/containers/json?all=1&filters=${encodeURIComponent(JSON.stringify({ before: ['ord-3'], name: ['ord-'] }))}`)
    ).json();
    assert.deepEqual(
      before.map((c: any) => c.Names[0]),
      ['/ord-2', '/ord-1'],
    );
    const since = (
      await api('GET', `/containers/json?all=1&filters=${encodeURIComponent(JSON.stringify({ since: ['ord-1'], name: ['ord-'] }))}`)
    ).json();
    assert.deepEqual(
      since.map((c: any) => c.Names[0]),
      ['/ord-3', '/ord-2'],
    );
    const badFilter = await api('GET', `/containers/json?filters=${encodeURIComponent(JSON.stringify({ colour: ['red'] }))}`);
    assert.equal(badFilter.status, 400);
    await forceRemove(...ids);
  });

  // ---- references ---------------------------------------------------------------------------------

  test('references: full ID, unique prefix, name with and without "/"; ambiguous prefix is a 400', async () => {
    const id = await create({ Cmd: ['true'], HostConfig: { NetworkMode: 'none' } }, 'ref-test');
    for (const ref of [id, id.slice(0, 12), id.slice(0, 5), 'ref-test', encodeURIComponent('/ref-test')]) {
      const r = await api('GET', `/containers/${ref}/json`);
      assert.equal(r.status, 200, `${ref}: ${r.text()}`);
      assert.equal(r.json().Id, id);
    }
    assert.equal((await api('GET', '/containers/ref-tes/json')).status, 404, 'names match exactly, not by prefix');
    // Make two containers share a first hex digit, then use that digit.
    const made: string[] = [id];
    let shared: string | undefined;
    for (let k = 0; k < 40 && !shared; k++) {
      made.push(await create({ Cmd: ['true'], HostConfig: { NetworkMode: 'none' } }));
      const firsts = new Map<string, number>();
      for (const c of (await api('GET', '/containers/json?all=1')).json()) firsts.set(c.Id[0], (firsts.get(c.Id[0]) ?? 0) + 1);
      shared = [...firsts.entries()].find(([, n]) => n > 1)?.[0];
    }
    assert.ok(shared);
    const amb = await api('GET', `/containers/${shared}/json`);
    assert.equal(amb.status, 400);
    assert.equal(amb.json().message, `multiple IDs found with provided prefix: ${shared}`);
    const ambStart = await api('POST', `/containers/${shared}/start`);
    assert.equal(ambStart.status, 400);
    // Names: Docker's rule; generated names are unique and valid.
    for (const bad of ['a', '-lead', 'has space', 'sl/ash', 'ü']) {
      const r = await api('POST', `/containers/create?name=${encodeURIComponent(bad)}`, { Image: 'busybox' });
      assert.equal(r.status, 400, bad);
      assert.match(r.json().message, /Invalid container name \(.*\), only \[a-zA-Z0-9\]\[a-zA-Z0-9_\.-\] are allowed/);
    }
    const names = (await api('GET', '/containers/json?all=1')).json().map((c: any) => c.Names[0]);
    assert.equal(new Set(names).size, names.length);
    for (const n of names) assert.match(n, /^\/[a-zA-Z0-9][a-zA-Z0-9_.-]+$/);
    await forceRemove(...made);
  });

  // ---- never wait on a busy container -------------------------------------------------------------

  test('list and inspect answer at once while a stop is in flight', async () => {
    const id = await runDetached(
      ['sh', '-c', 'trap "" TERM; while true; do sleep 0.1; done'],
      { HostConfig: { NetworkMode: 'none' } },
      'stubborn',
    );
    await sleep(300);
    const stopping = d.docker(['stop', '-t', '20', id], { timeoutMs: 30_000 });
    await sleep(300);
    // The stop waits 20 s for its grace period: an answer held behind it would take seconds. The
    // bound is far below that and far above a loaded machine's slowest answer.
    for (let k = 0; k < 5; k++) {
      let t0 = performance.now();
      const list = await api('GET', '/containers/json?all=1');
      const listMs = performance.now() - t0;
      assert.equal(list.status, 200);
      assert.ok(listMs < 2000, `GET /containers/json took ${listMs.toFixed(0)} ms during a stop`);
      t0 = performance.now();
      const i = await api('GET', `/containers/${id}/json`);
      const inspectMs = performance.now() - t0;
      assert.equal(i.status, 200);
      assert.equal(i.json().State.Running, true, 'still running during the grace period');
      assert.ok(inspectMs < 2000, `GET /containers/{id}/json took ${inspectMs.toFixed(0)} ms during a stop`);
      const cli = performance.now();
      assert.equal((await d.docker(['ps', '-a', '--format', '{{.Names}}'])).code, 0);
      assert.ok(performance.now() - cli < 3000);
      await sleep(100);
    }
    // Other containers can be started and stopped meanwhile.
    const other = await runDetached(['true'], { HostConfig: { NetworkMode: 'none' } });
    assert.equal((await waitExit(other)).StatusCode, 0);
    assert.equal((await api('POST', `/containers/${id}/kill`)).status, 204);
    const stopped = await stopping;
    assert.equal(stopped.code, 0, stopped.stderr);
    await forceRemove(id, other);
  });

  // ---- the init layer ------------------------------------------------------------------------------

  test('the writable layer holds only what the process changed (runtime mount points live in the init layer)', async () => {
    const r = await d.docker(['run', '--name', 'layer-test', 'busybox', 'sh', '-c', 'echo x > /newfile']);
    assert.equal(r.code, 0, r.stderr);
    const id = (await inspect('layer-test')).Id;
    const client = new SupervisorClient(join(d.execRoot, 'containerd', 'containerd.sock'), { namespace: 'engine' });
    try {
      const mounts = await client.snapshots.mounts(id);
      const upper = mounts
        .flatMap((m) => m.options)
        .find((o) => o.startsWith('upperdir='))
        ?.slice('upperdir='.length);
      assert.ok(upper, `no upperdir in ${JSON.stringify(mounts)}`);
      const entries = await readdir(upper);
      assert.deepEqual(entries, ['newfile'], `the writable layer holds ${JSON.stringify(entries)}`);
      assert.equal(readFileSync(join(upper, 'newfile'), 'utf8'), 'x\n');
      for (const p of ['dev', 'proc', 'sys', 'etc/hosts', 'etc/resolv.conf', 'etc/hostname', '.dockerenv'])
        assert.equal(existsSync(join(upper, p)), false, p);
    } finally {
      client.close();
    }
    await forceRemove(id);
  });
  // ---- attach --------------------------------------------------------------------------------------

  /** Opens the hijacked attach stream by hand: returns the status line, headers and the raw socket. */
  function rawAttach(ref: string, query: string): Promise<{ head: string; socket: Socket; rest: Buffer }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({
        socketPath: d.socket,
        method: 'POST',
        path: `/containers/${ref}/attach?${query}`,
        headers: { Connection: 'Upgrade', Upgrade: 'tcp' },
      });
      req.on('upgrade', (res, socket, rest) =>
        resolve({ head: `${res.statusCode} ${JSON.stringify(res.headers)}`, socket: socket as Socket, rest }),
      );
      req.on('response', (res) => reject(new Error(`attach answered ${res.statusCode} without upgrading`)));
      req.on('error', reject);
      req.end();
    });
  }

  test('attach over raw HTTP: 101 UPGRADED, multiplexed frames with stream ids, ends when the container exits', async () => {
    const id = await create({
      Cmd: ['sh', '-c', 'echo o1; sleep 0.1; echo e1 >&2; sleep 0.1; echo o2'],
      HostConfig: { NetworkMode: 'none' },
    });
    const { head, socket, rest } = await rawAttach(id, 'stream=1&stdout=1&stderr=1');
    assert.match(head, /^101 /);
    assert.match(head, /"content-type":"application\/vnd.docker.multiplexed-stream"/);
    const chunks: Buffer[] = [rest];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const ended = new Promise<void>((r) => socket.on('close', () => r()));
    assert.equal((await api('POST', `/containers/${id}/start`)).status, 204);
    await Promise.race([ended, sleep(10_000).then(() => assert.fail('attach stream did not end'))]);
    const frames = demux(Buffer.concat(chunks));
    assert.equal(streamText(frames, 1), 'o1\no2\n');
    assert.equal(streamText(frames, 2), 'e1\n');
    // stdout only: stderr frames are left out
    const only = await create({ Cmd: ['sh', '-c', 'echo o; echo e >&2'], HostConfig: { NetworkMode: 'none' } });
    const a2 = await rawAttach(only, 'stream=1&stdout=1');
    const c2: Buffer[] = [a2.rest];
    a2.socket.on('data', (c: Buffer) => c2.push(c));
    const ended2 = new Promise<void>((r) => a2.socket.on('close', () => r()));
    await api('POST', `/containers/${only}/start`);
    await Promise.race([ended2, sleep(10_000)]);
    const f2 = demux(Buffer.concat(c2));
    assert.ok(f2.every((f) => f.stream === 1));
    assert.equal(streamText(f2, 1), 'o\n');
    // logs=1 replays what was already written (complete once wait has answered: the exit is
    // processed only after the log driver wrote everything; the attach stream may end a moment sooner)
    await waitExit(only);
    const replay = await rawAttach(only, 'logs=1&stdout=1&stderr=1');
    const c3: Buffer[] = [replay.rest];
    replay.socket.on('data', (c: Buffer) => c3.push(c));
    await new Promise<void>((r) => replay.socket.on('close', () => r()));
    const f3 = demux(Buffer.concat(c3));
    assert.equal(streamText(f3, 1), 'o\n');
    assert.equal(streamText(f3, 2), 'e\n');
    assert.equal((await api('POST', '/containers/nope-nope/attach?stream=1&stdout=1')).status, 404);
    await forceRemove(id, only);
  });

  test('attach with stdin to a long-lived container: input reaches it; a half-close detaches and leaves its stdin open', async () => {
    const r = await d.docker(['run', '-d', '-i', '--network', 'none', '--name', 'catter', 'busybox', 'cat']);
    assert.equal(r.code, 0, r.stderr);
    for (const word of ['ping', 'pong']) {
      const a = await rawAttach('catter', 'stream=1&stdin=1&stdout=1&stderr=1');
      const got: Buffer[] = [a.rest];
      a.socket.on('data', (c: Buffer) => got.push(c));
      const closed = new Promise<void>((res) => a.socket.on('close', () => res()));
      a.socket.write(`${word}\n`);
      await until('the echo', async () => (streamText(demux(Buffer.concat(got)), 1) === `${word}\n` ? true : undefined), 5000);
      a.socket.end(); // half-close: no StdinOnce, so the server ends the attach
      await Promise.race([closed, sleep(5000).then(() => assert.fail('the attach did not end after the half-close'))]);
      assert.equal((await inspect('catter')).State.Running, true, 'the container keeps running with its stdin open');
    }
    await forceRemove('catter');
  });

  test('docker attach to a running container: output flows; the exit code comes back', async () => {
    const id = await runDetached(['sh', '-c', 'sleep 1; for i in 1 2 3; do echo at $i; sleep 0.2; done; exit 3'], {
      HostConfig: { NetworkMode: 'none' },
    });
    const r = await d.docker(['attach', '--no-stdin', id], { timeoutMs: 20_000 });
    assert.equal(r.stdout, 'at 1\nat 2\nat 3\n');
    assert.equal(r.code, 3, r.stderr);
    await forceRemove(id);
  });

  test('docker start -a of a created container prints its output and returns its code', async () => {
    const created = await d.docker(['create', '--network', 'none', 'busybox', 'sh', '-c', 'echo started-output; echo to-err >&2; exit 2']);
    assert.equal(created.code, 0, created.stderr);
    const id = created.stdout.trim();
    const r = await d.docker(['start', '-a', id], { timeoutMs: 20_000 });
    assert.equal(r.stdout, 'started-output\n');
    assert.equal(r.stderr, 'to-err\n');
    assert.equal(r.code, 2);
    await forceRemove(id);
  });

  test('docker run -i with piped stdin: the half-close reaches the container', async () => {
    const r = await d.docker(['run', '-i', '--rm', '--network', 'none', 'busybox', 'cat'], { input: 'hello\n', timeoutMs: 20_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'hello\n');
    const wc = await d.docker(['run', '-i', '--rm', '--network', 'none', 'busybox', 'wc', '-c'], {
      input: Buffer.alloc(300_000, 0x61),
      timeoutMs: 20_000,
    });
    assert.equal(wc.code, 0, wc.stderr);
    assert.equal(wc.stdout.trim(), '300000');
    const shell = await d.docker(['run', '-i', '--rm', '--network', 'none', 'busybox', 'sh'], {
      input: 'echo from-stdin-script; exit 5\n',
      timeoutMs: 20_000,
    });
    assert.equal(shell.stdout, 'from-stdin-script\n');
    assert.equal(shell.code, 5);
    // start -ai of a created -i container, twice: each run gets its own input and end of input.
    const created = await d.docker(['create', '-i', '--network', 'none', 'busybox', 'sh', '-c', 'cat; echo done']);
    assert.equal(created.code, 0, created.stderr);
    const id = created.stdout.trim();
    for (const word of ['first', 'second']) {
      const r2 = await d.docker(['start', '-ai', id], { input: `${word}\n`, timeoutMs: 20_000 });
      assert.equal(r2.code, 0, r2.stderr);
      assert.equal(r2.stdout, `${word}\ndone\n`);
    }
    await forceRemove(id);
  });

  // ---- real clients ---------------------------------------------------------------------------------

  test('docker-py works unmodified', async (t) => {
    if ((await run('python3', ['-c', 'import docker'])).code !== 0)
      return t.skip('python3-docker is not installed (scripts/setup.sh test installs it)');
    const dir = await mkdtemp(join(tmpdir(), 'engine-py-'));
    const script = join(dir, 'client.py');
    await writeFile(
      script,
      [
        'import json, sys, docker',
        'c = docker.DockerClient(base_url=sys.argv[1])',
        'out = {}',
        "out['run'] = c.containers.run('busybox', 'echo hi', remove=True).decode()",
        "ctr = c.containers.run('busybox', ['sh', '-c', 'echo started; sleep 300'], detach=True, name='py-detached')",
        'import time',
        'for _ in range(50):',
        "    if b'started' in ctr.logs(): break",
        '    time.sleep(0.1)',
        "out['logs'] = ctr.logs().decode()",
        'ctr.reload()',
        "out['status'] = ctr.status",
        "out['listed'] = [x.name for x in c.containers.list()]",
        'ctr.stop(timeout=1)',
        'ctr.reload()',
        "out['stopped'] = ctr.status",
        "out['exit'] = ctr.attrs['State']['ExitCode']",
        'ctr.remove()',
        "out['after_remove'] = [x.name for x in c.containers.list(all=True)]",
        "out['version'] = c.version()['ApiVersion']",
        "out['info'] = c.info()['Containers']",
        'print(json.dumps(out))',
      ].join('\n'),
    );
    const r = await run('python3', [script, d.host], { timeoutMs: 60_000 });
    await rm(dir, { recursive: true, force: true });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.run, 'hi\n');
    assert.equal(out.logs, 'started\n');
    assert.equal(out.status, 'running');
    assert.ok(out.listed.includes('py-detached'));
    assert.equal(out.stopped, 'exited');
    assert.equal(out.exit, 137);
    assert.ok(!out.after_remove.includes('py-detached'));
    assert.match(out.version, /^1\.\d+$/);
    assert.equal(typeof out.info, 'number');
  });

  test('dockerode works unmodified', async () => {
    const Docker = createRequire(import.meta.url)('dockerode');
    const docker = new Docker({ socketPath: d.socket });
    const ctr = await docker.createContainer({
      Image: 'busybox',
      Cmd: ['sh', '-c', 'echo node-out; echo node-err >&2; exit 6'],
      name: 'dockerode-test',
      HostConfig: { NetworkMode: 'none' },
    });
    assert.match(ctr.id, /^[0-9a-f]{64}$/);
    await ctr.start();
    const waited = await ctr.wait();
    assert.equal(waited.StatusCode, 6);
    const logs: Buffer = await ctr.logs({ stdout: true, stderr: true, follow: false });
    const frames = demux(logs);
    assert.equal(streamText(frames, 1), 'node-out\n');
    assert.equal(streamText(frames, 2), 'node-err\n');
    // dockerode's own demuxer on a followed stream
    const stream = await ctr.logs({ stdout: true, stderr: true, follow: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const { PassThrough } = await import('node:stream');
    const o = new PassThrough().on('data', (c: Buffer) => out.push(c));
    const e = new PassThrough().on('data', (c: Buffer) => err.push(c));
    docker.modem.demuxStream(stream, o, e);
    await new Promise((r) => stream.on('end', r));
    assert.equal(Buffer.concat(out).toString(), 'node-out\n');
    assert.equal(Buffer.concat(err).toString(), 'node-err\n');
    const listed = await docker.listContainers({ all: true, filters: { name: ['dockerode-test'] } });
    assert.equal(listed.length, 1);
    assert.equal(listed[0].Id, ctr.id);
    assert.equal(listed[0].State, 'exited');
    const info = await ctr.inspect();
    assert.equal(info.State.ExitCode, 6);
    await ctr.remove();
    await assert.rejects(ctr.inspect(), (err: any) => err.statusCode === 404);
  });
});
