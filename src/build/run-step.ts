// RUN: the command runs in a real container made from the parent image (the containers service
// does networking, extra hosts, limits, ulimits and /dev/shm as for `docker run`), its output goes
// to the build stream, and the container's filesystem changes become the step's layer. The history
// text carries the build-args the command sees (`|2 A=1 B=2 /bin/sh -c make`), as dockerd's cache
// key does; proxy args reach the environment but not the history.
import { EngineError, invalidParameter } from '../errors.ts';
import type { RunInstruction } from './dockerfile/types.ts';
import type { BuildOptions } from '../types/build.ts';
import { commandOf, DEFAULT_SHELL } from './config-steps.ts';
import { short, type StageState, type StepContext, type StepPlan } from './step-context.ts';

/** A RUN command's stderr as dockerd streams it: each write in bright red (its stderr writer's escapes). */
export const stderrText = (data: Buffer): string => `\x1b[91m${data.toString('utf8')}\x1b[0m`;

/** A non-zero exit of a RUN command; code is the exit code (the stream's errorDetail.code). */
export class StepFailed extends EngineError {
  constructor(message: string, readonly exitCode: number) {
    super('INVALID_PARAMETER', message);
  }
}

/** The HostConfig fields the build options set on every RUN container. */
export function stepHostConfig(o: BuildOptions): Record<string, unknown> {
  const hc: Record<string, unknown> = { NetworkMode: o.networkMode || 'default', ExtraHosts: o.extraHosts, Ulimits: o.ulimits };
  if (o.memory) hc.Memory = o.memory;
  if (o.memorySwap) hc.MemorySwap = o.memorySwap;
  if (o.cpuShares) hc.CpuShares = o.cpuShares;
  if (o.cpusetCpus) hc.CpusetCpus = o.cpusetCpus;
  if (o.cpuPeriod) hc.CpuPeriod = o.cpuPeriod;
  if (o.cpuQuota) hc.CpuQuota = o.cpuQuota;
  if (o.shmSize) hc.ShmSize = o.shmSize;
  hc.LogConfig = { Type: 'none', Config: {} }; // output goes to the build stream only
  return hc;
}

export function runStep(b: StepContext, state: StageState, inst: RunInstruction): StepPlan {
  const shell = state.runtime.Shell?.length ? state.runtime.Shell : DEFAULT_SHELL;
  const cmd = commandOf(inst, shell);
  const env = state.runtime.Env ?? [];
  const historyArgs = state.args.historyArgs(env);
  const createdBy = (historyArgs.length ? [`|${historyArgs.length}`, ...historyArgs, ...cmd] : cmd).join(' ');
  return {
    createdBy,
    kind: 'regular',
    execute: async (lease) => {
      if (!state.image.id) throw invalidParameter('cannot RUN in an empty filesystem (FROM scratch without content)');
      const c = await b.d.containers.create({
        image: state.image.id, cmd, env: [...env, ...state.args.filterAllowed(env)], user: state.runtime.User ?? '',
        workingDir: state.runtime.WorkingDir ?? '', hostConfig: stepHostConfig(b.opts),
      });
      let removed = false;
      const remove = async () => {
        if (removed) return;
        removed = true;
        await b.d.containers.remove(c.id);
      };
      try {
        b.out(` ---> Running in ${short(c.id)}\n`);
        const code = await b.d.containers.run(c.id, (data, stream) => b.out(stream === 'stderr' ? stderrText(data) : data.toString('utf8')), b.signal);
        if (b.signal.aborted) throw b.signal.reason;
        if (code !== 0) throw new StepFailed(`The command '${cmd.join(' ')}' returned a non-zero code: ${code}`, code);
        const layer = await b.d.writer.containerLayer(c.snapshotKey, c.snapshotter, c.id, lease);
        if (b.opts.remove || b.opts.forceRemove) {
          b.out(`Removing intermediate container ${short(c.id)}\n`);
          await remove();
        }
        return layer;
      } finally {
        // A failed or cancelled step leaves nothing behind (rm=false keeps only successful steps' containers).
        if (!removed && (b.opts.remove || b.opts.forceRemove || b.signal.aborted)) {
          await remove().catch((err) => b.d.log.warn(`removing build container ${short(c.id)}: ${(err as Error).message}`));
        }
      }
    },
  };
}
