// Which containers reference which volumes, read from the container store: the volume service's
// "in use" query (rm, prune, df's RefCount, DriverOpts unmounts). Every change to a record is
// written to the store before the containers service makes it visible, so the store shows what the
// service shows; reading it lets the volume service be built before the containers service, which
// needs volumes at create and start.

interface VolumeReferrer {
  readonly Id: string;
  readonly State: { readonly Running: boolean; readonly Restarting: boolean };
  readonly Mounts: ReadonlyArray<{ readonly Type: string; readonly Name?: string | undefined }>;
}

/** A container and the volumes its record references (running: running or restarting). */
export function volumeUsers(records: Iterable<VolumeReferrer>): Array<{ id: string; running: boolean; volumes: string[] }> {
  return [...records].map((r) => ({
    id: r.Id,
    running: r.State.Running || r.State.Restarting,
    volumes: r.Mounts.filter((m) => m.Type === 'volume' && m.Name).map((m) => m.Name!),
  }));
}
