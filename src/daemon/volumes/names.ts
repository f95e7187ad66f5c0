// Volume names as dockerd's local driver accepts them: they become a directory under
// <data-root>/volumes, so only a restricted character set passes (no "/", no "..", no leading dot).
import { randomBytes } from 'node:crypto';
import { invalidParameter } from '../../errors.ts';

const VALID_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]+$/;

/** dockerd marks volumes nobody named with this label; prune without all=true removes only those. */
export const ANONYMOUS_LABEL = 'com.docker.volume.anonymous';

const NAME_MAX = 255;

export function validateVolumeName(name: string): void {
  // The name is a directory name under the volumes root: longer than NAME_MAX it cannot be made.
  if (Buffer.byteLength(name) > NAME_MAX) {
    throw invalidParameter(`create ${name.slice(0, 64)}…: volume name is too long (${Buffer.byteLength(name)} bytes, at most ${NAME_MAX})`);
  }
  if (!VALID_NAME.test(name)) {
    throw invalidParameter(
      `create ${name}: "${name}" includes invalid characters for a local volume name, only "[a-zA-Z0-9][a-zA-Z0-9_.-]" are allowed. If you intended to pass a host directory, use absolute path`,
    );
  }
}

/** A random 64-hex name, as for volumes created without one. */
export function generateVolumeName(): string {
  return randomBytes(32).toString('hex');
}
