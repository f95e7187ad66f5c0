// The containerd API messages we use, as they come off the wire with our decode options
// (snake_case keys, int64 as decimal strings, enums as their names, unset messages as null).
// Requests accept numbers where the wire has int64.

import type { AnyMessage, Timestamp } from './protos.ts';

export type { AnyMessage, Timestamp };
export type Int64 = string | number;

export interface Mount {
  type: string;
  source: string;
  target?: string;
  options: string[];
}

export interface Descriptor {
  media_type: string;
  digest: string;
  size: Int64;
  annotations?: Record<string, string>;
}

export interface Namespace {
  name: string;
  labels: Record<string, string>;
}

export interface Lease {
  id: string;
  created_at: Timestamp | null;
  labels: Record<string, string>;
}

export interface ContentInfo {
  digest: string;
  size: Int64;
  created_at?: Timestamp | null;
  updated_at?: Timestamp | null;
  labels: Record<string, string>;
}

export interface IngestStatus {
  ref: string;
  offset: Int64;
  total: Int64;
  expected: string;
  started_at: Timestamp | null;
  updated_at: Timestamp | null;
}

export type SnapshotKind = 'UNKNOWN' | 'VIEW' | 'ACTIVE' | 'COMMITTED';

export interface SnapshotInfo {
  name: string;
  parent: string;
  kind: SnapshotKind;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  labels: Record<string, string>;
}

export interface ContainerRuntime {
  name: string;
  options?: AnyMessage | null;
}

export interface ContainerRecord {
  id: string;
  labels: Record<string, string>;
  image: string;
  runtime: ContainerRuntime | null;
  spec: AnyMessage | null;
  snapshotter: string;
  snapshot_key: string;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  extensions: Record<string, AnyMessage>;
}

/** What Containers.Create takes: id, runtime and spec are required by containerd. */
export interface NewContainer {
  id: string;
  runtime: ContainerRuntime;
  spec: AnyMessage;
  labels?: Record<string, string>;
  image?: string;
  snapshotter?: string;
  snapshot_key?: string;
  extensions?: Record<string, AnyMessage>;
}

export type TaskStatus = 'UNKNOWN' | 'CREATED' | 'RUNNING' | 'STOPPED' | 'PAUSED' | 'PAUSING';

/** Tasks.Get fills container_id and id (= exec id, or the container id); Tasks.List only id. */
export interface TaskProcess {
  container_id: string;
  id: string;
  pid: number;
  status: TaskStatus;
  stdin: string;
  stdout: string;
  stderr: string;
  terminal: boolean;
  exit_status: number;
  exited_at: Timestamp | null;
}

export interface CreateTaskRequest {
  container_id: string;
  rootfs?: Mount[];
  stdin?: string;
  stdout?: string;
  stderr?: string;
  terminal?: boolean;
  options?: AnyMessage;
  runtime_path?: string;
}

export interface ExecProcessRequest {
  container_id: string;
  exec_id: string;
  /** The OCI Process, sent as JSON (types.containerd.io/opencontainers/runtime-spec/1/Process). */
  spec: AnyMessage;
  stdin?: string;
  stdout?: string;
  stderr?: string;
  terminal?: boolean;
}

export interface ExitResult {
  exit_status: number;
  exited_at: Timestamp | null;
}

export interface DeleteTaskResult extends ExitResult {
  id: string;
  pid: number;
}

export interface TaskMetric {
  id: string;
  timestamp: Timestamp | null;
  /** The raw Any (type_url io.containerd.cgroups.v1.Metrics on this host). */
  raw: AnyMessage | null;
  /** The decoded payload, or null when the cgroups protos are not available. */
  data: Record<string, any> | null;
}

export interface PidInfo {
  pid: number;
  info: AnyMessage | null;
}

export interface ImageRecord {
  name: string;
  labels: Record<string, string>;
  target: Descriptor;
  created_at?: Timestamp | null;
  updated_at?: Timestamp | null;
}

export interface Plugin {
  type: string;
  id: string;
  requires: string[];
  platforms: { os: string; architecture: string; variant: string }[];
  exports: Record<string, string>;
  capabilities: string[];
  init_err: { code: number; message: string } | null;
}

/** An event from Events.Subscribe with its payload decoded. */
export interface SupervisorEvent {
  topic: string;
  namespace: string;
  timestamp: Date | null;
  /** The payload's type, e.g. containerd.events.TaskExit. */
  type: string;
  /** The decoded payload (snake_case keys), or null for a type we have no proto for. */
  event: Record<string, any> | null;
}
