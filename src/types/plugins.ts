// Wire types of the managed-plugin API (/plugins*): the list and inspect shape.

export interface PluginView {
  Id: string;
  Name: string;
  Enabled: boolean;
  Settings: { Mounts: unknown[]; Env: string[]; Args: string[]; Devices: unknown[] };
  PluginReference: string;
  Config: Record<string, unknown>;
}

/** AuthZPlugin.AuthZReq: what a plugin sees of a request (bodies are base64, as Go marshals []byte). */
export interface AuthzRequest {
  User: string;
  UserAuthNMethod: string;
  RequestMethod: string;
  RequestURI: string;
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
