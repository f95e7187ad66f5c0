// The agents' sync with a manager: a node's task state reports written (states only move forward;
// one transaction when the cached versions hold), its endpoint address kept for log requests, and
// its tasks answered — all of them or those changed since a revision, with the secrets and configs
// its live tasks use — held as a long poll while nothing changed.
import { createHash } from 'node:crypto';
import type { ClusterCache } from '../store/cluster-cache.ts';
import type { ClusterStore, Stored } from '../store/store.ts';
import { inParallel } from './in-parallel.ts';
import type { FileObjectHooks, TaskPayloads } from './secrets-api.ts';
import { isTerminal, stateRank, taskKey, type TaskRecord, type TaskStatus } from './tasks.ts';

/** A state change a node's agent reports for one of its tasks. */
export interface TaskReport {
  id: string;
  status: TaskStatus;
}

/**
 * What a node's agent sends: its reports, the digest of the tasks it last got (to wait for a
 * change) and the revision of that answer (to get only what changed since).
 */
export interface AgentSyncRequest {
  reports: TaskReport[];
  known?: string;
  /** host:port of the node's endpoint, where managers ask for its tasks' logs (log-forward.ts). */
  logAddr?: string;
  since?: number;
}

/** Where a node's endpoint is (`agents/<node id>`), written when its agent first syncs with a manager. */
export const agentKey = (nodeId: string) => `agents/${nodeId}`;

/**
 * What a node's agent gets back: its tasks and their digest. With `ids` (an answer to `since`),
 * `tasks` are only those changed since and `ids` all the node's tasks (the others are gone);
 * without, `tasks` are all of them. `rev`: what to send as `since` next time.
 */
export interface SyncAnswer {
  tasks: TaskRecord[];
  digest: string;
  ids?: string[];
  rev?: number;
  /** The data of exactly the secrets and configs the node's live tasks use. */
  payloads?: TaskPayloads;
}

/** Longest an agent's sync waits for a change of its tasks before answering the same (a worker's call times out at 10 s). */
export const SYNC_WAIT_MS = 5000;

/** Reports of one sync written at once (etcd batches concurrent proposals). */
const REPORT_WIDTH = 16;

export class AgentSync {
  /** Log addresses already written to the store, by node. */
  private readonly logAddrs = new Map<string, string>();

  constructor(
    private readonly store: ClusterStore,
    /** The watch-fed copy (cluster-cache.ts); while not ready, the store is read. */
    private readonly cache: ClusterCache,
    /** Every task record, from the store. */
    private readonly tasks: () => Promise<Stored<TaskRecord>[]>,
    private readonly files?: FileObjectHooks,
  ) {}

  /** A node's agent: applies its reports (states only move forward), answers its tasks. */
  async sync(
    nodeId: string,
    reports: TaskReport[],
    known?: string,
    waitMs = SYNC_WAIT_MS,
    opts: { since?: number; logAddr?: string } = {},
  ): Promise<SyncAnswer> {
    const { since, logAddr } = opts;
    if (logAddr && this.logAddrs.get(nodeId) !== logAddr) {
      await this.store.put(agentKey(nodeId), { addr: logAddr });
      this.logAddrs.set(nodeId, logAddr);
    }
    const written = await this.write(nodeId, reports);
    const cache = this.cache.ready ? this.cache : undefined;
    // The answer reflects the reports just written (the watch has applied them).
    if (cache && written) await cache.waitFor('tasks', written, 2000);
    const answer = async (): Promise<SyncAnswer> => {
      const rev = cache?.tasks.rev;
      const tasks = cache ? cache.tasksOf(nodeId) : (await this.tasks()).filter((t) => t.value.NodeID === nodeId);
      const digest = tasksDigest(tasks);
      const mine = tasks.map((t) => t.value);
      // Only tasks the node is to run need their files (secrets stay off nodes that merely held them).
      const live = mine.filter((t) => t.DesiredState === 'running' && !isTerminal(t.Status.State));
      const payloads = this.files ? await this.files.payloads(live) : undefined;
      const delta = cache && since !== undefined && since <= rev!;
      return {
        tasks: delta ? tasks.filter((t) => t.version > since).map((t) => t.value) : mine,
        digest,
        ...(delta ? { ids: mine.map((t) => t.ID) } : {}),
        ...(rev !== undefined ? { rev } : {}),
        ...(payloads ? { payloads } : {}),
      };
    };
    const first = await answer();
    // Nothing new for the agent: hold the answer until its node's tasks change (a long poll). The
    // wait is registered before the tasks are looked at again: a change the watch applied while
    // the first answer was made (its payloads are awaited) ends it at once, not after the wait.
    if (!reports.length && known !== undefined && first.digest === known && cache) {
      const changed = cache.nodeChange(nodeId, Math.min(waitMs, SYNC_WAIT_MS));
      if (tasksDigest(cache.tasksOf(nodeId)) === known) await changed;
      return answer();
    }
    return first;
  }

