// A node coming back into its cluster: at daemon start from its saved state (a locked manager waits
// for `swarm unlock`; a manager demoted while it was down comes back as a worker), and a locked
// manager opened by its unlock key. The service runs each through the lifecycle queue.
import { conflict, unauthorized, unavailable } from '../../errors.ts';
import type { Logger } from '../../util/log.ts';
import { parseUnlockKey } from '../ca/autolock.ts';
import type { LocalClusterState, LocalStateFiles } from '../node/local-state.ts';
import type { NodeRuntime } from '../node-runtime.ts';
import { WORKER_NOT_MANAGER, type NodePhase } from './node-phase.ts';
import type { RoleChanges } from './role-change.ts';
import type { RoleRunner } from './role-runner.ts';

export interface RejoinDeps {
  node: NodeRuntime;
  files: LocalStateFiles;
  phase: NodePhase;
  runner: RoleRunner;
  roles: RoleChanges;
  log: Logger;
}

export class Rejoin {
  constructor(private readonly d: RejoinDeps) {}

  /** Brings a node that was in a cluster back into it (daemon start); never throws. */
  async restore(): Promise<void> {
    const { files, phase, log } = this.d;
    let state: LocalClusterState | null;
    try {
      state = files.read();
    } catch (err) {
      phase.fail(`cannot read the saved cluster state: ${(err as Error).message}`);
      return;
    }
    if (!state) return;
    if (state.role === 'manager' && files.keySealed()) {
      files.dropRunKey();
      phase.lockedState = state;
      phase.phase = 'locked';
      log.warn('the node is locked (autolock): it rejoins its cluster after `docker swarm unlock`');
      return;
    }
    phase.phase = 'pending';
    try {
      await this.d.runner.run(state);
      log.info('back in the cluster', { node: state.nodeId, role: state.role });
    } catch (err) {
      // A manager demoted while it was down: its etcd member is gone; another manager says so.
      const r = state.role === 'manager' ? await this.d.runner.askRole(state, state.managers).catch(() => null) : null; // no manager answers: the rejoin's own error is reported below
      if (r?.role === 'worker') return this.d.roles.becomeRole(state, r);
      phase.fail(`cannot rejoin the cluster: ${(err as Error).message}`);
    }
  }

  /** A locked manager (autolock) opens its node key with the unlock key and rejoins its cluster. */
  async unlock(keyText: string): Promise<void> {
    const { files, phase } = this.d;
    const state = phase.lockedState;
    if (phase.phase !== 'locked' || !state) {
      if (this.d.node.worker) throw unavailable(WORKER_NOT_MANAGER);
      throw conflict('swarm is not locked');
    }
    const key = parseUnlockKey(keyText);
    if (!files.opens(key)) throw unauthorized('swarm could not be unlocked: invalid key provided');
    files.setUnlockKey(key);
    phase.lockedState = null;
    phase.phase = 'pending';
    try {
      await this.d.runner.run(state);
    } catch (err) {
      phase.fail(`cannot rejoin the cluster: ${(err as Error).message}`);
      throw unavailable(`swarm component could not be started: ${(err as Error).message}`);
    }
    this.d.log.info('unlocked: back in the cluster', { node: state.nodeId });
  }
}
