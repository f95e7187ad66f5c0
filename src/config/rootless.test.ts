// Unit tests of rootless mode's defaults (config/rootless.ts) through loadConfig: the XDG paths, the
// flag or rootlesskit's environment turning it on, explicit values winning, XDG_RUNTIME_DIR required.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadConfig } from './load.ts';
import { rootlessConfigFile, rootlessRequested } from './rootless.ts';

const dir = mkdtempSync(join(tmpdir(), 'engine-config-rootless-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const EMPTY = join(dir, 'empty.json');
writeFileSync(EMPTY, '{}');
const VERSION = { version: '1.2.3', commit: 'abc1234' };
const ENV = { HOME: '/home/u', XDG_RUNTIME_DIR: '/run/user/1000' };

function config(argv: string[], env: NodeJS.ProcessEnv) {
  const out = loadConfig(argv, env, VERSION);
  assert.equal(out.kind, 'run', out.kind === 'exit' ? out.stderr : '');
  return (out as Extract<typeof out, { kind: 'run' }>).loaded.config;
}

test('--rootless moves data, runtime state, pidfile and socket to the XDG directories', () => {
  const c = config(['--rootless', '--config-file', EMPTY], ENV);
  assert.equal(c.rootless, true);
  assert.equal(c['data-root'], '/home/u/.local/share/engine');
  assert.equal(c['exec-root'], '/run/user/1000/engine');
  assert.equal(c.pidfile, '/run/user/1000/engine.pid');
  assert.deepEqual(c.hosts, ['unix:///run/user/1000/engine.sock']);
  const xdg = config(['--rootless', '--config-file', EMPTY], { ...ENV, XDG_DATA_HOME: '/data/u' });
  assert.equal(xdg['data-root'], '/data/u/engine');
});

test("rootlesskit's environment turns it on; explicit settings win; --rootless=false keeps it off", () => {
  const env = { ...ENV, ROOTLESSKIT_STATE_DIR: '/run/user/1000/rk' };
  const file = join(dir, 'daemon.json');
  writeFileSync(file, JSON.stringify({ 'data-root': '/srv/engine' }));
  const c = config(['--config-file', file, '--exec-root', '/x/exec'], env);
  assert.equal(c.rootless, true);
  assert.equal(c['data-root'], '/srv/engine');
  assert.equal(c['exec-root'], '/x/exec');
  assert.equal(c.pidfile, '/run/user/1000/engine.pid');
  const off = config(['--rootless=false', '--config-file', file], env);
  assert.equal(off.rootless, false);
  assert.equal(off.pidfile, '/var/run/engine.pid');
  assert.equal(rootlessRequested(undefined, {}), false);
  assert.equal(rootlessConfigFile({ HOME: '/home/u' }), '/home/u/.config/engine/daemon.json');
  assert.equal(rootlessConfigFile({ HOME: '/home/u', XDG_CONFIG_HOME: '/cfg' }), '/cfg/engine/daemon.json');
});

test('without XDG_RUNTIME_DIR rootless mode is a configuration error', () => {
  const out = loadConfig(['--rootless', '--config-file', EMPTY], { HOME: '/home/u' }, VERSION);
  assert.equal(out.kind, 'exit');
  assert.match((out as { stderr: string }).stderr, /rootless mode needs XDG_RUNTIME_DIR/);
});
