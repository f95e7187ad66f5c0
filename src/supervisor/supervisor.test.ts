import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { Supervisor, parseRuncVersion } from './supervisor.ts';
import { containerdConfig } from './containerd-process.ts';
import { makeTestEnv, pidAlive, waitFor, type TestEnv } from '../../test/helpers/supervisor-harness.ts';
import type { SupervisorEvent } from './types.ts';

async function withEnv(fn: (env: TestEnv) => Promise<void>): Promise<void> {
  const env = await makeTestEnv('sv-');
  try {
    await fn(env);
  } finally {
    await env.cleanup();
  }
}

const base = (env: TestEnv) => ({
  dataRoot: env.dataRoot,
  execRoot: env.execRoot,
  namespace: 'engine-t',
  pluginsNamespace: 'engine-t-plugins',
  cri: false,
  log: env.log,
});

test('parses runc --version', () => {
  assert.deepEqual(
    parseRuncVersion('runc version 1.1.5+ds1\ncommit: 1.1.5+ds1-1+deb12u1\nspec: 1.0.2-dev\ngo: go1.19.8\nlibseccomp: 2.5.4\n'),
    { version: '1.1.5+ds1', commit: '1.1.5+ds1-1+deb12u1', spec: '1.0.2-dev' },
  );
  assert.deepEqual(parseRuncVersion('garbage'), { version: '', commit: '', spec: '' });
});

test('managed: versions, namespaces, runc root; survives kill -9 of containerd with events resumed', async () => {
  await withEnv(async (env) => {
    const t0 = performance.now();
    const sup = await Supervisor.start(base(env));
    env.defer(() => sup.stop());
    console.log(
      `Supervisor.start (managed): ${(performance.now() - t0).toFixed(1)} ms, containerd spawn → Version ${sup.managed!.lastStartMs.toFixed(1)} ms, protos ${sup.client.protos.loadMs.toFixed(1)} ms`,
    );
    assert.equal(sup.address, path.join(env.execRoot, 'containerd', 'containerd.sock'));
    assert.equal(sup.namespace, 'engine-t');

    const v = await sup.versions();
    const ctdOut = execFileSync('containerd', ['--version'], { encoding: 'utf8' }); // "containerd <pkg> <version> <revision>"
    assert.equal(ctdOut.trim().split(' ')[2], v.containerd.version);
    assert.equal(ctdOut.trim().split(' ')[3], v.containerd.revision);
    assert.deepEqual(v.runc, parseRuncVersion(execFileSync('runc', ['--version'], { encoding: 'utf8' })));
    assert.match(v.runc.version, /^1\.1\./);

    const names = (await sup.client.namespaces.list()).map((n) => n.name).sort();
    assert.deepEqual(names, ['engine-t', 'engine-t-plugins']);
    assert.equal(sup.pluginsClient.namespace, 'engine-t-plugins');
    assert.equal(sup.runcRoot, path.join(env.execRoot, 'runc'));
    assert.deepEqual(sup.client.protos.decodeAny(sup.runcOptions())!.root, sup.runcRoot);

    const events: SupervisorEvent[] = [];
    let resubscribed = 0;
    const sub = sup.client.subscribe(['namespace==engine-t'], (e) => events.push(e), { onResubscribed: () => resubscribed++ });
    env.defer(() => sub.close());
    await sub.ready;

    const oldPid = sup.managed!.pid!;
    const restarted = once(sup, 'restarted');
    const killedAt = performance.now();
    process.kill(oldPid, 'SIGKILL');
    await restarted;
    console.log(`kill -9 containerd → 'restarted' (client answering): ${(performance.now() - killedAt).toFixed(1)} ms`);
    assert.notEqual(sup.managed!.pid, oldPid);
    assert.match((await sup.client.version()).version, /^1\./); // the shared channel is connected again
    await waitFor('re-subscription', () => resubscribed === 1);
    assert.equal(sub.generation, 2);

    await sup.client.withLease(async (lease) => {
      await sup.client.snapshots.prepare({ key: 'after-restart', parent: '' }, { lease });
      await sup.client.snapshots.remove('after-restart');
    });
    const ev = await waitFor('event after restart', () => events.find((e) => e.topic === '/snapshot/prepare'));
    assert.deepEqual(ev.event, { key: 'after-restart', parent: '' });

    const pid = sup.managed!.pid!;
    await sup.stop();
    await waitFor('subscription to end with its client', () => sub.ended);
    assert.equal(pidAlive(pid), false, 'stop() leaves no containerd');
    assert.equal(fs.existsSync(path.join(env.execRoot, 'containerd', 'containerd.pid')), false);
    await assert.rejects(sup.client.version(), /closed|Channel/i);
  });
});

test('external address: uses a containerd it did not start and leaves it running', async () => {
  await withEnv(async (env) => {
    // A containerd "started by someone else" in its own directories.
    const extData = path.join(env.dir, 'ext-data');
    const extExec = path.join(env.dir, 'ext-exec');
    fs.mkdirSync(path.join(extExec, 'containerd'), { recursive: true });
    const config = path.join(extExec, 'containerd', 'containerd.toml');
    fs.writeFileSync(config, containerdConfig({ dataRoot: extData, execRoot: extExec, cri: false, level: 'warning' }));
    const ext = spawn('containerd', ['--config', config], { stdio: 'ignore' });
    env.defer(async () => {
      ext.kill('SIGKILL');
      if (ext.exitCode === null) await once(ext, 'exit');
    });
    const address = path.join(extExec, 'containerd', 'containerd.sock');
    await waitFor('external containerd socket', () => fs.existsSync(address));

    const sup = await Supervisor.start({ ...base(env), address: `unix://${address}` });
    env.defer(() => sup.stop());
    assert.equal(sup.managed, null);
    assert.equal(sup.address, `unix://${address}`);
    assert.match((await sup.versions()).containerd.version, /^1\.6\./);
    assert.deepEqual((await sup.client.namespaces.list()).map((n) => n.name).sort(), ['engine-t', 'engine-t-plugins']);
    assert.equal(fs.existsSync(path.join(env.execRoot, 'containerd')), false, 'nothing of ours under exec-root');
    await sup.stop();
    assert.ok(pidAlive(ext.pid!), 'an external containerd is not ours to stop');
  });
});

test('external address that does not answer: clear error', async () => {
  await withEnv(async (env) => {
    const t0 = Date.now();
    await assert.rejects(
      Supervisor.start({ ...base(env), address: path.join(env.dir, 'nothing.sock'), startTimeoutMs: 500 }),
      (err: Error & { code?: string }) => err.code === 'UNAVAILABLE' && /containerd at .*nothing.sock does not answer/.test(err.message),
    );
    assert.ok(Date.now() - t0 < 5000);
  });
});
