import assert from 'node:assert/strict';
import { test } from 'node:test';
import { killEffect, nextBackoff, restartAtStartup, shouldRestart, type StartupFacts } from './restart-policy.ts';

const crashed: StartupFacts = { startedBefore: true, running: false, exitCode: 137, stoppedByUser: false, restartCount: 0 };

test('restartAtStartup: always, even after a user stop', () => {
  assert.equal(restartAtStartup({ Name: 'always' }, crashed), true);
  assert.equal(restartAtStartup({ Name: 'always' }, { ...crashed, exitCode: 0, stoppedByUser: true }), true);
});

test('restartAtStartup: unless-stopped unless the user stopped it', () => {
  assert.equal(restartAtStartup({ Name: 'unless-stopped' }, { ...crashed, exitCode: 0 }), true);
  assert.equal(restartAtStartup({ Name: 'unless-stopped' }, { ...crashed, stoppedByUser: true }), false);
});

test('restartAtStartup: on-failure after a failure with retries left, never after a user stop', () => {
  assert.equal(restartAtStartup({ Name: 'on-failure' }, crashed), true);
  assert.equal(restartAtStartup({ Name: 'on-failure' }, { ...crashed, exitCode: 0 }), false);
  assert.equal(restartAtStartup({ Name: 'on-failure', MaximumRetryCount: 2 }, { ...crashed, restartCount: 1 }), true);
  assert.equal(restartAtStartup({ Name: 'on-failure', MaximumRetryCount: 2 }, { ...crashed, restartCount: 2 }), false);
  assert.equal(restartAtStartup({ Name: 'on-failure' }, { ...crashed, stoppedByUser: true }), false);
});

test('restartAtStartup: never for no policy, a running or a never-started container', () => {
  assert.equal(restartAtStartup({ Name: 'no' }, crashed), false);
  assert.equal(restartAtStartup(undefined, crashed), false);
  assert.equal(restartAtStartup({ Name: 'always' }, { ...crashed, running: true }), false);
  assert.equal(restartAtStartup({ Name: 'always' }, { ...crashed, startedBefore: false }), false);
});

test('shouldRestart and nextBackoff (the exit path)', () => {
  const f = { exitCode: 1, stoppedByUser: false, restartCount: 0, shuttingDown: false };
  assert.equal(shouldRestart({ Name: 'on-failure', MaximumRetryCount: 1 }, f), true);
  assert.equal(shouldRestart({ Name: 'on-failure', MaximumRetryCount: 1 }, { ...f, restartCount: 1 }), false);
  assert.equal(shouldRestart({ Name: 'always' }, { ...f, shuttingDown: true }), false);
  assert.equal(shouldRestart({ Name: 'always' }, { ...f, stoppedByUser: true }), false);
  assert.equal(nextBackoff(0, 50), 100);
  assert.equal(nextBackoff(100, 50), 200);
  assert.equal(nextBackoff(40_000, 50), 60_000);
  assert.equal(nextBackoff(800, 10_000), 100);
});

test('startFailureExitCode: 127 for a missing command, 126 when not executable, else 128 (as dockerd)', async () => {
  const { startFailureExitCode } = await import('./lifecycle.ts');
  assert.equal(startFailureExitCode('exec: "nope": executable file not found in $PATH'), 127);
  assert.equal(startFailureExitCode('open /x: no such file or directory'), 127);
  assert.equal(startFailureExitCode('exec: "/etc": permission denied'), 126);
  assert.equal(startFailureExitCode('cgroup setup failed'), 128);
});

test('killEffect: SIGKILL, the own stop signal, or any signal without one ends the restarts', () => {
  assert.equal(killEffect(9, 15), 'stopped');
  assert.equal(killEffect(10, 10), 'stopped');
  assert.equal(killEffect(10, undefined), 'stopped');
  assert.equal(killEffect(15, 10), 'signalled');
});

test('a signalled container: unless-stopped gives up, always and on-failure restart', () => {
  const f = { exitCode: 1, stoppedByUser: false, signalledByUser: true, restartCount: 0, shuttingDown: false };
  assert.equal(shouldRestart({ Name: 'unless-stopped' }, f), false);
  assert.equal(shouldRestart({ Name: 'always' }, f), true);
  assert.equal(shouldRestart({ Name: 'on-failure' }, f), true);
  assert.equal(restartAtStartup({ Name: 'unless-stopped' }, { ...crashed, signalledByUser: true }), false);
  assert.equal(restartAtStartup({ Name: 'always' }, { ...crashed, signalledByUser: true }), true);
});
