import { OPTION_BY_KEY } from './options.ts';
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from './load.ts';
import { reloadConfig } from './reload.ts';
import type { LoadedConfig } from './daemon-config.ts';

const dir = mkdtempSync(join(tmpdir(), 'engine-config-reload-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const ENV = { HOME: '/home/u' };
let counter = 0;

function start(argv: string[], doc: unknown): { path: string; loaded: LoadedConfig } {
  const path = join(dir, `daemon-${++counter}.json`);
  writeFileSync(path, JSON.stringify(doc));
  const out = loadConfig(['--config-file', path, ...argv], ENV, { version: 'v', commit: 'c' });
  assert.equal(out.kind, 'run', out.kind === 'exit' ? out.stderr : '');
  return { path, loaded: (out as { loaded: LoadedConfig }).loaded };
}

function reload(loaded: LoadedConfig, path: string, doc: unknown) {
  writeFileSync(path, JSON.stringify(doc));
  return reloadConfig(loaded, ENV);
}

test('reload applies reloadable keys from the file and leaves the others', () => {
  const { path, loaded } = start([], { labels: ['a=1'], 'data-root': '/srv/one', 'max-concurrent-downloads': 2 });
  const out = reload(loaded, path, { labels: ['b=2'], 'data-root': '/srv/two', 'shutdown-timeout': 30, 'live-restore': true });
  assert.ok(out.ok, !out.ok ? out.error : '');
  const c = out.loaded.config;
  assert.deepEqual(c.labels, ['b=2']);
  assert.equal(c['shutdown-timeout'], 30);
  assert.equal(c['live-restore'], true);
  assert.equal(c['max-concurrent-downloads'], 3, 'absent from the new file: back to the default');
  assert.equal(c['data-root'], '/srv/one', 'not reloadable');
  assert.deepEqual(out.changed.sort(), ['labels', 'live-restore', 'max-concurrent-downloads', 'shutdown-timeout']);
  assert.deepEqual([...out.loaded.fileKeys].sort(), ['data-root', 'labels', 'live-restore', 'shutdown-timeout']);
  // Warnings follow the option table: only options not built yet warn (none of these, once built).
  const pendingNow = ['live-restore', 'shutdown-timeout'].filter((k) => OPTION_BY_KEY.get(k)!.status !== 'built');
  assert.deepEqual(
    out.loaded.warnings,
    pendingNow.map((k) => `${k} is set but ${OPTION_BY_KEY.get(k)!.note}`),
  );
  assert.equal(loaded.config['data-root'], '/srv/one');
  assert.deepEqual(loaded.config.labels, ['a=1'], 'the current configuration is not modified');
});

test('reload keeps flag values and refuses a file that now sets a flag option', () => {
  const { path, loaded } = start(['--label', 'from=flag', '--add-runtime', 'crun=/usr/bin/crun'], { 'registry-mirrors': ['https://m1'] });
  const ok = reload(loaded, path, { 'max-download-attempts': 7, runtimes: { kata: { path: '/opt/kata' } }, 'default-runtime': 'kata' });
  assert.ok(ok.ok, !ok.ok ? ok.error : '');
  assert.deepEqual(ok.loaded.config.labels, ['from=flag']);
  assert.deepEqual(ok.loaded.config['registry-mirrors'], []);
  assert.equal(ok.loaded.config['max-download-attempts'], 7);
  assert.deepEqual(ok.loaded.config.runtimes, { kata: { path: '/opt/kata' }, crun: { path: '/usr/bin/crun' } });
  assert.equal(ok.loaded.config['default-runtime'], 'kata');

  const bad = reload(ok.loaded, path, { labels: ['from=file'] });
  assert.equal(bad.ok, false);
  assert.match(
    !bad.ok ? bad.error : '',
    new RegExp(
      `^unable to configure the Engine daemon with file ${path}: the following directives are specified both as a flag and in the configuration file: labels: \\(from flag: \\[from=flag\\], from file: \\[from=file\\]\\)$`,
    ),
  );
  const again = reloadConfig(ok.loaded, ENV);
  assert.equal(again.ok, false, 'a non-reloadable conflict fails too');
});

test('an invalid file fails the reload', () => {
  const { path, loaded } = start([], {});
  for (const [doc, re] of [
    [{ bogus: true }, /don't match any configuration option: bogus/],
    [{ 'max-concurrent-uploads': 'many' }, /max-concurrent-uploads: expected an integer/],
    [{ 'default-runtime': 'ghost' }, /specified default runtime 'ghost' does not exist/],
    [{ 'log-level': 'loud' }, /invalid logging level: loud/],
  ] as [unknown, RegExp][]) {
    const out = reload(loaded, path, doc);
    assert.equal(out.ok, false);
    assert.match(!out.ok ? out.error : '', re);
  }
  writeFileSync(path, '{oops');
  const broken = reloadConfig(loaded, ENV);
  assert.match(!broken.ok ? broken.error : '', /invalid JSON/);
});

test('a named file that disappeared fails the reload', () => {
  const { path, loaded } = start([], {});
  unlinkSync(path);
  const out = reloadConfig(loaded, ENV);
  assert.equal(out.ok, false);
  assert.match(!out.ok ? out.error : '', /no such file or directory/);
});

test('debug toggles the log level; turning it off restores the level without debug', () => {
  const { path, loaded } = start([], { 'log-level': 'warn' });
  const on = reload(loaded, path, { debug: true });
  assert.ok(on.ok);
  assert.equal(on.loaded.config.debug, true);
  assert.equal(on.loaded.config['log-level'], 'debug');
  assert.deepEqual(on.changed.sort(), ['debug', 'log-level']);
  const off = reload(on.loaded, path, { debug: false });
  assert.ok(off.ok);
  assert.equal(off.loaded.config['log-level'], 'warn');

  const started = start(['-D'], {});
  assert.equal(started.loaded.config['log-level'], 'debug');
  const stop = reload(started.loaded, started.path, {});
  assert.ok(stop.ok);
  assert.equal(stop.loaded.config.debug, true, '-D given at start-up keeps its value');
  const viaFile = start([], { debug: true });
  const offAgain = reload(viaFile.loaded, viaFile.path, {});
  assert.ok(offAgain.ok);
  assert.equal(offAgain.loaded.config.debug, false);
  assert.equal(offAgain.loaded.config['log-level'], 'info');
});

test('a reload with nothing changed reports no changes', () => {
  const { path, loaded } = start([], { features: { cdi: false } });
  const out = reload(loaded, path, { features: { cdi: false } });
  assert.ok(out.ok);
  assert.deepEqual(out.changed, []);
  assert.deepEqual(out.loaded.config, loaded.config);
});
