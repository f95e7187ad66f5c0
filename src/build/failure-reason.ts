// Why a build failed, in the `reason` words of dockerd's builder_builds_failed metric. dockerd counts
// a few causes at the places they arise; here the error that ended the build is classified once.
// Failures of a step (a RUN exiting non-zero, a COPY of a missing file, a base image that cannot be
// pulled) are error_processing_commands_error, a reason dockerd declares for them.

export const BUILD_FAILURE_REASONS = [
  'dockerfile_syntax_error',
  'dockerfile_empty_error',
  'command_not_supported_error',
  'error_processing_commands_error',
  'build_target_not_reachable_error',
  'missing_onbuild_arguments_error',
  'unknown_instruction_error',
  'build_canceled',
] as const;

export type BuildFailureReason = (typeof BUILD_FAILURE_REASONS)[number];

export function buildFailureReason(err: unknown, cancelled: boolean): BuildFailureReason {
  if (cancelled) return 'build_canceled';
  const m = err instanceof Error ? err.message : String(err);
  if (/unknown instruction:/.test(m)) return 'unknown_instruction_error';
  if (/^target stage .* could not be found$/.test(m)) return 'build_target_not_reachable_error';
  if (/Is your Dockerfile empty\?|file with no instructions/.test(m)) return 'dockerfile_empty_error';
  if (/isn't allowed as an ONBUILD trigger|ONBUILD ONBUILD|is not available in this build/.test(m)) return 'command_not_supported_error';
  if (/dockerfile parse error|^invalid ONBUILD trigger|^onbuild trigger should be/.test(m)) return 'dockerfile_syntax_error';
  return 'error_processing_commands_error';
}
