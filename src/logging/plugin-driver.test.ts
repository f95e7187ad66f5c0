// The log-plugin driver against the test plugin (test/helpers/log-plugin.ts) on a unix socket: the
// shared driver behaviour suite (what does not need a file), then what only a plugin does.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { TestLogPlugin } from '../../test/helpers/log-plugin.ts';
import { EngineError } from '../errors.ts';
import { PluginClient } from '../plugins/client.ts';
import { runDriverSuite } from './driver-suite.ts';
import { PluginLogDriver } from './plugin-driver.ts';
import type { LogPluginInfo } from './types.ts';
import type { LogDriver, LogMessage, LogReadOptions, LogStreams } from './types.ts';

let dir: string;
let plugin: TestLogPlugin;
/** One that cannot read: `docker logs` goes to dockerd's dual-logging cache. */
let writeOnly: TestLogPlugin;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-logplugin-'));
  plugin = new TestLogPlugin(join(dir, 'testlog.sock'));
  await plugin.start();
  writeOnly = new TestLogPlugin(join(dir, 'writeonly.sock'));
  writeOnly.readLogs = false;
  await writeOnly.start();
});
after(async () => {
  await plugin.stop();
  await writeOnly.stop();
  await rm(dir, { recursive: true, force: true });
});

const info = (id: string, options: Record<string, string>): LogPluginInfo => ({
  Config: options,
  ContainerID: id,
  ContainerName: '/suite',
  ContainerEntrypoint: 'sh',
  ContainerArgs: [],
  ContainerImageID: '',
  ContainerImageName: 'busybox',
  ContainerCreated: new Date().toISOString(),
  ContainerEnv: [],
  ContainerLabels: {},
  LogPath: '',
  DaemonName: 'docker',
});

// The suite's container id is its directory, where the cache goes as beside a real container.
const make = (id: string, options: Record<string, string> = {}, p = plugin) =>
  new PluginLogDriver(
    'testlog',
    new PluginClient({ name: 'testlog', socketPath: p.socketPath }),
    info(id, options),
    join(dir, 'fifos'),
    join(id.startsWith('/') ? id : join(dir, id), 'container-cached.log'),
  );

/**
 * As the daemon uses it: Capabilities before a read; and, for the suite's reads right after an
 * attach, the plugin has read what went down the FIFO (a file driver's write is visible at once).
 */
class Settled implements LogDriver {
  readonly name = 'testlog';
  readonly logPath = '';
  constructor(
    private readonly d: PluginLogDriver,
    private readonly p: TestLogPlugin,
  ) {}
  async attach(s: LogStreams): Promise<void> {
    await this.d.attach(s);
    await this.p.quiet();
  }
  read(opts: LogReadOptions, signal?: AbortSignal): AsyncIterable<LogMessage> {
    const d = this.d;
    return (async function* () {
      await d.prepareRead();
      yield* d.read(opts, signal);
    })();
  }
  close(): Promise<void> {
    return this.d.close();
  }
}

// The suite's directory stands for the container: the same dir, the same container's entries.
runDriverSuite('log plugin', { create: (options, d) => new Settled(make(d, options), plugin) });
// Without ReadLogs the same behaviour comes from the local cache beside the container.
runDriverSuite('log plugin without ReadLogs (dual-logging cache)', {
  create: (options, d) => new Settled(make(d, options, writeOnly), writeOnly),
});

describe('log plugin driver', () => {
  it('StartLogging gets the FIFO and the Info; StopLogging the same FIFO, which is then removed', async () => {
    const d = make('c-start', { 'x-opt': '1' });
    await d.attach({ stdout: Readable.from([Buffer.from('a\n')]) });
    await d.close();
    const started = plugin.started.find((s) => s.Info.ContainerID === 'c-start')!;
    assert.equal(started.File.startsWith(join(dir, 'fifos') + '/'), true);
    assert.deepEqual(started.Info.Config, { 'x-opt': '1' });
    assert.ok(plugin.stopped.includes(started.File));
    assert.deepEqual(plugin.lines('c-start'), ['a']);
  });

  it("without Cap.ReadLogs: the lines still reach the plugin, reads come from the cache; cache-disabled: dockerd's 501", async () => {
    const cdir = await mkdtemp(join(dir, 'c-'));
    const d = make(cdir, {}, writeOnly);
    await d.attach({ stdout: Readable.from([Buffer.from('one\ntwo\n')]) });
    await d.close();
    assert.deepEqual(writeOnly.lines(cdir), ['one', 'two']);
    const read: string[] = [];
    for await (const m of d.read({ follow: false, stdout: true, stderr: true })) read.push(m.line.toString());
    assert.deepEqual(read, ['one\n', 'two\n']);
    const off = make(await mkdtemp(join(dir, 'c-')), { 'cache-disabled': 'true' }, writeOnly);
    await off.prepareRead();
    assert.throws(
      () => off.read({ follow: false, stdout: true, stderr: true }),
      (e: unknown) => e instanceof EngineError && e.status === 501 && e.message === 'configured logging driver does not support reading',
    );
  });

  it('a StartLogging error is a start failure and leaves no FIFO', async () => {
    plugin.startError = 'no room';
    try {
      const d = make('c-fail');
      await assert.rejects(d.start(), /failed to initialize logging driver: error creating logger: no room/);
      const file = plugin.started.find((s) => s.Info.ContainerID === 'c-fail')!.File;
      await assert.rejects(import('node:fs/promises').then((fs) => fs.stat(file)));
    } finally {
      plugin.startError = '';
    }
  });
});
