// Starts the runtime of a node's saved state: a manager's etcd member, store and endpoint (with the
// checks its heartbeat calls back into), or a worker's heartbeats; the control-plane MTU before the
// first control connection; and the calls to other managers a role change needs.
import type { Logger } from '../../util/log.ts';
import type { EventPublisher } from '../../events/bus.ts';
import type { GenericResource } from '../../config/generic-resources.ts';
import { identityOf } from '../ca/ca.ts';
import { Manager, type ManagerEnv } from '../manager/manager.ts';
import { DEFAULT_LISTEN_PORT, parseAddr } from '../node/addresses.ts';
import { controlPorts, type ControlMtu } from '../node/control-mtu.ts';
import type { HeartbeatResponse } from '../node/endpoint.ts';
import type { LocalClusterState, LocalStateFiles, NodeCerts, RemoteManager } from '../node/local-state.ts';
import { askRole, askToPromote, describeNode, holdUnlockKey } from '../node/node-helpers.ts';
import type { NodeRuntime } from '../node-runtime.ts';
import type { NodePhase } from './node-phase.ts';

/** What a node says of itself in its record (node-helpers.ts describeNode). */
export interface NodeFacts {
  engineVersion: string;
  engineLabels: () => string[];
  genericResources?: () => GenericResource[];
}

export interface RoleRunnerDeps {
  node: NodeRuntime;
  files: LocalStateFiles;
  phase: NodePhase;
  controlMtu: ControlMtu;
  facts: NodeFacts;
  events?: EventPublisher;
  /** The daemon's logger (a manager makes its own child) and the cluster module's. */
  rootLog: Logger;
  log: Logger;
  /** A manager's heartbeat found its record says worker, or its store does not answer (role-change.ts). */
  roleCheck: () => void;
  /** A manager's heartbeat found another autolock KEK in the cluster record (role-change.ts). */
  keyCheck: (kekId: string | null) => void;
}

export class RoleRunner {
  constructor(private readonly d: RoleRunnerDeps) {}

  /** --network-control-plane-mtu on this node's control ports and those of the managers it knows. */
  async applyControlMtu(st: LocalClusterState): Promise<void> {
    const adv = parseAddr(st.advertiseAddr, 0, 'advertise address');
    const ports = [adv.port, ...st.managers.map((m) => parseAddr(m.Addr, DEFAULT_LISTEN_PORT, 'manager address').port)];
    await this.d.controlMtu.apply(st.nodeId, adv.host, ports.flatMap(controlPorts));
  }

  /** Starts the runtime of a saved state: a manager's etcd and endpoint, or a worker's heartbeat. */
  async run(state: LocalClusterState, promote?: () => Promise<void>): Promise<void> {
    const { node, files } = this.d;
    const certs = files.readCerts();
    if (identityOf(certs.certPem).nodeId !== state.nodeId) throw new Error('the node certificate does not match the saved node ID');
    // A role change runs this again: a worker's endpoint would hold the listen address a manager needs.
    node.stopNodeEndpoint();
    await this.applyControlMtu(state); // before the first control connection (the MSS is set at SYN)
    if (state.role === 'manager') {
      files.resetEtcdTrust();
      const m = await this.startManager(state, certs, promote ? { promote } : { restart: true });
      try {
        await m.serve();
      } catch (err) {
        await m.stop();
        throw err;
      }
      await node.attachManager(m, certs);
    } else {
      await node.startWorker(state, certs);
    }
    this.d.phase.activate();
  }

  /** A manager's runtime on this node (not serving yet). */
  startManager(state: LocalClusterState, certs: NodeCerts, opts?: Parameters<typeof Manager.start>[3]): Promise<Manager> {
    return Manager.start(this.managerEnv(certs.caPem), state, certs, opts);
  }

  /** This node's Description in its record. */
  describe(caPem: string) {
    return describeNode(this.d.facts, caPem);
  }

  private managerEnv(caPem: string): ManagerEnv {
    const { node, files, log } = this.d;
    return {
      log: this.d.rootLog,
      files,
      describe: () => this.describe(caPem),
      overlay: node.serveOverlay,
      events: this.d.events,
      logs: node.serveLogs,
      roleCheck: this.d.roleCheck,
      caCheck: (ca) => node.tls.check(ca),
      tlsInfo: () => node.renewalInfo(),
      keyCheck: this.d.keyCheck,
      holdKey: async (kekId, managers) => void (await holdUnlockKey(files, managers, kekId, log)),
    };
  }

  /** A joining or promoted manager asks one of `managers` to make its etcd learner a voter. */
  promoter(managers: RemoteManager[], certs: NodeCerts): () => Promise<void> {
    return () => askToPromote(managers, certs, this.d.log);
  }

  /** Another manager's heartbeat answer for this node (its role as the store has it), or null. */
  askRole(state: LocalClusterState, managers: RemoteManager[]): Promise<HeartbeatResponse | null> {
    return askRole(state, managers, this.d.files.readCerts(), this.d.log);
  }
}
