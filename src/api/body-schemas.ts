// The JSON bodies of the endpoints other than container create/update, described with the Go
// types dockerd decodes them into (api/types in the Engine API), so a wrong JSON type is a 400
// naming the field — "json: cannot unmarshal number into Go struct field ExecOptions.Tty of type
// bool" — and only known, well-typed fields reach a service. Container bodies are in
// oci/wire-schema.ts; the decoder (case-insensitive names, nulls dropped) is shared.
import { CONTAINER_CONFIG, HOST_CONFIG, NETWORKING_CONFIG, UPDATE_CONFIG, decodeStruct, type Kind } from '../oci/wire-schema.ts';
import type { ContainerCreateBody } from '../types/container-api.ts';

const str: Kind = 'string';
const bool: Kind = 'bool';
const strings: Kind = { array: 'string', goType: '[]string' };
const stringMap: Kind = { map: 'string', goType: 'map[string]string' };
const consoleSize: Kind = { array: 'uint64', goType: '[2]uint' };
const struct = (goType: string, fields: Record<string, Kind>): Kind => ({ struct: fields, goType });

/** POST /containers/{id}/exec: container.ExecOptions. */
export const EXEC_OPTIONS: Record<string, Kind> = {
  User: str,
  Privileged: bool,
  Tty: bool,
  ConsoleSize: consoleSize,
  AttachStdin: bool,
  AttachStderr: bool,
  AttachStdout: bool,
  Detach: bool,
  DetachKeys: str,
  Env: strings,
  WorkingDir: str,
  Cmd: strings,
};

/** POST /exec/{id}/start: container.ExecStartOptions. */
export const EXEC_START_OPTIONS: Record<string, Kind> = { Detach: bool, Tty: bool, ConsoleSize: consoleSize };

const ipam = struct('network.IPAM', {
  Driver: str,
  Options: stringMap,
  Config: {
    array: struct('network.IPAMConfig', { Subnet: str, IPRange: str, Gateway: str, AuxiliaryAddresses: stringMap }),
    goType: '[]network.IPAMConfig',
  },
});

/** POST /networks/create: network.CreateRequest. */
export const NETWORK_CREATE: Record<string, Kind> = {
  Name: str,
  CheckDuplicate: bool,
  Driver: str,
  Scope: str,
  EnableIPv4: bool,
  EnableIPv6: bool,
  IPAM: ipam,
  Internal: bool,
  Attachable: bool,
  Ingress: bool,
  ConfigOnly: bool,
  ConfigFrom: struct('network.ConfigReference', { Network: str }),
  Options: stringMap,
  Labels: stringMap,
};

const endpointSettings = (NETWORKING_CONFIG.EndpointsConfig as { map: Kind }).map;

/** POST /networks/{id}/connect: network.ConnectOptions. */
export const NETWORK_CONNECT: Record<string, Kind> = { Container: str, EndpointConfig: endpointSettings };

/** POST /networks/{id}/disconnect: network.DisconnectOptions. */
export const NETWORK_DISCONNECT: Record<string, Kind> = { Container: str, Force: bool };

/** POST /auth and the old push body: registry.AuthConfig (its JSON names are lower case). */
export const AUTH_CONFIG: Record<string, Kind> = {
  username: str,
  password: str,
  auth: str,
  email: str,
  serveraddress: str,
  identitytoken: str,
  registrytoken: str,
};

/** POST /containers/{id}/update: container.UpdateConfig. */
export const CONTAINER_UPDATE: Record<string, Kind> = UPDATE_CONFIG;

/** POST /commit: container.Config. */
export const COMMIT_CONFIG: Record<string, Kind> = CONTAINER_CONFIG;

/** Decodes a request body (already parsed JSON) against one of the tables above; throws a 400. */
export function decodeBody<T = Record<string, unknown>>(value: unknown, fields: Record<string, Kind>, goType: string): T {
  return decodeStruct(value, fields, goType) as T;
}

/**
 * POST /containers/create: container.CreateRequest (Config's fields at the top, HostConfig,
 * NetworkingConfig), decoded with canonical names so the version adaptation of the route sees the
 * fields whatever case the client used. The service decodes it again (idempotent) and validates it;
 * the prefixes of the messages are the ones it uses.
 */
export function decodeContainerCreate(value: unknown): ContainerCreateBody {
  const out = decodeStruct(value, CONTAINER_CONFIG, 'ContainerConfig') as ContainerCreateBody;
  // HostConfig and NetworkingConfig, in any case; a repeated one merges into the earlier (as Go).
  const parts = decodeStruct(value, CREATE_PARTS, '') as Pick<ContainerCreateBody, 'HostConfig' | 'NetworkingConfig'>;
  if (parts.HostConfig) out.HostConfig = parts.HostConfig;
  if (parts.NetworkingConfig) out.NetworkingConfig = parts.NetworkingConfig;
  return out;
}

/** The two parts of container.CreateRequest beside the embedded Config; messages name them alone. */
const CREATE_PARTS: Record<string, Kind> = {
  HostConfig: { struct: HOST_CONFIG, goType: 'container.HostConfig' },
  NetworkingConfig: { struct: NETWORKING_CONFIG, goType: 'network.NetworkingConfig' },
};
