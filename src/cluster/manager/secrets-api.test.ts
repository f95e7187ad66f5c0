// Secrets and configs in the replicated store, against a real one-member etcd and two managers'
// clients: the data key settled once for both, data sealed at rest, one winner when both create
// the same name at once, a stale name claim taken over, labels-only updates with the version
// checked, payloads of exactly the referenced objects, removal refused while a service uses one.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { startTestEtcd } from '../../../test/helpers/etcd-member.ts';
import { after, before, describe, test } from 'node:test';
import { Logger } from '../../util/log.ts';
import { EtcdMember } from '../store/etcd-process.ts';
import { open } from '../ca/secret-crypto.ts';
import type { FileObjectRecord } from './secret-spec.ts';
import { clusterDataKey, FileObjectsApi } from './secrets-api.ts';
import type { ServiceRecord } from './service-spec.ts';
import { ClusterStore, type Stored } from '../store/store.ts';
import type { TaskRecord } from './tasks.ts';

const log = new Logger({ level: 'error', format: 'text', raw: false });
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('secrets and configs in a real etcd', () => {
  let dir: string;
  let member: EtcdMember;
  const stores: ClusterStore[] = [];
  let services: Stored<ServiceRecord>[] = [];
  const apis: FileObjectsApi[] = [];
  const keys: Array<() => Promise<string>> = [];
  let configs: FileObjectsApi;
  before(async () => {
    const etcd = await startTestEtcd(log);
    dir = etcd.dir;
    member = etcd.member;
    for (let i = 0; i < 2; i++) stores.push(await etcd.openStore());
    // A cluster record without a data key (a cluster made before secrets): the first use adds one.
    await stores[0]!.create('cluster', { ID: 'c1', Spec: {} });
    for (const s of stores) {
      const key = clusterDataKey(s, (rec) => rec.dataKey);
      keys.push(key);
      apis.push(new FileObjectsApi('secrets', s, undefined, key, async () => services));
    }
    configs = new FileObjectsApi('configs', stores[0]!, undefined, keys[0]!, async () => services);
  });
  after(async () => {
    for (const s of stores) s.close();
    await member?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('one data key, sealed data, one winner per name, labels-only updates', async () => {
    const [k1, k2] = await Promise.all(keys.map((k) => k()));
    assert.equal(k1, k2, 'both managers settle on the same key');
    assert.equal((await stores[0]!.get<{ dataKey: string }>('cluster'))!.value.dataKey, k1);

    const results = await Promise.allSettled(apis.map((a) => a.create({ Name: 'race', Data: b64('pw') })));
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1, JSON.stringify(results));
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    assert.match(lost.reason.message, /AlreadyExists desc = secret race already exists/);
    assert.equal((await apis[0]!.list(new Map())).length, 1);

    const { ID } = await apis[0]!.create({ Name: 's1', Labels: { a: 'b' }, Data: b64('hunter2') });
    const raw = (await stores[0]!.get<FileObjectRecord>(`secrets/${ID}`))!;
    assert.ok(!JSON.stringify(raw.value).includes('hunter2') && !JSON.stringify(raw.value).includes(b64('hunter2')));
    assert.equal(open(k1!, ID, raw.value.Sealed).toString(), 'hunter2');
    const view = await apis[1]!.inspect('s1');
    assert.deepEqual(view.Spec, { Name: 's1', Labels: { a: 'b' } });

    await apis[1]!.update(ID, { Name: 's1', Labels: { c: 'd' } }, raw.version);
    await assert.rejects(apis[0]!.update(ID, { Name: 's1', Labels: {} }, raw.version), /update out of sequence/);
    assert.deepEqual((await apis[0]!.inspect(ID)).Spec, { Name: 's1', Labels: { c: 'd' } });

    const c = await configs.create({ Name: 'c1', Data: b64('conf') });
    assert.equal(((await configs.inspect('c1')).Spec as { Data: string }).Data, b64('conf'));
    assert.equal(((await configs.list(new Map()))[0]!.Spec as { Data: string }).Data, b64('conf'));

    // Payloads: exactly the referenced objects, opened.
    const tt = {
      ContainerSpec: { Image: 'busybox', Secrets: [{ SecretID: ID, SecretName: 's1', File: { Name: 's1' } }] },
    };
    await apis[0]!.checkRefs(tt);
    assert.deepEqual(await apis[0]!.payloads([{ ID: 't1', Spec: tt } as unknown as TaskRecord]), {
      data: { [ID]: b64('hunter2') },
      templating: {},
    });
    assert.deepEqual(await configs.payloads([{ ID: 't1', Spec: tt } as unknown as TaskRecord]), { data: {}, templating: {} });
    assert.ok(c.ID);

    // In use: refused; free again once the service is gone.
    services = [
      {
        key: 'services/x',
        version: 1,
        created: 1,
        value: { ID: 'x', Spec: { Name: 'web', TaskTemplate: tt } } as unknown as ServiceRecord,
      },
    ];
    await assert.rejects(apis[1]!.remove('s1'), /secret 's1' is in use by the following service: web/);
    services = [];
    await apis[1]!.remove('s1');
    await assert.rejects(apis[0]!.inspect('s1'), /secret s1 not found/);
    // The name is free again.
    await apis[0]!.create({ Name: 's1', Data: b64('again') });
  });

  test('a stale name claim left without its object is taken over; a fresh one is not', async () => {
    await stores[0]!.create('secrets-names/orphan', { id: 'gone', at: Date.now() - 120_000 });
    assert.ok((await apis[0]!.create({ Name: 'orphan', Data: b64('x') })).ID);
    await stores[0]!.create('secrets-names/young', { id: 'gone', at: Date.now() });
    await assert.rejects(apis[0]!.create({ Name: 'young', Data: b64('x') }), /secret young already exists/);
  });
});
