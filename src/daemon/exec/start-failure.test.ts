// An exec that cannot start: the exit code and the answer dockerd gives (setExitCodeFromError's
// order), from the runtime's messages for a file that is not executable, a directory, a missing
// command and a file mounted over a directory.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EngineError } from '../../errors.ts';
import { startError, startFailureExitCode } from './start-failure.ts';

const runc = (what: string) => new Error(`OCI runtime exec failed: exec failed: unable to start container process: exec: ${what}: unknown`);

test('not executable or a directory: 126, a 400 saying permission denied', () => {
  const noExec = runc('"/etc/passwd": permission denied');
  assert.equal(startFailureExitCode(noExec), 126);
  assert.equal((startError(noExec) as EngineError).code, 'INVALID_PARAMETER');
  const dir = runc('"/tmp": is a directory');
  assert.equal(startFailureExitCode(dir), 126);
  assert.match(startError(dir).message, /is a directory: unknown: permission denied$/);
});

test('missing command or file: 127; permission denied wins over a missing file in one message', () => {
  assert.equal(startFailureExitCode(runc('"nope": executable file not found in $PATH')), 127);
  assert.equal(startFailureExitCode(runc('"/no/such": no such file or directory')), 127);
  assert.equal(startFailureExitCode(new Error('failed to run runc create/exec call for container x: exit status 1')), 127);
  assert.equal(startFailureExitCode(new Error('open /x: no such file or directory: permission denied')), 126);
  const notDir = runc('"/bin/sh/x": not a directory');
  assert.equal(startFailureExitCode(notDir), 127);
  assert.match(startError(notDir).message, /Are you trying to mount a directory onto a file/);
});

test('anything else: 126 (a failed start) and a 500', () => {
  const other = new Error('ttrpc: closed');
  assert.equal(startFailureExitCode(other), 126);
  assert.equal((startError(other) as EngineError).code, 'INTERNAL');
});
