// Go's encoding/json writes a nil slice or a nil map as `null`, and dockerd's structs leave many of
// them nil (/info's Plugins.Authorization with no authorization plugin, a container's
// GraphDriver.Data, an endpoint's IPAMConfig). The API description rarely says so (only some fields
// carry `x-nullable: true`, which the generated types in api/ already turn into `| null`), so the
// daemon's views are typed as GoJson<the generated type>: the same shape with every list and every
// string-keyed map also allowed to be null, at every depth. Structs (objects with named fields)
// stay as they are: a nil Go pointer is what `x-nullable` describes.

/** `T` as Go's encoding/json may write it: lists and maps may be `null`. */
export type GoJson<T> = T extends readonly (infer E)[]
  ? GoJson<E>[] | null
  : T extends object
    ? string extends keyof T
      ? { [K in keyof T]: GoJson<T[K]> } | null
      : { [K in keyof T]: GoJson<T[K]> }
    : T;
