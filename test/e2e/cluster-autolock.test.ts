// Autolock through the docker CLI on two managers (loopback addresses of their own): `swarm init
// --autolock` prints an SWMKEY-1- key, the CA key never reaches etcd's files in the clear and the node
// key on disk is sealed; a restarted manager comes up locked (dockerd's 503 until `swarm unlock`, a
// wrong key refused with dockerd's 401, a malformed one 400), the right key brings it back with its
// configs readable; a manager that joins fetches the key and seals its own; `unlock-key --rotate`
// reaches the other manager, whose restart then unlocks with the new key; `--autolock=false` puts the
// keys back in the clear and a restart is no longer locked; `--autolock=true` seals them again; a
// worker's key stays in the clear until it is promoted. The records themselves (a service's name and
// label, a config's data) are not in etcd's files while autolocked, open after the unlock and on a
// joining manager, are rewritten in the clear by `--autolock=false` and sealed again by `=true`.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { until } from '../helpers/until.ts';
import { joinSwarm } from '../helpers/cluster-nodes.ts';

const base = 170 + (process.pid % 15) * 5;
const ip = (i: number) => `127.0.0.${base + i}`;
const LOCKED = 'Swarm is encrypted and needs to be unlocked before it can be used. Please use "docker swarm unlock" to unlock it.';

const nodeKey = (d: TestDaemon) => readFileSync(join(d.dataRoot, 'cluster/certificates/node.key'), 'utf8');
const sealed = (d: TestDaemon) => !nodeKey(d).startsWith('-----BEGIN');

/** Whether any file under `dir` holds `needle` (etcd's WAL and bbolt files keep values as written). */
function filesHold(dir: string, needle: string): boolean {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) {
      if (filesHold(p, needle)) return true;
    } else if (readFileSync(p).includes(needle)) return true;
  }
  return false;
}

/** A service of no replicas (no image needed) with a label, both names to look for in etcd's files. */
async function createService(d: TestDaemon, name: string): Promise<void> {
  const r = await d.docker([
    'service',
    'create',
    '--detach',
    '--no-resolve-image',
    '--replicas',
    '0',
    '--name',
    name,
    '--label',
    `l=label-of-${name}`,
    'busybox',
  ]);
  assert.equal(r.code, 0, r.stderr);
}

async function serviceNames(d: TestDaemon): Promise<string[]> {
  const r = await d.docker(['service', 'ls', '--format', '{{.Name}}']);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim().split('\n').filter(Boolean).sort();
}

async function state(d: TestDaemon): Promise<string> {
  return (await d.docker(['info', '--format', '{{.Swarm.LocalNodeState}}'])).stdout.trim();
}

