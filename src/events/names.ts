// Image names as dockerd writes them into event attributes (the short "familiar" form).
import { familiarName, parseReference } from '../util/image-reference.ts';

/** The repository alone (busybox for busybox:1.36); undefined when `ref` is not a reference. */
export function familiarRepository(ref: string): string | undefined {
  try {
    return familiarName(parseReference(ref, { defaultTag: false }));
  } catch {
    // not a reference: no repository
    return undefined;
  }
}
