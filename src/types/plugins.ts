// Wire types of the managed-plugin API (/plugins*): the list and inspect shape.

export interface PluginView {
  Id: string;
  Name: string;
  Enabled: boolean;
  Settings: { Mounts: unknown[]; Env: string[]; Args: string[]; Devices: unknown[] };
  PluginReference: string;
  Config: Record<string, unknown>;
}
