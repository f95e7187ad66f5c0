// An exec instance's record made from its create request (checked as dockerd checks it) and its
// inspect view (GET /exec/{id}/json, the API's inline ExecInspectResponse).
import { randomBytes } from 'node:crypto';
import type { ExecCreateBody, ExecInspectResponse } from '../../types/exec.ts';
import { invalidParameter } from '../../errors.ts';
import type { ContainerRecord } from '../containers/record.ts';
import type { ExecRecord } from './registry.ts';
import { parseDetachKeys } from './detach-keys.ts';
import { execEnv } from './process-spec.ts';

/** GET /exec/{id}/json: the wire type, with the two fields dockerd always writes required. */
export type ExecInspectView = ExecInspectResponse & Required<Pick<ExecInspectResponse, 'CanRemove' | 'DetachKeys'>>;

/** The record of a new exec in container `c` (running, checked by the caller). */
export function newExecRecord(c: ContainerRecord, body: ExecCreateBody): ExecRecord {
  const cmd = typeof body.Cmd === 'string' ? [body.Cmd] : (body.Cmd ?? []);
  if (!Array.isArray(cmd) || cmd.some((a) => typeof a !== 'string')) throw invalidParameter('Cmd must be a list of strings');
  if (cmd.length === 0) throw invalidParameter('No exec command specified');
  if (body.Env != null && !Array.isArray(body.Env)) throw invalidParameter('Env must be a list of strings');
  for (const e of body.Env ?? [])
    if (typeof e !== 'string' || e.startsWith('=') || e === '')
      throw invalidParameter(`invalid environment variable: ${JSON.stringify(e)}`);
  const tty = body.Tty === true;
  const size = body.ConsoleSize;
  let started!: () => void;
  return {
    id: randomBytes(32).toString('hex'),
    containerId: c.Id,
    entrypoint: cmd[0]!,
    args: cmd.slice(1),
    env: execEnv(c.Config, tty, body.Env ?? []),
    tty,
    privileged: body.Privileged === true,
    user: body.User || c.Config.User || '',
    workingDir: body.WorkingDir || c.Config.WorkingDir || '',
    openStdin: body.AttachStdin === true,
    openStdout: body.AttachStdout === true,
    openStderr: body.AttachStderr === true,
    detachKeys: body.DetachKeys ? parseDetachKeys(body.DetachKeys) : Buffer.alloc(0),
    ...(size && size.length === 2 && size[0]! > 0 && size[1]! > 0 ? { consoleSize: { height: size[0]!, width: size[1]! } } : {}),
    state: 'created',
    exitCode: null,
    pid: 0,
    finishedAt: 0,
    started: new Promise<void>((r) => (started = r)),
    markStarted: () => started(),
  };
}

export function inspectView(rec: ExecRecord): ExecInspectView {
  return {
    ID: rec.id,
    Running: rec.state === 'running' || rec.state === 'starting',
    ExitCode: rec.exitCode,
    ProcessConfig: {
      tty: rec.tty,
      entrypoint: rec.entrypoint,
      arguments: rec.args,
      privileged: rec.privileged,
      ...(rec.user ? { user: rec.user } : {}),
    },
    OpenStdin: rec.openStdin,
    OpenStderr: rec.openStderr,
    OpenStdout: rec.openStdout,
    CanRemove: false,
    ContainerID: rec.containerId,
    DetachKeys: rec.detachKeys.toString('base64'),
    Pid: rec.pid,
  };
}

/** The command as events name it ("exec_create: <cmd>"). */
export function commandLine(rec: ExecRecord): string {
  return [rec.entrypoint, ...rec.args].join(' ');
}
