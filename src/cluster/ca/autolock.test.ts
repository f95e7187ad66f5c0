// Autolock's key format (swarmkit's SWMKEY-1-), KEK derivation and the sealing of the cluster keys.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatUnlockKey, kekId, kekOf, newUnlockKey, openClusterKeys, parseUnlockKey, sealClusterKeys } from './autolock.ts';
import type { ClusterRecord } from './swarm-object.ts';

test('unlock key: SWMKEY-1- and 43 characters of unpadded base64, parsed back; bad strings are 400s', () => {
  const k = newUnlockKey();
  const text = formatUnlockKey(k);
  assert.match(text, /^SWMKEY-1-[A-Za-z0-9+/]{43}$/);
  assert.deepEqual(parseUnlockKey(text), k);
  assert.deepEqual(parseUnlockKey(` ${text}\n`), k);
  for (const bad of ['', 'SWMKEY-1-', 'SWMTKN-1-abc', 'SWMKEY-1-***'])
    assert.throws(
      () => parseUnlockKey(bad),
      (e: Error & { status?: number }) => e.status === 400 && e.message === 'invalid key string',
    );
});

test('cluster keys sealed with the KEK: open with it only; off again puts them in the clear', () => {
  const rec = { ID: 'c', ca: { certPem: 'CERT', keyPem: 'CAKEY' }, dataKey: 'DATA' } as unknown as ClusterRecord;
  const kek = kekOf(newUnlockKey());
  const sealed = sealClusterKeys(rec, { ca: rec.ca, dataKey: 'DATA' }, kek);
  assert.equal(sealed.ca.keyPem, '');
  assert.equal(sealed.dataKey, undefined);
  assert.equal(sealed.autolock!.kekId, kekId(kek));
  assert.ok(!JSON.stringify(sealed).includes('CAKEY') && !JSON.stringify(sealed).includes('DATA'));
  assert.deepEqual(openClusterKeys(sealed, kek), { ca: { certPem: 'CERT', keyPem: 'CAKEY' }, dataKey: 'DATA' });
  assert.throws(
    () => openClusterKeys(sealed, null),
    (e: Error & { status?: number }) => e.status === 503,
  );
  assert.throws(
    () => openClusterKeys(sealed, kekOf(newUnlockKey())),
    (e: Error & { status?: number }) => e.status === 503,
  );
  const clear = sealClusterKeys(sealed, openClusterKeys(sealed, kek) as Required<ReturnType<typeof openClusterKeys>>, null);
  assert.equal(clear.autolock, undefined);
  assert.deepEqual(openClusterKeys(clear, null), { ca: { certPem: 'CERT', keyPem: 'CAKEY' }, dataKey: 'DATA' });
});
