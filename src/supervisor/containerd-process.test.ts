import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { mapLevel, parseLogfmt } from './containerd-log.ts';
import { containerdConfig, findOnPath, ManagedContainerd } from './containerd-process.ts';
import { SupervisorClient } from './client.ts';
import { makeTestEnv, pidAlive, waitFor, type TestEnv } from '../../test/helpers/supervisor-harness.ts';

test('config: our roots, socket under exec-root, CRI off, opt plugin kept out of /opt', () => {
  const text = containerdConfig({ dataRoot: '/d', execRoot: '/e', cri: false, level: 'debug' });
  assert.match(text, /^version = 2$/m);
  assert.match(text, /^root = "\/d\/containerd"$/m);
  assert.match(text, /^state = "\/e\/containerd"$/m);
  assert.match(text, /^disabled_plugins = \["io.containerd.grpc.v1.cri"\]$/m);
  assert.match(text, /\[grpc\]\n {2}address = "\/e\/containerd\/containerd.sock"/);
  assert.match(text, /\[debug\]\n {2}level = "debug"/);
  assert.match(text, /\[plugins."io.containerd.internal.v1.opt"\]\n {2}path = "\/d\/containerd\/opt"/);
  assert.match(containerdConfig({ dataRoot: '/d', execRoot: '/e', cri: true, level: 'info' }), /^disabled_plugins = \[\]$/m);
  assert.match(containerdConfig({ dataRoot: '/a "b"', execRoot: '/e', cri: true, level: 'info' }), /^root = "\/a \\"b\\"\/containerd"$/m);
});

test('config: a proxy snapshotter becomes a proxy plugin of type snapshot; none without one', () => {
  const text = containerdConfig({
    dataRoot: '/d',
    execRoot: '/e',
    cri: false,
    level: 'info',
    proxySnapshotter: { name: 'fuse-overlayfs', address: '/e/fuse-overlayfs/snapshotter.sock' },
  });
  assert.match(
    text,
    /^\[proxy_plugins\."fuse-overlayfs"\]\n {2}type = "snapshot"\n {2}address = "\/e\/fuse-overlayfs\/snapshotter.sock"$/m,
  );
  assert.doesNotMatch(containerdConfig({ dataRoot: '/d', execRoot: '/e', cri: false, level: 'info' }), /proxy_plugins/);
});

test('containerd log lines: logfmt parsing and level mapping', () => {
  const line =
    'time="2026-11-22T03:28:50.178758903Z" level=info msg="loading plugin \\"io.containerd.x\\"..." id=x type=io.containerd.snapshotter.v1';
  assert.deepEqual(parseLogfmt(line), {
    level: 'info',
    msg: 'loading plugin "io.containerd.x"...',
    fields: { id: 'x', type: 'io.containerd.snapshotter.v1' },
  });
  assert.equal(parseLogfmt('panic: runtime error'), null);
  const warn = (msg: string, error = '') => mapLevel({ level: 'warning', msg, fields: error ? { error } : {} });
  assert.equal(warn('failed to load plugin io.containerd.snapshotter.v1.devmapper', 'devmapper not configured'), 'debug');
  assert.equal(warn('cleaning up after shim disconnected'), 'debug');
  assert.equal(warn('something new'), 'warn');
  assert.equal(mapLevel({ level: 'error', msg: 'x', fields: {} }), 'error');
  assert.equal(mapLevel({ level: 'fatal', msg: 'x', fields: {} }), 'error');
  assert.equal(mapLevel({ level: 'debug', msg: 'x', fields: {} }), 'debug');
  assert.equal(mapLevel({ level: 'trace', msg: 'x', fields: {} }), 'debug');
});

async function withEnv(fn: (env: TestEnv) => Promise<void>): Promise<void> {
  const env = await makeTestEnv('cp-');
  try {
    await fn(env);
  } finally {
    await env.cleanup();
  }
}

