import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildFailureReason } from './failure-reason.ts';

test("build failures get dockerd's reason words", () => {
  const r = (msg: string, cancelled = false) => buildFailureReason(new Error(msg), cancelled);
  assert.equal(r('dockerfile parse error on line 2: unknown instruction: FOO'), 'unknown_instruction_error');
  assert.equal(r('dockerfile parse error on line 1: FROM requires either one or three arguments'), 'dockerfile_syntax_error');
  assert.equal(r('target stage "nope" could not be found'), 'build_target_not_reachable_error');
  assert.equal(r('No image was generated. Is your Dockerfile empty?'), 'dockerfile_empty_error');
  assert.equal(r("Chaining ONBUILD via `ONBUILD ONBUILD` isn't allowed"), 'command_not_supported_error');
  assert.equal(r("The command '/bin/sh -c false' returned a non-zero code: 1"), 'error_processing_commands_error');
  assert.equal(r('anything', true), 'build_canceled');
});
