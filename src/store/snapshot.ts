// Immutable snapshots: what cached stores hand out. Freezing makes an accidental mutation of a cached
// record throw (ESM is strict mode) instead of silently diverging from what is on disk.

export type Snapshot<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends ReadonlyArray<infer E>
    ? ReadonlyArray<Snapshot<E>>
    : T extends object
      ? { readonly [K in keyof T]: Snapshot<T[K]> }
      : T;

export function deepFreeze<T>(value: T): Snapshot<T> {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value as Snapshot<T>;
}

/** The mutable type a snapshot was made from (for plain JSON-like data). */
export type Thawed<S> = S extends (...args: never[]) => unknown
  ? S
  : S extends ReadonlyArray<infer E>
    ? Array<Thawed<E>>
    : S extends object
      ? { -readonly [K in keyof S]: Thawed<S[K]> }
      : S;

/** A mutable deep copy of a snapshot, to edit and put back. */
export function thaw<S>(snapshot: S): Thawed<S> {
  return structuredClone(snapshot) as Thawed<S>;
}
