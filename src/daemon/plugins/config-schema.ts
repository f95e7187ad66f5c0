// A plugin's config.json as Go's encoding/json reads it into types.PluginConfig: keys match the
// fields in any case (plugin authors often write "interface", "entrypoint", "linux"…), unknown keys
// are dropped, and what is stored and shown uses the canonical names. Interface types stay as
// written (a string, or dockerd's object form): config.ts reads both.
import { decodeStruct, type Kind } from '../../oci/wire-schema.ts';

const str: Kind = 'string';
const bool: Kind = 'bool';
const uint32: Kind = 'uint32';
const strings: Kind = { array: 'string', goType: '[]string' };
const struct = (goType: string, fields: Record<string, Kind>): Kind => ({ struct: fields, goType });
const arrayOf = (item: Kind, goType: string): Kind => ({ array: item, goType });

const device = struct('types.PluginDevice', { Name: str, Description: str, Settable: strings, Path: str });

export const PLUGIN_CONFIG: Record<string, Kind> = {
  Args: struct('types.PluginConfigArgs', { Name: str, Description: str, Settable: strings, Value: strings }),
  Description: str,
  DockerVersion: str,
  Documentation: str,
  Entrypoint: strings,
  Env: arrayOf(struct('types.PluginEnv', { Name: str, Description: str, Settable: strings, Value: str }), '[]types.PluginEnv'),
  Interface: struct('types.PluginConfigInterface', {
    ProtocolScheme: str,
    Socket: str,
    Types: arrayOf('any', '[]types.PluginInterfaceType'),
  }),
  IpcHost: bool,
  Linux: struct('types.PluginConfigLinux', {
    AllowAllDevices: bool,
    Capabilities: strings,
    Devices: arrayOf(device, '[]types.PluginDevice'),
  }),
  Mounts: arrayOf(
    struct('types.PluginMount', {
      Name: str,
      Description: str,
      Settable: strings,
      Source: str,
      Destination: str,
      Type: str,
      Options: strings,
    }),
    '[]types.PluginMount',
  ),
  Network: struct('types.PluginConfigNetwork', { Type: str }),
  PidHost: bool,
  PropagatedMount: str,
  User: struct('types.PluginConfigUser', { GID: uint32, UID: uint32 }),
  WorkDir: str,
  rootfs: struct('types.PluginConfigRootfs', { diff_ids: strings, type: str }),
};

/** A parsed config.json (or config blob) with its keys in their canonical spelling. */
export function canonicalPluginConfig(raw: unknown): Record<string, unknown> {
  return decodeStruct(raw, PLUGIN_CONFIG, 'PluginConfig');
}
