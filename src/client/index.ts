// The engine SDK: a typed client of the Docker Engine API as served by engined (and dockerd).
//   const c = new EngineClient();                    // ENGINE_HOST, ENGINE_TLS_VERIFY, ENGINE_CERT_PATH, ENGINE_API_VERSION
//   for await (const m of c.images.pull('busybox:latest')) console.log(m.status);
//   const { Id } = await c.containers.create({ Image: 'busybox', Cmd: ['true'] });
// It imports only src/types/, the client-safe parts of src/util/ and node built-ins (layout rule).
export { EngineClient, type ClientOptions, type PingResult, type DiskUsage } from './client.ts';
export { EngineError, ConnectionError } from './errors.ts';
export {
  parseHost,
  settingsFromEnv,
  defaultConfigDir,
  DEFAULT_SOCKET,
  type HostTarget,
  type ConnectionSettings,
  type TlsSettings,
  type SettingsInput,
} from './host.ts';
export { HttpTransport, encodeQuery, type RequestOptions, type Query } from './http.ts';
export {
  ContainersApi,
  ExecApi,
  type Filters,
  type LogsOptions,
  type AttachStreamOptions,
  type Hijacked,
  type HijackedConn,
} from './containers.ts';
export type { HijackStream } from './bun-hijack.ts';
export { ImagesApi, encodeAuth, progress, type BuildOptions } from './images.ts';
export { NetworksApi, VolumesApi, PluginsApi, ClusterApi, type NetworkCreateOptions } from './resources.ts';
export { jsonLines, demux, rawFrames, encodeFrame, collect, type Frame, type StdStream } from './streams.ts';
export { sshArgs, dialStdioCommand } from './transport.ts';
export { SshStream } from './ssh-stream.ts';
export type * from '../types/api/index.ts';
export type { GoJson } from '../types/go-nil.ts';
