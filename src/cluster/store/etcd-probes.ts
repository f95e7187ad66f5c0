// What the etcd member's runner asks of the member and of the host: whether the member answers an
// HTTPS path over mutual TLS (/health with a quorum, /version while serving), whether something
// listens on its ports, and a member a daemon killed -9 left running (found by its --data-dir in
// /proc and killed, so it can be started again under this daemon's watch).
import fs from 'node:fs';
import { request } from 'node:https';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Logger } from '../../util/log.ts';

/** The member's TLS files (the node's certificate, its key, the cluster CA). */
export interface EtcdTls {
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** GET `path` of the member over mutual TLS: whether it answers 200 with a body `ok` accepts. */
export function memberAnswers(
  endpoint: string,
  tls: EtcdTls,
  path: string,
  timeoutMs = 2000,
  ok: (body: string) => boolean = () => true,
): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      `${endpoint}${path}`,
      {
        ca: fs.readFileSync(tls.caFile),
        cert: fs.readFileSync(tls.certFile),
        key: fs.readFileSync(tls.keyFile),
        timeout: timeoutMs,
      },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve(res.statusCode === 200 && ok(body)));
        res.on('error', () => resolve(false));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false)); // not listening yet, or no quorum: the caller retries
    req.end();
  });
}

/**
 * After `kill -9` of the daemon its etcd (own session) keeps running and holds the ports; etcd
 * is crash-safe, so it is killed and started again under this daemon's watch. The /proc scan
 * reads every process's command line (0.2-0.8 s on a loaded host), so it runs only when such an
 * etcd may exist: the data directory holds a member, or something answers on the member's ports.
 */
export async function stopStaleMember(
  o: { dataDir: string; host: string; clientPort: number; peerPort: number },
  log: Logger,
): Promise<void> {
  if (!fs.existsSync(join(o.dataDir, 'member'))) {
    const held = await Promise.all([o.clientPort, o.peerPort].map((p) => portAnswers(o.host, p)));
    if (!held.includes(true)) return;
  }
  for (const entry of fs.readdirSync('/proc')) {
    const pid = Number(entry);
    if (!(pid > 0) || pid === process.pid) continue;
    let cmd: string[];
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile
    }
    const i = cmd.indexOf('--data-dir');
    if (i < 0 || cmd[i + 1] !== o.dataDir) continue;
    log.info('stopping the etcd a previous daemon left running', { pid });
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      continue; // already gone
    }
    while (!gone(pid)) await new Promise((r) => setTimeout(r, 20));
  }
}

/** Whether a process is gone (or a zombie nobody reaped yet). */
function gone(pid: number): boolean {
  try {
    return / Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\)/s, ')'));
  } catch {
    // ENOENT: no /proc entry, the process is gone
    return true;
  }
}

/** Whether a TCP connection to host:port is accepted (refused at once when nothing listens). */
function portAnswers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host, port, timeout: 1000 }, () => {
      sock.destroy();
      resolve(true);
    });
    sock.on('timeout', () => {
      sock.destroy();
      resolve(true); // not refused: something may hold the port, so look
    });
    sock.on('error', () => resolve(false));
  });
}
