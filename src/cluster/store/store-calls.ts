// What every call of the store client shares: the key prefix, the deadlines, and etcd's and grpc's
// failures mapped to the API's answers (503 with swarmkit's no-leader words, or with what failed).
import { EngineError, unavailable } from '../../errors.ts';

export const PREFIX = '/engine/';

/** How long one store call may take: a member cut off from its peers must not hang a request. */
export const CALL_DEADLINE_MS = 6_000;

/**
 * A membership call's own deadline: a member removing itself may stop before it answers, and a
 * call without one would wait for good (a `swarm leave --force` once hung 120 s in a loaded run).
 */
export const MEMBER_CALL_MS = 10_000;

/** The message swarmkit gives an update against a stale version. */
export const OUT_OF_SEQUENCE = 'update out of sequence';

/** swarmkit's answer (as dockerd shows it) when the managers have no quorum, so no leader. */
export const NO_LEADER =
  "rpc error: code = Unknown desc = The swarm does not have a leader. It's possible that too few managers are online. Make sure more than half of the managers are online.";

/** etcd's answers when its member has no leader (or lost it while the call waited). */
const NO_LEADER_RE = /no leader|request timed out|leader changed|Deadline exceeded|DEADLINE_EXCEEDED|not have a leader/i;

/** Maps an etcd/grpc failure to the API's 503 with a word of what failed. */
export function storeDown(what: string, err: unknown): Error {
  if (err instanceof EngineError) return err;
  if (NO_LEADER_RE.test((err as Error)?.message ?? String(err))) return unavailable(NO_LEADER, err);
  return unavailable(`cluster store: ${what} failed: ${(err as Error)?.message ?? String(err)}`, err);
}
