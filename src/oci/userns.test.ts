// Unit tests of the user-namespace id maps (oci/userns.ts) and of resolving --userns-remap against
// passwd/group/subuid/subgid files in a temporary directory (oci/userns-setup.ts).
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { EngineError } from '../errors.ts';
import { IdentityMap, checkUsernsMode, mappingsFrom, nextFreeRange, parseRemapSetting, subIdRanges, usesRemap } from './userns.ts';
import { resolveRemap, type HostFiles } from './userns-setup.ts';
import { cgroupsDelegated, refuseLimitsWithoutCgroups, requestedLimits } from './cgroups.ts';

describe('id maps', () => {
  test('ranges are laid end to end from container id 0, and ids translate across them', () => {
    const text = 'alice:100000:65536\n# comment\nbob:300000:10\nalice:500000:100\nalice:bad:1\n';
    const ranges = subIdRanges(text, ['alice']);
    assert.deepEqual(ranges, [
      { start: 100000, length: 65536 },
      { start: 500000, length: 100 },
    ]);
    const maps = mappingsFrom(ranges);
    assert.deepEqual(maps, [
      { containerID: 0, hostID: 100000, size: 65536 },
      { containerID: 65536, hostID: 500000, size: 100 },
    ]);
    const m = new IdentityMap('alice', 'alice', maps, mappingsFrom([{ start: 200000, length: 65536 }]));
    assert.equal(m.rootUid, 100000);
    assert.equal(m.rootGid, 200000);
    assert.equal(m.key, '100000.200000');
    assert.equal(m.toHostUid(1000), 101000);
    assert.equal(m.toHostUid(65537), 500001);
    assert.throws(() => m.toHostUid(65636), /Container ID 65636 cannot be mapped/);
    assert.throws(() => m.toHostGid(70000), EngineError);
    assert.equal(m.toContainerUid(101000), 1000);
    assert.equal(m.toContainerUid(500001), 65537);
    assert.equal(m.toContainerUid(0), 65534); // unmapped: the overflow id
    assert.equal(m.toContainerGid(200005), 5);
  });

  test('a free range starts at 100000, after every overlapping one', () => {
    assert.deepEqual(nextFreeRange([]), { start: 100000, length: 65536 });
    assert.deepEqual(
      nextFreeRange([
        { start: 100000, length: 65536 },
        { start: 165536, length: 10 },
      ]),
      { start: 165546, length: 65536 },
    );
    // A range far above leaves the gap below it usable; one below 100000 does not matter.
    assert.deepEqual(
      nextFreeRange([
        { start: 10, length: 5 },
        { start: 500000, length: 65536 },
      ]),
      { start: 100000, length: 65536 },
    );
    assert.deepEqual(nextFreeRange([{ start: 150000, length: 1 }]), { start: 150001, length: 65536 });
  });

  test('the setting: default, user[:group], uid[:gid]; anything else is a 400', () => {
    assert.deepEqual(parseRemapSetting('default'), { user: 'default' });
    assert.deepEqual(parseRemapSetting('alice:staff'), { user: 'alice', group: 'staff' });
    assert.deepEqual(parseRemapSetting('1000:1000'), { user: '1000', group: '1000' });
    for (const bad of ['', 'a:b:c', ':x', 'a:', 'a b', '../x']) assert.throws(() => parseRemapSetting(bad), EngineError, bad);
  });

  test("UsernsMode checks follow dockerd's", () => {
    assert.equal(usesRemap('', true), true);
    assert.equal(usesRemap('host', true), false);
    assert.equal(usesRemap('', false), false);
    assert.throws(() => checkUsernsMode({ UsernsMode: 'bogus' }, false), /invalid USER mode: bogus/);
    assert.throws(() => checkUsernsMode({ Privileged: true }, true), /privileged mode is incompatible with user namespaces/);
    assert.throws(() => checkUsernsMode({ NetworkMode: 'host' }, true), /host's network namespace/);
    assert.throws(() => checkUsernsMode({ PidMode: 'host' }, true), /host PID namespace/);
    checkUsernsMode({ Privileged: true, NetworkMode: 'host', PidMode: 'host', UsernsMode: 'host' }, true);
    checkUsernsMode({ Privileged: true, NetworkMode: 'host' }, false);
  });
});

describe('resolveRemap on files', () => {
  let dir: string;
  let files: HostFiles;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-userns-unit-'));
    files = { passwd: join(dir, 'passwd'), group: join(dir, 'group'), subuid: join(dir, 'subuid'), subgid: join(dir, 'subgid') };
    await writeFile(
      files.passwd,
      'root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\nnorange:x:1001:1001::/:/bin/false\n',
    );
    await writeFile(files.group, 'root:x:0:\nalice:x:1000:\nstaff:x:50:\nnorange:x:1001:\n');
    await writeFile(files.subuid, 'alice:100000:65536\n1001:300000:65536\n');
    await writeFile(files.subgid, 'alice:200000:65536\n');
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  test("user, user:group and uid:gid resolve to the user's ranges", async () => {
    const a = await resolveRemap('alice', files);
    assert.ok(a);
    assert.deepEqual([a.user, a.group, a.rootUid, a.rootGid], ['alice', 'alice', 100000, 200000]);
    const b = await resolveRemap('alice:staff', files);
    assert.deepEqual([b?.group, b?.rootGid], ['staff', 200000]);
    const c = await resolveRemap('1000:50', files);
    assert.deepEqual([c?.user, c?.group], ['alice', 'staff']);
  });

  test('root turns remapping off; unknown users, groups and missing ranges are errors', async () => {
    assert.equal(await resolveRemap('root', files), undefined);
    await assert.rejects(resolveRemap('nobody-here', files), /uid lookup for "nobody-here"/);
    await assert.rejects(resolveRemap('4242', files), /Uid 4242 has no entry/);
    await assert.rejects(resolveRemap('alice:nogroup', files), /gid lookup for "nogroup"/);
    // Ranges listed under the numeric uid count; subgid has none for this user.
    await assert.rejects(resolveRemap('norange', files), /no subgid ranges found for user "norange"/);
    await writeFile(files.subuid, '');
    await assert.rejects(resolveRemap('alice', files), /no subuid ranges found for user "alice"/);
  });
});

describe('rootless without cgroups', () => {
  test('every cgroup setting asked for is named in the refusal; none asked, none refused', () => {
    assert.deepEqual(requestedLimits({}), []);
    assert.deepEqual(requestedLimits({ Memory: 0, MemorySwap: -1, MemorySwappiness: -1, CpusetCpus: '', BlkioWeightDevice: [] }), []);
    assert.deepEqual(
      requestedLimits({ Memory: 64 << 20, PidsLimit: 10, CpusetCpus: '0', DeviceCgroupRules: ['c 1:3 r'], OomKillDisable: true }),
      ['Memory', 'PidsLimit', 'CpusetCpus', 'DeviceCgroupRules', 'OomKillDisable'],
    );
    refuseLimitsWithoutCgroups({ Privileged: false });
    assert.throws(
      () => refuseLimitsWithoutCgroups({ NanoCpus: 1e9 }),
      (err: EngineError) => err.code === 'INVALID_PARAMETER' && /not delegated.*refused NanoCpus$/.test(err.message),
    );
  });

  test('cgroups are never delegated on v1 or hybrid', () => {
    assert.equal(cgroupsDelegated('v1'), false);
    assert.equal(cgroupsDelegated('hybrid'), false);
  });
});
