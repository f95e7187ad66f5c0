// Wire types of the plugin APIs: the managed-plugin API (/plugins*: config, settings, list and
// inspect shape, privileges) and the authorization-plugin protocol.

/** A setting of a plugin's config: an env variable, args or a mount/device. */
export interface PluginEnvSpec {
  Name: string;
  Description?: string;
  Settable?: string[] | null;
  Value?: string | null;
}
export interface PluginMountSpec {
  Name?: string;
  Description?: string;
  Settable?: string[] | null;
  Source?: string | null;
  Destination: string;
  Type?: string;
  Options?: string[] | null;
}
export interface PluginDeviceSpec {
  Name?: string;
  Description?: string;
  Settable?: string[] | null;
  Path?: string | null;
}

/** The plugin config (`application/vnd.docker.plugin.v1+json`), as in the registry and in config.json. */
export interface PluginConfig {
  Description: string;
  Documentation: string;
  DockerVersion?: string;
  /** Interface types are written as strings, "docker.volumedriver/1.0", as dockerd marshals them. */
  Interface: { Types: string[]; Socket: string; ProtocolScheme?: string };
  Entrypoint: string[] | null;
  WorkDir: string;
  User: { UID?: number; GID?: number };
  Network: { Type: string };
  Linux: { Capabilities: string[] | null; AllowAllDevices: boolean; Devices: PluginDeviceSpec[] | null };
  PropagatedMount: string;
  IpcHost: boolean;
  PidHost: boolean;
  Mounts: PluginMountSpec[] | null;
  Env: PluginEnvSpec[] | null;
  Args: { Name: string; Description: string; Settable: string[] | null; Value: string[] | null };
  rootfs?: { type: string; diff_ids: string[] };
}

export interface PluginSettings {
  Mounts: PluginMountSpec[];
  Env: string[];
  Args: string[];
  Devices: PluginDeviceSpec[];
}

/** GET /plugins and /plugins/{name}/json. */
export interface PluginView {
  Id: string;
  Name: string;
  Enabled: boolean;
  Settings: PluginSettings;
  PluginReference: string;
  Config: PluginConfig;
}

/** GET /plugins/privileges and the body of POST /plugins/pull. */
export interface PluginPrivilege {
  Name: string;
  Description: string;
  Value: string[];
}

/** AuthZPlugin.AuthZReq: what a plugin sees of a request (bodies are base64, as Go marshals []byte). */
export interface AuthzRequest {
  User: string;
  UserAuthNMethod: string;
  RequestMethod: string;
  RequestUri: string;
  RequestBody: string | null;
  RequestHeaders: Record<string, string>;
  RequestPeerCertificates: string[] | null;
}

/** AuthZPlugin.AuthZRes: the request again, with the response. */
export interface AuthzResponse extends AuthzRequest {
  ResponseStatusCode: number;
  ResponseBody: string | null;
  ResponseHeaders: Record<string, string>;
}

/** A plugin's verdict on either. */
export interface AuthzVerdict {
  Allow?: boolean;
  Msg?: string;
  Err?: string;
}
