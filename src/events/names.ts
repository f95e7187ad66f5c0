// Image names as dockerd writes them into event attributes (the short "familiar" form).
import { familiarName, familiarString, parseReference } from '../util/image-reference.ts';

/** busybox:latest for docker.io/library/busybox:latest; the input when it is not a reference. */
export function familiarReference(ref: string): string {
  try {
    return familiarString(parseReference(ref, { defaultTag: false }));
  } catch {
    return ref;
  }
}

/** The repository alone (busybox for busybox:1.36); undefined when `ref` is not a reference. */
export function familiarRepository(ref: string): string | undefined {
  try {
    return familiarName(parseReference(ref, { defaultTag: false }));
  } catch {
    return undefined;
  }
}
