import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { applyCdiProcessEdits, CdiRegistry, cdiDeviceIds } from './cdi.ts';
import type { OciSpec } from './spec-types.ts';

describe('CDI', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-cdi-unit-'));
    await writeFile(
      join(dir, 'a.json'),
      JSON.stringify({
        cdiVersion: '0.6.0',
        kind: 'a.test/c',
        devices: [
          {
            name: 'd1',
            containerEdits: { hooks: [{ hookName: 'createContainer', path: '/bin/true', args: ['true', 'x'] }], additionalGids: [5] },
          },
        ],
      }),
    );
    await writeFile(
      join(dir, 'bad-hook.json'),
      JSON.stringify({
        cdiVersion: '0.6.0',
        kind: 'b.test/c',
        devices: [{ name: 'd', containerEdits: { hooks: [{ hookName: 'whenever', path: '/x' }] } }],
      }),
    );
    await writeFile(join(dir, 'bad-kind.yaml'), 'cdiVersion: "0.6.0"\nkind: nokind\ndevices: [{name: d}]\n');
    await writeFile(join(dir, 'ignored.txt'), 'not a spec');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('specs are checked; bad ones are reported, good ones serve devices', () => {
    const r = new CdiRegistry(() => [dir, join(dir, 'missing')]);
    assert.deepEqual(r.deviceNames(), ['a.test/c=d1']);
    const errs = r.specErrors();
    assert.equal(errs.length, 2);
    assert.ok(errs.some((e) => e.includes('bad-hook.json') && e.includes('unknown hook "whenever"')));
    assert.ok(errs.some((e) => e.includes('bad-kind.yaml') && e.includes('invalid kind')));
  });

  test('hooks and groups go into the spec; device requests of other drivers are refused', () => {
    const r = new CdiRegistry(() => [dir]);
    const inj = r.resolve(cdiDeviceIds([{ Driver: 'cdi', DeviceIDs: ['a.test/c=d1'] }], true));
    const spec = { process: { env: ['A=1'], user: { uid: 0, gid: 0, additionalGids: [5, 6] } } } as unknown as OciSpec;
    applyCdiProcessEdits(spec, inj);
    assert.deepEqual(spec.hooks, { createContainer: [{ path: '/bin/true', args: ['true', 'x'] }] });
    assert.deepEqual(spec.process.user.additionalGids, [5, 6]);
    assert.throws(() => cdiDeviceIds([{ Driver: 'cdi', DeviceIDs: ['a.test/c=d1'] }], false), /could not select device driver "cdi"/);
    assert.throws(() => r.resolve(['a.test/c=nope']), /unresolvable CDI devices a\.test\/c=nope/);
  });
});
