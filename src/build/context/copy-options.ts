// What a COPY/ADD write is asked to do and what it counts: shared by the copy (copy.ts) and its
// direct write into an overlay upper directory (copy-direct.ts).

export interface Owner {
  uid: number;
  gid: number;
}

export interface CopyOptions {
  /** Owner of everything written; undefined keeps the sources' owners (COPY --from without --chown). */
  owner?: Owner;
  /** `--chmod`: the mode of every file and directory written. */
  mode?: number;
  /** ADD: local tar archives (plain, gzip, bzip2, xz, zstd) are extracted into the destination. */
  decompress?: boolean;
  /**
   * The root is an overlay mount whose upper directory may be written directly once it is
   * unmounted: a single directory source then leaves the names the image does not have for
   * CopyResult.afterUnmount (copy-direct.ts: files hard-linked, not copied).
   */
  direct?: boolean;
}

export interface CopyStats {
  files: number;
  dirs: number;
  symlinks: number;
  bytes: number;
  /** Sockets, FIFOs and device nodes of the source, not copied. */
  skipped: number;
}
