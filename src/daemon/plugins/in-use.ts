// Whether a plugin is in use, as dockerd counts references: a volume of its driver, or a running
// container logging through it. Such a plugin cannot be disabled or removed.
export function pluginInUse(
  name: string,
  volumes: () => readonly { Driver?: string }[],
  containers: () => readonly {
    readonly State: { readonly Running: boolean };
    readonly HostConfig: { readonly LogConfig?: { readonly Type?: string } };
  }[],
): boolean {
  const named = (driver: string | undefined) => !!driver && (driver === name || `${driver}:latest` === name);
  return volumes().some((v) => named(v.Driver)) || containers().some((r) => r.State.Running && named(r.HostConfig.LogConfig?.Type));
}
