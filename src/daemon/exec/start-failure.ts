// How a failed exec start is reported, as dockerd does: the exit code it records
// (setExitCodeFromError) and the error the client gets (400 for a command that cannot run).
import { EngineError, invalidParameter } from '../../errors.ts';

const INVALID_COMMAND = ['executable file not found', 'no such file or directory', 'failed to run runc create/exec call'];

/**
 * dockerd's translation of a start failure (setExitCodeFromError), in its order: permission denied
 * or a directory → 126, a file mounted on a directory (or the reverse) or a missing command → 127;
 * anything else keeps dockerd's default for a failed start, 126.
 */
export function startFailureExitCode(err: unknown): number {
  const msg = ((err as Error)?.message ?? '').toLowerCase();
  if (msg.includes('permission denied') || msg.includes('is a directory')) return 126;
  if (msg.includes('not a directory')) return 127;
  if (INVALID_COMMAND.some((m) => msg.includes(m))) return 127;
  return 126;
}

/** A command that cannot run is the caller's mistake (400, as dockerd); other failures are 500. */
export function startError(err: unknown): Error {
  if (err instanceof EngineError && (err.code === 'NOT_FOUND' || err.code === 'CONFLICT' || err.code === 'INVALID_PARAMETER')) return err;
  const msg = (err as Error)?.message ?? String(err);
  const lower = msg.toLowerCase();
  // As dockerd: a directory is told as permission denied (the CLI looks for those words to exit 126).
  if (lower.includes('is a directory')) return invalidParameter(`${msg}: permission denied`, err);
  if (lower.includes('not a directory'))
    return invalidParameter(
      `${msg}: Are you trying to mount a directory onto a file (or vice-versa)? Check if the specified host path exists and is the expected type`,
      err,
    );
  if (lower.includes('permission denied') || INVALID_COMMAND.some((m) => lower.includes(m))) return invalidParameter(msg, err);
  return new EngineError('INTERNAL', msg, { cause: err });
}