describe('autolock', () => {
  const ds: TestDaemon[] = [];
  before(async () => {
    ds.push(...(await Promise.all([0, 1, 2].map(() => startDaemon()))));
  });
  after(async () => {
    await Promise.all(ds.map((d) => d.cleanup()));
  });

  test('init --autolock, locked restart, unlock, a joining manager, rotation, off', async (t) => {
    const [a, b, c] = ds as [TestDaemon, TestDaemon, TestDaemon];
    const init = await a.docker(['swarm', 'init', '--autolock', '--advertise-addr', ip(0), '--listen-addr', `${ip(0)}:2377`]);
    assert.equal(init.code, 0, init.stderr + a.output);
    const key = /(SWMKEY-1-[A-Za-z0-9+/]{43})/.exec(init.stdout)?.[1];
    assert.ok(key, init.stdout);
    assert.equal((await a.docker(['swarm', 'unlock-key', '-q'])).stdout.trim(), key);
    assert.equal((await a.request('GET', '/v1.51/swarm')).json().Spec.EncryptionConfig.AutoLockManagers, true);
    assert.ok(sealed(a), 'the node key on disk is sealed');
    assert.ok(!filesHold(join(a.dataRoot, 'cluster/etcd'), 'PRIVATE KEY'), "no private key in the clear in etcd's files");
    assert.equal((await a.docker(['config', 'create', 'c1', '-'], { input: 'kept sealed' })).code, 0);
    // The records themselves are sealed at rest: no service name, label or config data in etcd's files.
    await createService(a, 'sealedweb');
    const etcdA = join(a.dataRoot, 'cluster/etcd');
    for (const s of ['sealedweb', 'label-of-sealedweb', 'kept sealed']) assert.ok(!filesHold(etcdA, s), `${s} is not in etcd's files`);

    // A restart comes up locked.
    await a.stop();
    await a.restart();
    await until('a locked', async () => ((await state(a)) === 'locked' ? true : undefined), 30_000, 200);
    const ls = await a.request('GET', '/v1.51/nodes');
    assert.equal(ls.status, 503);
    assert.equal(ls.json().message, LOCKED);
    assert.match((await a.docker(['service', 'ls'])).stderr, /Swarm is encrypted and needs to be unlocked/);
    const wrong = await a.request('POST', '/v1.51/swarm/unlock', { body: { UnlockKey: `SWMKEY-1-${'A'.repeat(43)}` } });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.json().message, 'swarm could not be unlocked: invalid key provided');
    const malformed = await a.request('POST', '/v1.51/swarm/unlock', { body: { UnlockKey: 'nope' } });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.json().message, 'invalid key string');
    const wrongCli = await a.docker(['swarm', 'unlock'], { input: `SWMKEY-1-${'B'.repeat(43)}\n` });
    assert.notEqual(wrongCli.code, 0);
    assert.match(wrongCli.stderr, /swarm could not be unlocked: invalid key provided/);
    const t0 = Date.now();
    const un = await a.docker(['swarm', 'unlock'], { input: `${key}\n` });
    assert.equal(un.code, 0, un.stderr + a.output);
    await until('a active again', async () => ((await state(a)) === 'active' ? true : undefined), 60_000, 200);
    t.diagnostic(`locked manager serving ${Date.now() - t0} ms after \`docker swarm unlock\``);
    assert.equal(
      Buffer.from(JSON.parse((await a.docker(['config', 'inspect', 'c1'])).stdout)[0].Spec.Data, 'base64').toString(),
      'kept sealed',
    );
    assert.deepEqual(await serviceNames(a), ['sealedweb'], 'the records open after the unlock');
    const notLocked = await a.request('POST', '/v1.51/swarm/unlock', { body: { UnlockKey: key } });
    assert.equal(notLocked.status, 409);
    assert.equal(notLocked.json().message, 'swarm is not locked');

    // A manager joins: it fetches the key from a and seals its own node key.
    const token = (await a.docker(['swarm', 'join-token', '-q', 'manager'])).stdout.trim();
    await joinSwarm(b, token, ip(1), ip(0));
    await until('b sealed its node key', async () => (sealed(b) ? true : undefined), 30_000, 250);
    assert.equal((await b.docker(['swarm', 'unlock-key', '-q'])).stdout.trim(), key);
    assert.deepEqual(await serviceNames(b), ['sealedweb'], 'the joined manager reads the sealed records');

    // Rotation on a reaches b.
    const rot = await a.docker(['swarm', 'unlock-key', '--rotate', '-q']);
    assert.equal(rot.code, 0, rot.stderr);
    const key2 = rot.stdout.trim();
    assert.match(key2, /^SWMKEY-1-/);
    assert.notEqual(key2, key);
    await until(
      'b holds the new key',
      async () => ((await b.docker(['swarm', 'unlock-key', '-q'])).stdout.trim() === key2 ? true : undefined),
      30_000,
      250,
    );
    await b.stop();
    await b.restart();
    await until('b locked', async () => ((await state(b)) === 'locked' ? true : undefined), 30_000, 200);
    const old = await b.request('POST', '/v1.51/swarm/unlock', { body: { UnlockKey: key } });
    assert.equal(old.status, 401, 'the old key no longer opens it');
    assert.equal((await b.docker(['swarm', 'unlock'], { input: `${key2}\n` })).code, 0);
    await until(
      'b serving again',
      async () => ((await b.docker(['node', 'ls', '-q'])).stdout.trim().split('\n').length === 2 ? true : undefined),
      60_000,
      250,
    );

    // Off: the keys back in the clear on both managers; a restart is not locked.
    const off = await b.docker(['swarm', 'update', '--autolock=false']);
    assert.equal(off.code, 0, off.stderr);
    await until('both node keys in the clear', async () => (!sealed(a) && !sealed(b) ? true : undefined), 30_000, 250);
    // Off: the records are rewritten in the clear (the data key is in the clear again anyway).
    assert.ok(filesHold(etcdA, 'label-of-sealedweb'), 'the records are back in the clear');
    assert.match((await a.docker(['swarm', 'unlock-key'])).stderr, /no unlock key is set/);
    await a.stop();
    await a.restart();
    await until('a back without unlock', async () => ((await state(a)) === 'active' ? true : undefined), 60_000, 250);

    // On again through `swarm update --autolock=true`: a new key, printed; both managers seal.
    const on = await a.docker(['swarm', 'update', '--autolock=true']);
    assert.equal(on.code, 0, on.stderr);
    const key3 = /(SWMKEY-1-[A-Za-z0-9+/]{43})/.exec(on.stdout)?.[1];
    assert.ok(key3 && key3 !== key && key3 !== key2, on.stdout);
    await until('both node keys sealed again', async () => (sealed(a) && sealed(b) ? true : undefined), 30_000, 250);
    assert.equal((await b.docker(['swarm', 'unlock-key', '-q'])).stdout.trim(), key3);
    // On again: the records were rewritten sealed (etcd's history still holds the clear revisions of
    // before); what either manager writes now is sealed, and the other reads it at once.
    assert.match(a.output, /autolock: \d+ records rewritten sealed/);
    await createService(a, 'sealedweb2');
    await createService(b, 'sealedweb3');
    assert.deepEqual(await serviceNames(a), ['sealedweb', 'sealedweb2', 'sealedweb3']);
    assert.deepEqual(await serviceNames(b), ['sealedweb', 'sealedweb2', 'sealedweb3']);
    for (const s of ['sealedweb2', 'sealedweb3']) assert.ok(!filesHold(etcdA, s) && !filesHold(join(b.dataRoot, 'cluster/etcd'), s), s);

    // A worker's key stays in the clear; promoted, it fetches the unlock key and seals its own.
    const wt = (await a.docker(['swarm', 'join-token', '-q', 'worker'])).stdout.trim();
    await joinSwarm(c, wt, ip(2), ip(0));
    assert.ok(!sealed(c), "a worker's node key is not sealed");
    const idc = JSON.parse((await c.docker(['info', '--format', '{{json .Swarm}}'])).stdout).NodeID;
    assert.equal((await a.docker(['node', 'promote', idc])).code, 0);
    await until('the promoted node sealed its key', async () => (sealed(c) ? true : undefined), 60_000, 250);
    await until(
      'the promoted node holds the key',
      async () => ((await c.docker(['swarm', 'unlock-key', '-q'])).stdout.trim() === key3 ? true : undefined),
      30_000,
      250,
    );
  });
});
