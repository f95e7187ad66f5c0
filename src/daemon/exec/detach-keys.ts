// Detach keys as the daemon reads them from a request: the notation is wire/detach-keys.ts's; a key
// it does not have is the client's mistake (400).
import { invalidParameter } from '../../errors.ts';
import { DetachKeysError, parseDetachKeys as parse } from '../../wire/detach-keys.ts';

export { DEFAULT_DETACH_KEYS, EscapeMatcher } from '../../wire/detach-keys.ts';

export function parseDetachKeys(spec: string): Buffer {
  try {
    return parse(spec);
  } catch (err) {
    throw err instanceof DetachKeysError ? invalidParameter(err.message) : err;
  }
}
