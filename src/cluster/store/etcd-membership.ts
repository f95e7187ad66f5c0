// The etcd cluster's membership as the store client sees it: the member list, a new member added
// as a learner, a learner promoted to voter, a member removed (retried while etcd's strict
// reconfiguration check refuses), and which member leads.
import type { Etcd3 } from 'etcd3';
import { MEMBER_CALL_MS, storeDown } from './store-calls.ts';

export interface StoreMember {
  id: string;
  name: string;
  peerUrls: string[];
  clientUrls: string[];
}

/** etcd's refusal of a reconfiguration right after a member (re)joined, or the client's breaker. */
const UNHEALTHY_RE = /unhealthy cluster|circuit breaker is open/i;

export class EtcdMembership {
  constructor(private readonly client: Etcd3) {}

  async list(): Promise<StoreMember[]> {
    try {
      const r = await this.client.cluster.memberList({}, { deadline: Date.now() + MEMBER_CALL_MS });
      return r.members.map((m) => ({ id: String(m.ID), name: m.name, peerUrls: m.peerURLs, clientUrls: m.clientURLs }));
    } catch (err) {
      throw storeDown('member list', err);
    }
  }

  /**
   * Adds a member by its peer URL, as a learner (no vote, so a member that never starts costs the
   * cluster no quorum); returns the member list after the change (the new one unnamed).
   */
  async add(peerUrl: string): Promise<{ id: string; members: StoreMember[] }> {
    // As for remove: right after another member joined, etcd refuses ("unhealthy cluster")
    // until that one has been connected for a few seconds.
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        const r = await this.client.cluster.memberAdd({ peerURLs: [peerUrl], isLearner: true });
        return {
          id: String(r.member.ID),
          members: r.members.map((m) => ({ id: String(m.ID), name: m.name, peerUrls: m.peerURLs, clientUrls: m.clientURLs })),
        };
      } catch (err) {
        const unhealthy = UNHEALTHY_RE.test(err instanceof Error ? err.message : String(err));
        if (!unhealthy || Date.now() > deadline) throw storeDown(`adding member ${peerUrl}`, err);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** Makes a learner a voting member; etcd refuses until the learner has caught up. */
  async promote(id: string): Promise<void> {
    try {
      await this.client.cluster.memberPromote({ ID: id });
    } catch (err) {
      throw storeDown(`promoting member ${id}`, err);
    }
  }

  async remove(id: string): Promise<void> {
    // etcd refuses a reconfiguration ("unhealthy cluster") until every member has been connected for
    // a few seconds (its strict reconfig check), as happens right after a member restarts: retry (the
    // etcd3 client opens its circuit breaker after a few such failures; that passes as well).
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        await this.client.cluster.memberRemove({ ID: id }, { deadline: Date.now() + MEMBER_CALL_MS });
        return;
      } catch (err) {
        const unhealthy = UNHEALTHY_RE.test(err instanceof Error ? err.message : String(err));
        if (!unhealthy || Date.now() > deadline) throw storeDown(`removing member ${id}`, err);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** The ID of the etcd member that leads, and the member this client talks to. */
  async leader(): Promise<{ leader: string; member: string }> {
    try {
      const s = await this.client.maintenance.status({});
      return { leader: String(s.leader), member: String(s.header.member_id) };
    } catch (err) {
      throw storeDown('status', err);
    }
  }
}
