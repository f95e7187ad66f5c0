// An etcd member's Prometheus metrics (GET /metrics on its client URL, mutual TLS with the
// manager's own node certificate), reduced to what the cluster scale bench reports: watchers and
// events sent (watch fan-out), gRPC calls by method, proposals committed, WAL fsyncs, bytes on the
// client and peer links, the database size.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';

export interface EtcdFacts {
  watchers: number;
  watchStreams: number;
  /** events sent to watchers (counter) */
  events: number;
  proposals: number;
  fsyncs: number;
  /** gRPC calls handled, by method (counter) */
  calls: Record<string, number>;
  clientBytesIn: number;
  clientBytesOut: number;
  peerBytesOut: number;
  dbBytes: number;
  dbInUseBytes: number;
  isLeader: boolean;
  leaderChanges: number;
}

/** Files of a manager's certificates (cluster/local-state.ts). */
export function managerTls(dataRoot: string, execRoot: string): { ca: Buffer; cert: Buffer; key: Buffer } {
  const certs = join(dataRoot, 'cluster', 'certificates');
  return {
    ca: readFileSync(join(certs, 'ca.pem')),
    cert: readFileSync(join(certs, 'node.pem')),
    key: readFileSync(join(execRoot, 'cluster', 'node.key')),
  };
}

function get(host: string, port: number, tls: { ca: Buffer; cert: Buffer; key: Buffer }): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path: '/metrics', ...tls, checkServerIdentity: () => undefined, timeout: 10_000 }, (res) => {
      let s = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (s += c));
      res.on('end', () => resolve(s));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('etcd /metrics timed out')));
    req.on('error', reject);
    req.end();
  });
}

export async function etcdFacts(host: string, port: number, tls: { ca: Buffer; cert: Buffer; key: Buffer }): Promise<EtcdFacts> {
  const text = await get(host, port, tls);
  const sum = (name: string, label?: string) => {
    let t = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith(name)) continue;
      const rest = line.slice(name.length);
      if (rest[0] !== ' ' && rest[0] !== '{') continue;
      if (label && !rest.includes(label)) continue;
      t += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return t;
  };
  const calls: Record<string, number> = {};
  for (const m of text.matchAll(/^grpc_server_handled_total\{[^}]*grpc_method="(\w+)"[^}]*\} (\S+)$/gm))
    calls[m[1]!] = (calls[m[1]!] ?? 0) + Number(m[2]);
  return {
    watchers: sum('etcd_debugging_mvcc_watcher_total'),
    watchStreams: sum('etcd_debugging_mvcc_watch_stream_total'),
    events: sum('etcd_debugging_mvcc_events_total'),
    proposals: sum('etcd_server_proposals_committed_total'),
    fsyncs: sum('etcd_disk_wal_fsync_duration_seconds_count'),
    calls,
    clientBytesIn: sum('etcd_network_client_grpc_received_bytes_total'),
    clientBytesOut: sum('etcd_network_client_grpc_sent_bytes_total'),
    peerBytesOut: sum('etcd_network_peer_sent_bytes_total'),
    dbBytes: sum('etcd_mvcc_db_total_size_in_bytes'),
    dbInUseBytes: sum('etcd_mvcc_db_total_size_in_use_in_bytes'),
    isLeader: sum('etcd_server_is_leader') === 1,
    leaderChanges: sum('etcd_server_leader_changes_seen_total'),
  };
}
