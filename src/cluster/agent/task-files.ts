// The files of a task's secrets and configs: what the agent writes into the task's tmpfs (one
// file per reference, with its uid/gid/mode) and the read-only bind mounts that put each at its
// target in the container (/run/secrets/<name> for secrets, the target path for configs); templated
// data expanded for the task. Pure.
import { join } from 'node:path';
import type { ClusterObject } from '../../types/cluster.ts';
import type { TaskPayloads } from '../manager/secrets-api.ts';
import { fileRefs, type FileKind } from '../manager/secret-spec.ts';
import type { TaskRecord } from '../manager/tasks.ts';
import { fileData, type NodeFacts } from './task-template.ts';

export interface TaskFile {
  /** The file's name in the task's directory. */
  file: string;
  target: string;
  uid: number;
  gid: number;
  mode: number;
  data: Buffer;
}

/**
 * The task's files; throws (the task is rejected) if a payload is missing or a templated one
 * cannot be expanded (task-template.ts).
 */
export function taskFiles(t: TaskRecord, payloads: TaskPayloads | undefined, node: NodeFacts): TaskFile[] {
  const out: TaskFile[] = [];
  for (const kind of ['secrets', 'configs'] as FileKind[]) {
    fileRefs(kind, t.Spec).forEach((r, i) => {
      const data = payloads?.[kind][r.id];
      if (data === undefined)
        throw new Error(`${kind === 'secrets' ? 'secret' : 'config'} ${r.name} not found: its data was not delivered`);
      const bytes = fileData(kind, r, Buffer.from(data, 'base64'), t, node, payloads!);
      out.push({ file: `${kind}-${i}-${r.id}`, target: r.target, uid: r.uid, gid: r.gid, mode: r.mode, data: bytes });
    });
  }
  return out;
}

/** HostConfig.Mounts for the files written in `dir`. */
export function fileMounts(dir: string, files: TaskFile[]): ClusterObject[] {
  return files.map((f) => ({ Type: 'bind', Source: join(dir, f.file), Target: f.target, ReadOnly: true }));
}
