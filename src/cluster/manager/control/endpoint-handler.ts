// The calls a manager's endpoint (node/endpoint.ts) serves, each handed to the part whose job it is:
// membership to node-admission.ts, the unlock key to cluster-settings.ts, agents' syncs to the
// services API, overlay networks and task logs to what the node's runtime passed in.
import { invalidParameter, notFound } from '../../../errors.ts';
import type { CertIdentity } from '../../ca/ca.ts';
import type { EndpointHandler } from '../../node/endpoint.ts';
import type { ClusterSettings } from './cluster-settings.ts';
import type { NodeAdmission } from './node-admission.ts';
import type { ServicesApi } from '../services-api.ts';

export interface EndpointParts {
  caPem: () => string;
  admission: NodeAdmission;
  settings: ClusterSettings;
  services: ServicesApi;
  /** Workers' overlay requests (cluster/networks.ts serveRemote); absent: 404. */
  overlay?: (node: CertIdentity, op: string, body: unknown) => Promise<unknown>;
  /** Another manager's request for the logs of tasks this node runs (log-forward.ts); absent: 404. */
  logs?: (node: CertIdentity, body: unknown, signal: AbortSignal) => Promise<AsyncIterable<Buffer>>;
}

export function endpointHandler(p: EndpointParts): EndpointHandler {
  const { admission } = p;
  return {
    caPem: p.caPem,
    join: (req, from) => admission.join(req, from),
    heartbeat: (node, certPem, body) => admission.heartbeat(node, certPem, body),
    renew: (node, certPem, body) => admission.renew(node, certPem, body),
    promote: (node) => admission.promote(node),
    leave: (node, abort) => admission.leave(node, abort),
    unlockKey: (node) => p.settings.unlockKey(node),
    overlay: async (node, op, body) => {
      if (!p.overlay) throw notFound('overlay networks are not served by this manager');
      return p.overlay(node, op, body);
    },
    logs: (node, body, signal) => {
      if (!p.logs) return Promise.reject(notFound('no such endpoint POST /logs'));
      return p.logs(node, body, signal);
    },
    // A node's agent: its task states in, its tasks out.
    agentSync: async (node, body) => {
      if (!Array.isArray(body?.reports)) throw invalidParameter('invalid agent reports');
      const since = typeof body.since === 'number' ? body.since : undefined;
      const logAddr = typeof body.logAddr === 'string' ? body.logAddr : undefined;
      const known = typeof body.known === 'string' ? body.known : undefined;
      return p.services.agents.sync(node.nodeId, body.reports, known, undefined, { since, logAddr });
    },
  };
}