test('starts containerd, forwards its log, restarts it after kill -9, stops it', async () => {
  await withEnv(async (env) => {
    const mc = new ManagedContainerd({ dataRoot: env.dataRoot, execRoot: env.execRoot, log: env.log });
    env.defer(() => mc.stop());
    await mc.start();
    const pid = mc.pid!;
    assert.ok(pidAlive(pid));
    assert.equal(mc.adopted, false);
    assert.equal(fs.readFileSync(mc.pidFile, 'utf8').trim(), String(pid));
    assert.equal(mc.configPath, path.join(env.execRoot, 'containerd', 'containerd.toml'));
    assert.match(fs.readFileSync(mc.configPath, 'utf8'), /level = "info"/);
    assert.ok(mc.lastStartMs > 0 && mc.lastStartMs < 10_000);
    console.log(`containerd spawn → first Version answer: ${mc.lastStartMs.toFixed(1)} ms`);
    assert.ok(
      env.lines.some((l) => /level=info msg="starting containerd" module=supervisor/.test(l)),
      'containerd lines forwarded',
    );
    assert.ok(!env.lines.some((l) => /devmapper/.test(l) && /level=warning/.test(l)), 'devmapper warning demoted');
    assert.ok(fs.existsSync(path.join(env.dataRoot, 'containerd', 'io.containerd.metadata.v1.bolt')));
    // Another containerd on the host (a dockerd) may own /opt/containerd; ours must use its own opt dir.
    assert.ok(fs.existsSync(path.join(env.dataRoot, 'containerd', 'opt')), 'opt plugin stays under data-root');

    const client = new SupervisorClient(mc.address, { namespace: 'test' });
    env.defer(() => client.close());
    assert.match((await client.version()).version, /^1\./);

    const restarted = once(mc, 'restarted');
    process.kill(pid, 'SIGKILL');
    const [info] = await restarted;
    assert.notEqual(info.pid, pid);
    assert.equal(mc.pid, info.pid);
    assert.match(info.reason, /SIGKILL/);
    assert.ok(env.lines.some((l) => /level=warning msg="containerd exited unexpectedly, restarting"/.test(l)));
    // The shared channel reconnects by itself (backoff ≤ 1 s) once the new containerd listens.
    const v = await client.version({ waitForReady: true, deadlineMs: 5000 });
    assert.match(v.version, /^1\./);

    const newPid = mc.pid!;
    await mc.stop();
    assert.equal(pidAlive(newPid), false);
    assert.equal(fs.existsSync(mc.pidFile), false);
  });
});

test('backs off between restarts of a containerd that keeps dying', async () => {
  await withEnv(async (env) => {
    const mc = new ManagedContainerd({ dataRoot: env.dataRoot, execRoot: env.execRoot, log: env.log });
    env.defer(() => mc.stop());
    await mc.start();
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      const restarted = once(mc, 'restarted');
      process.kill(mc.pid!, 'SIGKILL');
      await restarted;
      const last = env.lines.filter((l) => /containerd exited unexpectedly/.test(l)).pop()!;
      delays.push(Number(/restartInMs=(\d+)/.exec(last)![1]));
    }
    assert.deepEqual(delays, [100, 200, 400]);
  });
});

test('a start failure is a clear error, not a restart loop', async () => {
  await withEnv(async (env) => {
    const mc = new ManagedContainerd({ dataRoot: env.dataRoot, execRoot: env.execRoot, log: env.log, binary: '/bin/false' });
    await assert.rejects(mc.start(), (err: Error) => /containerd failed to start \(exit status 1\)/.test(err.message));
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(!env.lines.some((l) => /restarting/.test(l)));
    // A containerd that never opens its socket:
    const script = path.join(env.dir, 'hang.sh');
    fs.writeFileSync(script, '#!/bin/sh\nexec sleep 30\n', { mode: 0o755 });
    const hang = new ManagedContainerd({
      dataRoot: env.dataRoot,
      execRoot: env.execRoot,
      log: env.log,
      binary: script,
      startTimeoutMs: 300,
    });
    await assert.rejects(hang.start(), /did not answer on .*containerd.sock within 300 ms/);
  });
});

