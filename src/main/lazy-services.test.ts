// The lazily loaded services answer as the services they stand for: cluster-lazy.ts against a real
// ClusterService on the same data root (inactive, after restore, with a damaged state file), and
// plugins-lazy.ts preparing the same directories and loading the manager once, at start-up only
// when plugins are recorded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '../util/log.ts';
import { ClusterService } from '../cluster/service.ts';
import { PluginManager } from '../daemon/plugins/service.ts';
import type { PluginRunner } from '../daemon/plugins/runner.ts';
import { PluginFiles } from '../daemon/plugins/store.ts';
import { lazyClusterService } from './cluster-lazy.ts';
import { lazyPluginManager } from './plugins-lazy.ts';

const log = new Logger({ level: 'fatal', format: 'text', raw: false });

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return `${(err as { code?: string }).code}: ${(err as Error).message}`;
  }
  return 'no error';
}

async function sameAnswers(dataRoot: string): Promise<string> {
  const deps = { dataRoot, log, engineVersion: '0.0.0', engineLabels: () => [] };
  const real = new ClusterService(deps);
  const lazy = lazyClusterService(deps);
  try {
    assert.equal(lazy.pingState(), real.pingState());
    assert.deepEqual(await lazy.info(), await real.info());
    await Promise.all([real.restore(), lazy.restore()]);
    assert.equal(lazy.pingState(), real.pingState());
    assert.deepEqual(await lazy.info(), await real.info());
    const restored = lazy.pingState();
    assert.equal(await failure(lazy.list('nodes', new Map(), {})), await failure(real.list('nodes', new Map())));
    assert.equal(await failure(lazy.inspectCluster()), await failure(real.inspectCluster()));
    assert.equal(await failure(lazy.leave(false)), await failure(real.leave(false)));
    assert.equal(lazy.pingState(), real.pingState());
    return restored;
  } finally {
    await Promise.all([real.shutdown(), lazy.shutdown()]);
  }
}

test('cluster-lazy answers as the cluster service: a node in no cluster, and one whose saved state is damaged', async () => {
  const root = await mkdtemp(join(tmpdir(), 'engine-lazy-cluster-'));
  try {
    assert.equal(await sameAnswers(root), 'inactive');
    await mkdir(join(root, 'cluster'), { recursive: true });
    await writeFile(join(root, 'cluster', 'state.json'), '{not json');
    assert.equal(await sameAnswers(root), 'error');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('plugins-lazy: with no records the manager loads on the first request only, once; with records, at init', async () => {
  const root = await mkdtemp(join(tmpdir(), 'engine-lazy-plugins-'));
  try {
    const files = new PluginFiles(join(root, 'plugins'));
    let made = 0;
    // No plugin is recorded, so the manager never starts one: it needs no runner.
    const make = async () => {
      made++;
      return new PluginManager({
        files,
        runner: {} as PluginRunner,
        registry: { registrySession: () => Promise.reject(new Error('no registry')) },
        decodeAuth: () => ({}),
        log,
      });
    };
    await mkdir(files.tmp(), { recursive: true });
    await writeFile(join(files.tmp(), 'left-over'), 'x');
    const lazy = lazyPluginManager(files, make);
    await lazy.init();
    assert.equal(made, 0);
    assert.ok((await stat(files.blobsDir)).isDirectory());
    assert.equal(
      await failure(stat(join(files.tmp(), 'left-over'))),
      'ENOENT: ' + `ENOENT: no such file or directory, stat '${join(files.tmp(), 'left-over')}'`,
    );
    assert.equal(lazy.find('vol'), undefined);
    assert.equal(lazy.isDisabled('vol'), false);
    assert.deepEqual(await Promise.all([lazy.list(new Map()), lazy.list(new Map())]), [[], []]);
    assert.equal(made, 1);
    assert.equal(await failure(lazy.inspect('vol')), 'NOT_FOUND: plugin "vol" not found');
    await lazy.shutdown(false);

    // A recorded (disabled) plugin: the manager loads during init and knows it.
    await files.save([
      {
        Id: 'a'.repeat(64),
        Name: 'vol:latest',
        Enabled: false,
        Settings: { Mounts: [], Env: [], Args: [], Devices: [] },
        PluginReference: '',
        Config: {},
      } as never,
    ]);
    const again = lazyPluginManager(files, make);
    await again.init();
    assert.equal(made, 2);
    assert.equal(again.isDisabled('vol'), true);
    await again.shutdown(false);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