  /** Writes a sync's reports; returns the highest revision written (0: none). */
  private async write(nodeId: string, reports: TaskReport[]): Promise<number> {
    let written = 0;
    // All of a sync's reports in one transaction when the cached versions hold; else one by one.
    let rest = reports;
    if (this.cache.ready && reports.length > 1) {
      const now = new Date().toISOString();
      const writes = reports.flatMap((r) => {
        const cur = this.cache.task(r.id);
        return cur && newsFor(nodeId, cur.value, r)
          ? [{ key: taskKey(r.id), value: { ...cur.value, Status: r.status, UpdatedAt: now }, version: cur.version }]
          : [];
      });
      try {
        for (let i = 0; i < writes.length; i += 100) written = Math.max(written, await this.store.batch(writes.slice(i, i + 100)));
        rest = [];
      } catch (err) {
        if ((err as { code?: string }).code !== 'CONFLICT') throw err;
      }
    }
    await inParallel(rest, REPORT_WIDTH, async (r) => {
      written = Math.max(written, await this.report(nodeId, r));
    });
    return written;
  }

  /**
   * Writes one report (compare-and-swap on the version known); returns the revision written, or 0.
   * With the cache, one attempt: a report that lost a race is dropped, and the agent, which derives
   * its reports from its containers and the tasks it is sent, sends it again if still news.
   */
  private async report(nodeId: string, r: TaskReport): Promise<number> {
    let cur: Stored<TaskRecord> | null | undefined = this.cache.ready ? this.cache.task(r.id) : undefined;
    for (let attempt = 0; attempt < (cur ? 1 : 3); attempt++) {
      cur ??= await this.store.get<TaskRecord>(taskKey(r.id));
      if (!cur || !newsFor(nodeId, cur.value, r)) return 0;
      try {
        return await this.store.update(taskKey(r.id), { ...cur.value, Status: r.status, UpdatedAt: new Date().toISOString() }, cur.version);
      } catch (err) {
        if ((err as { code?: string }).code !== 'CONFLICT') throw err;
        cur = undefined; // changed meanwhile (or the copy was behind): read it from the store
      }
    }
    return 0;
  }
}

/** What an agent sends back as `known`: its node's tasks at their versions. */
function tasksDigest(tasks: Array<Stored<TaskRecord>>): string {
  return createHash('sha1')
    .update(
      tasks
        .map((t) => `${t.value.ID}:${t.version}`)
        .sort()
        .join(','),
    )
    .digest('hex');
}

/** Whether a report changes the task: the node's own, and its state moves forward (or its container). */
function newsFor(nodeId: string, t: TaskRecord, r: TaskReport): boolean {
  if (t.NodeID !== nodeId) return false;
  const [to, from] = [stateRank(r.status.State), stateRank(t.Status.State)];
  return to > from || (to === from && JSON.stringify(r.status.ContainerStatus) !== JSON.stringify(t.Status.ContainerStatus));
}
