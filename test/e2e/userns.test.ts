// Issue 14 item 7, --userns-remap=default: the daemon creates the engremap user, group and ranges,
// keeps its state in <data-root>/<uid>.<gid>, runs containers in a user namespace whose root is
// the first subordinate id (uid_map, file owners on the host for volumes and binds), lets
// --userns=host opt out, refuses what dockerd refuses, and reports name=userns in /info.
// The test removes the user and the subordinate ranges it made (when they did not exist before).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';

const USER = 'engremap';

function hasUser(name: string): boolean {
  return readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .some((l) => l.startsWith(`${name}:`));
}

/** The remap user's first subordinate range in /etc/subuid or /etc/subgid. */
function firstRange(path: string): { start: number; length: number } {
  const line = readFileSync(path, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${USER}:`));
  assert.ok(line, `${path} has no ${USER} line`);
  const [, start, length] = line.split(':');
  return { start: Number(start), length: Number(length) };
}

/** Takes out the lines of `name` the daemon added (and the file, when the test run created it). */
async function dropRanges(path: string, existed: boolean): Promise<void> {
  const text = await readFile(path, 'utf8').catch(() => '');
  const lines = text.split('\n').filter((l) => l !== '');
  const rest = lines.filter((l) => !l.startsWith(`${USER}:`));
  if (!existed && rest.length === 0) await rm(path, { force: true });
  // userdel normally took them out already; only what it left is rewritten.
  else if (rest.length !== lines.length) await writeFile(path, rest.map((l) => `${l}\n`).join(''));
}

describe('userns-remap', () => {
  let d: TestDaemon;
  let dir: string;
  let bindDir: string;
  const userExisted = hasUser(USER);
  const subuidExisted = existsSync('/etc/subuid');
  const subgidExisted = existsSync('/etc/subgid');

  before(async () => {
    // The remapped root must traverse every directory above its data tree (dockerd checks the same).
    dir = await mkdtemp(join(tmpdir(), 'engine-t-userns-'));
    await chmod(dir, 0o711);
    bindDir = await mkdtemp(join(tmpdir(), 'engine-t-userns-bind-'));
    await chmod(bindDir, 0o777);
    // Start-up creates a user and copies nothing yet, but a loaded machine can be slow: a wider wait.
    d = await startDaemon({ dir, args: ['--userns-remap=default'], waitReady: false });
    await d.waitReady(120_000);
    await loadBusybox(d);
  });

  after(async () => {
    await d?.cleanup();
    await rm(bindDir, { recursive: true, force: true });
    if (!userExisted && hasUser(USER)) {
      const r = await run('userdel', [USER]);
      if (r.code !== 0) console.error(`userdel ${USER}: ${r.stderr}`);
      if (
        readFileSync('/etc/group', 'utf8')
          .split('\n')
          .some((l) => l.startsWith(`${USER}:`))
      )
        await run('groupdel', [USER]);
      await dropRanges('/etc/subuid', subuidExisted);
      await dropRanges('/etc/subgid', subgidExisted);
    }
  });

  const ok = async (args: string[]) => {
    const r = await d.docker(args);
    assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };

  test('default creates engremap and its ranges; the data tree is <uid>.<gid>; /info shows name=userns', async () => {
    assert.ok(hasUser(USER));
    const uids = firstRange('/etc/subuid');
    const gids = firstRange('/etc/subgid');
    assert.equal(uids.length, 65536);
    assert.ok(uids.start >= 100000);
    const info = (await d.request('GET', '/v1.51/info')).json();
    assert.ok(info.SecurityOptions.includes('name=userns'), JSON.stringify(info.SecurityOptions));
    assert.equal(info.DockerRootDir, join(d.dataRoot, `${uids.start}.${gids.start}`));
    const st = statSync(info.DockerRootDir);
    assert.equal(st.mode & 0o777, 0o710);
    assert.equal(st.gid, gids.start);
    assert.equal(
      info.Warnings.some((w: string) => /userns/.test(w)),
      false,
      JSON.stringify(info.Warnings),
    );
  });

  test('a container sees the mapping and its root owns the image files', async () => {
    const uids = firstRange('/etc/subuid');
    const gids = firstRange('/etc/subgid');
    const out = await ok([
      'run',
      '--rm',
      'busybox',
      'sh',
      '-c',
      'cat /proc/self/uid_map /proc/self/gid_map; id -u; stat -c %u:%g /bin/sh /etc; touch /newfile && echo wrote',
    ]);
    const lines = out
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/));
    assert.deepEqual(lines[0], ['0', String(uids.start), '65536']);
    assert.deepEqual(lines[1], ['0', String(gids.start), '65536']);
    assert.deepEqual(lines[2], ['0']);
    // Owned by the remapped root on disk, so root inside sees its own files (not the overflow id).
    assert.deepEqual(lines[3], ['0:0']);
    assert.deepEqual(lines[4], ['0:0']);
    assert.deepEqual(lines[5], ['wrote']);
  });

  test('files written to a volume and a bind show the remapped owner on the host', async () => {
    const uids = firstRange('/etc/subuid');
    const gids = firstRange('/etc/subgid');
    await ok([
      'run',
      '--rm',
      '-v',
      'uvol:/data',
      '-v',
      `${bindDir}:/bind`,
      'busybox',
      'sh',
      '-c',
      'touch /data/f /bind/f && chown 1000:1000 /bind/f',
    ]);
    const mountpoint = JSON.parse(await ok(['volume', 'inspect', 'uvol']))[0].Mountpoint as string;
    const vol = statSync(join(mountpoint, 'f'));
    assert.deepEqual([vol.uid, vol.gid], [uids.start, gids.start]);
    const dataDir = statSync(mountpoint);
    assert.deepEqual([dataDir.uid, dataDir.gid], [uids.start, gids.start]);
    const bound = statSync(join(bindDir, 'f'));
    // Container uid 1000 is host uid start+1000.
    assert.deepEqual([bound.uid, bound.gid], [uids.start + 1000, gids.start + 1000]);
    // A missing -v source is created for the container's root.
    const missing = join(bindDir, 'created', 'by-daemon');
    await ok(['run', '--rm', '-v', `${missing}:/m`, 'busybox', 'touch', '/m/x']);
    assert.equal(statSync(missing).uid, uids.start);
    assert.equal(statSync(join(missing, 'x')).uid, uids.start);
  });

  test('--userns=host opts out: identity map, host ids on disk', async () => {
    const out = await ok([
      'run',
      '--rm',
      '--userns=host',
      '-v',
      `${bindDir}:/bind`,
      'busybox',
      'sh',
      '-c',
      'cat /proc/self/uid_map; touch /bind/hostfile',
    ]);
    assert.deepEqual(out.trim().split(/\s+/), ['0', '0', '4294967295']);
    assert.equal(statSync(join(bindDir, 'hostfile')).uid, 0);
  });

  test("dockerd's refusals: privileged, host network, host pid in the remapped namespace; bad UsernsMode", async () => {
    const create = (hc: Record<string, unknown>) =>
      d.request('POST', '/v1.51/containers/create', { body: { Image: 'busybox', Cmd: ['true'], HostConfig: hc } });
    let r = await create({ Privileged: true });
    assert.equal(r.status, 400);
    assert.match(
      r.json().message,
      /^privileged mode is incompatible with user namespaces\.  You must run the container in the host namespace when running privileged mode$/,
    );
    r = await create({ NetworkMode: 'host' });
    assert.equal(r.status, 400);
    assert.equal(r.json().message, "cannot share the host's network namespace when user namespaces are enabled");
    r = await create({ PidMode: 'host' });
    assert.equal(r.status, 400);
    assert.equal(r.json().message, 'cannot share the host PID namespace when user namespaces are enabled');
    r = await create({ UsernsMode: 'private-ish' });
    assert.equal(r.status, 400);
    assert.match(r.json().message, /invalid USER mode/);
    r = await create({ Privileged: true, UsernsMode: 'host', NetworkMode: 'host' });
    assert.equal(r.status, 201, r.text());
    await d.request('DELETE', `/v1.51/containers/${r.json().Id}?force=1`);
  });

  test('export writes the ids the container sees; a --userns=host container commits as before', async () => {
    await ok(['create', '--name', 'exp', 'busybox', 'true']);
    const out = join(bindDir, 'exp.tar');
    await ok(['export', '-o', out, 'exp']);
    const listing = await run('tar', ['-tvnf', out, 'bin/sh', 'etc']);
    assert.equal(listing.code, 0, listing.stderr);
    // GNU tar prints numeric owners as uid/gid: container root, not the remapped host id.
    for (const line of listing.stdout.trim().split('\n')) assert.match(line, /^\S+ 0\/0 /, line);
    const hostCt = (await ok(['create', '--userns=host', 'busybox', 'true'])).trim();
    assert.equal((await d.request('POST', `/v1.51/commit?container=${hostCt}&repo=host-commit`)).status, 201);
    await ok(['rm', 'exp', hostCt]);
    await ok(['rmi', 'host-commit']);
  });

  test('commit of a remapped container stores the ids the container sees: the image is unmapped', async () => {
    const script = 'echo data > /made && mkdir /owned && touch /owned/f && chown -R 1000:1001 /owned && chown 5:6 /etc/passwd';
    await ok(['run', '--name', 'cm', 'busybox', 'sh', '-c', script]);
    await ok(['commit', 'cm', 'remapped-commit']);
    // The new layer, as `docker save` writes it: owners as the container saw them.
    const saveDir = await mkdtemp(join(bindDir, 'save-'));
    try {
      await ok(['save', '-o', join(saveDir, 'img.tar'), 'remapped-commit']);
      assert.equal((await run('tar', ['-xf', join(saveDir, 'img.tar'), '-C', saveDir])).code, 0);
      const manifest = JSON.parse(await readFile(join(saveDir, 'manifest.json'), 'utf8'))[0];
      const listing = await run('tar', ['-tvnf', join(saveDir, manifest.Layers.at(-1))]);
      assert.equal(listing.code, 0, listing.stderr);
      const owner = (name: string) => new RegExp(`^\\S+ (\\d+/\\d+) .* ${name}$`, 'm').exec(listing.stdout)?.[1];
      assert.deepEqual(['made', 'owned/', 'owned/f', 'etc/passwd'].map(owner), ['0/0', '1000/1001', '1000/1001', '5/6'], listing.stdout);
    } finally {
      await rm(saveDir, { recursive: true, force: true });
    }
    const stat = 'stat -c %u:%g /made /owned /owned/f /etc/passwd && cat /made';
    const expected = '0:0\n1000:1001\n1000:1001\n5:6\ndata\n';
    // A remapped container of the image sees them (its chain gets its own remapped copy) …
    assert.equal(await ok(['run', '--rm', 'remapped-commit', 'sh', '-c', stat]), expected);
    // … and on disk, outside any namespace, the image is unmapped.
    assert.equal(await ok(['run', '--rm', '--userns=host', 'remapped-commit', 'sh', '-c', stat]), expected);
    await ok(['rm', 'cm']);
    await ok(['rmi', 'remapped-commit']);
    // The committed chain's remapped copy goes with it (the last test counts what is left).
    const ctr = ['--address', join(d.execRoot, 'containerd', 'containerd.sock'), '-n', 'engine', 'snapshots', 'ls'];
    const deadline = Date.now() + 30_000;
    while (((await run('ctr', ctr)).stdout.match(/^(?:remap|init)-\d+\.\d+-[0-9a-f]{64}/gm)?.length ?? 0) > 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
  });

  test('docker cp in and out translates owners between the container and the remapped host ids', async () => {
    const uids = firstRange('/etc/subuid');
    await ok(['create', '--name', 'cpx', 'busybox', 'true']);
    const src = join(bindDir, 'cp-in.txt');
    await writeFile(src, 'in\n');
    await ok(['cp', src, 'cpx:/cp-in.txt']);
    const upper = await run('sh', [
      '-c',
      `find ${JSON.stringify(join(d.dataRoot, `${uids.start}.${firstRange('/etc/subgid').start}`))} -name cp-in.txt -path '*/fs/*' -printf '%U:%G\\n'`,
    ]);
    assert.equal(upper.stdout.trim(), `${uids.start}:${firstRange('/etc/subgid').start}`, upper.stderr);
    const out = join(bindDir, 'cp-out.tar');
    const r = await run('sh', ['-c', `docker cp cpx:/cp-in.txt - > ${out}`], { env: { ...process.env, DOCKER_HOST: d.host } });
    assert.equal(r.code, 0, r.stderr);
    const listing = await run('tar', ['-tvnf', out]);
    assert.match(listing.stdout, /^\S+ 0\/0 .* cp-in\.txt$/m, listing.stdout);
    await ok(['rm', 'cpx']);
  });

  test('the remapped copy of a chain and its init layer go with the last image on the chain', async () => {
    const snapshots = async () =>
      (await run('ctr', ['--address', join(d.execRoot, 'containerd', 'containerd.sock'), '-n', 'engine', 'snapshots', 'ls'])).stdout;
    const remapped = /^(?:remap|init)-\d+\.\d+-[0-9a-f]{64}/gm;
    assert.equal((await snapshots()).match(remapped)?.length, 2, await snapshots());
    await ok(['volume', 'rm', 'uvol']);
    await ok(['rmi', 'busybox']);
    const deadline = Date.now() + 30_000;
    while ((await snapshots()).match(remapped) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    assert.equal((await snapshots()).match(remapped), null, await snapshots());
  });
});