/** Starts a ManagedContainerd in a separate Node process, like a daemon we can kill -9. */
async function startInChild(env: TestEnv, logLevel = 'info'): Promise<{ daemonPid: number; containerdPid: number }> {
  const mod = new URL('./containerd-process.js', import.meta.url).href;
  const logMod = new URL('../util/log.js', import.meta.url).href;
  const code = `
    const { ManagedContainerd } = await import(${JSON.stringify(mod)});
    const { Logger } = await import(${JSON.stringify(logMod)});
    const log = new Logger({ level: ${JSON.stringify(logLevel)}, format: 'text', raw: false });
    const mc = new ManagedContainerd({ dataRoot: process.argv[1], execRoot: process.argv[2], log });
    await mc.start();
    process.stdout.write(JSON.stringify({ pid: mc.pid }) + '\\n');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code, env.dataRoot, env.execRoot], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  env.defer(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout!.on('data', (b) => (out += b));
  await waitFor('child daemon to start containerd', () => out.includes('\n'), 20_000);
  return { daemonPid: child.pid!, containerdPid: JSON.parse(out).pid };
}

test('after kill -9 of its daemon, containerd keeps running and the next start reuses it', async () => {
  await withEnv(async (env) => {
    const first = await startInChild(env, 'debug');
    process.kill(first.daemonPid, 'SIGKILL');
    await waitFor('daemon gone', () => !pidAlive(first.daemonPid));
    // Its stderr pipe is broken now; containerd ignores SIGPIPE and keeps serving.
    const probe = new SupervisorClient(path.join(env.execRoot, 'containerd', 'containerd.sock'), { namespace: 'x' });
    env.defer(() => probe.close());
    await probe.ensureNamespace('after-daemon-death'); // makes containerd log (debug level) into the dead pipe
    await probe.version();
    assert.ok(pidAlive(first.containerdPid));

    const mc = new ManagedContainerd({ dataRoot: env.dataRoot, execRoot: env.execRoot, log: env.log, logLevel: 'debug' });
    env.defer(() => mc.stop());
    await mc.start();
    assert.equal(mc.adopted, true);
    assert.equal(mc.pid, first.containerdPid);
    assert.ok(env.lines.some((l) => /reusing running containerd/.test(l)));

    // The adopted process is not our child; its death is noticed by polling and it is replaced.
    const restarted = once(mc, 'restarted');
    process.kill(first.containerdPid, 'SIGKILL');
    const [info] = await restarted;
    assert.notEqual(info.pid, first.containerdPid);
    assert.equal(mc.adopted, false);
    await probe.version({ waitForReady: true, deadlineMs: 5000 });
    await mc.stop();
    assert.equal(pidAlive(info.pid), false);
  });
});

test('a leftover containerd with a different config is replaced, and stop() also ends an adopted one', async () => {
  await withEnv(async (env) => {
    const first = await startInChild(env, 'info');
    process.kill(first.daemonPid, 'SIGKILL');
    const mc = new ManagedContainerd({ dataRoot: env.dataRoot, execRoot: env.execRoot, log: env.log, logLevel: 'debug' });
    env.defer(() => mc.stop());
    await mc.start();
    assert.equal(mc.adopted, false);
    assert.notEqual(mc.pid, first.containerdPid);
    assert.equal(pidAlive(first.containerdPid), false);
    assert.ok(env.lines.some((l) => /stopping stale containerd .*reason="config changed"/.test(l)));
    await mc.stop();

    const second = await startInChild(env, 'debug');
    process.kill(second.daemonPid, 'SIGKILL');
    fs.rmSync(path.join(env.execRoot, 'containerd', 'containerd.pid')); // found by its command line instead
    const again = new ManagedContainerd({ dataRoot: env.dataRoot, execRoot: env.execRoot, log: env.log, logLevel: 'debug' });
    env.defer(() => again.stop());
    await again.start();
    assert.equal(again.adopted, true);
    assert.equal(again.pid, second.containerdPid);
    await again.stop();
    assert.equal(pidAlive(second.containerdPid), false);
  });
});

test('finds binaries on PATH', () => {
  assert.equal(findOnPath('containerd'), '/usr/bin/containerd');
  assert.equal(findOnPath('no-such-binary-here'), null);
  assert.equal(findOnPath('sh', ''), null);
});
