// A node's own certificate over time (swarmkit's RenewTLSConfig): renewed through its managers at a
// random point between 50 % and 80 % of its lifetime (a fresh key, the same node ID and role), at once
// when the cluster wants certificates of another issuer (a root rotation), and the cluster's new root
// adopted as the node's trust root once the node's certificate leads to it. The certificates object is
// shared with the rest of the node's runtime (heartbeats, agent, endpoint) and updated in place.
import { X509Certificate } from 'node:crypto';
import type { Server } from 'node:https';
import type { TLSInfo } from '../../types/api/index.ts';
import type { GoJson } from '../../types/go-nil.ts';
import type { Logger } from '../../util/log.ts';
import { identityOf, issuerInChain, newKeyPair, nodeTlsInfo, type CertIdentity } from '../ca/ca.ts';
import type { RenewResponse } from './endpoint.ts';
import type { LocalStateFiles, NodeCerts } from './local-state.ts';

/**
 * Test knob, not a setting: ENGINE_TEST_CERT_RENEW_MS renews every so many milliseconds instead of
 * at 50-80 % of the lifetime (the API's shortest lifetime, 1 hour, is too long for a test to wait).
 */
const TEST_RENEW_MS = Number(process.env.ENGINE_TEST_CERT_RENEW_MS) || 0;
const RETRY_MS = 30_000;
/** setTimeout's longest delay; a later renewal point is reached in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** When to renew: a random point between 50 % and 80 % of the certificate's validity (swarmkit's). */
export function renewAt(certPem: string, random = Math.random()): number {
  const cert = new X509Certificate(certPem);
  const from = new Date(cert.validFrom).getTime();
  const to = new Date(cert.validTo).getTime();
  return from + (to - from) * (0.5 + 0.3 * random);
}

export class CertRenewer {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly certs: NodeCerts,
    private readonly files: LocalStateFiles,
    /** Asks a manager to sign `publicKeyPem` (worker: POST /renew; manager: in process). */
    private readonly request: (publicKeyPem: string) => Promise<RenewResponse>,
    /** The certificate or trust root changed (endpoints reload their TLS). */
    private readonly changed: () => void,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.schedule(TEST_RENEW_MS || renewAt(this.certs.certPem) - Date.now());
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** This node's Description.TLSInfo. */
  tlsInfo(): GoJson<TLSInfo> {
    return nodeTlsInfo(this.certs.caPem, this.certs.certPem);
  }

  /** A heartbeat's view of the cluster CA: renew for another issuer, adopt a new root. */
  check(ca: { trustRoot: string; issuerKey: string } | undefined): void {
    if (!ca || this.stopped || this.running) return;
    if (this.tlsInfo().CertIssuerPublicKey !== ca.issuerKey) {
      void this.renew('the cluster issues certificates from another root');
      return;
    }
    if (ca.trustRoot.trim() === this.certs.caPem.trim()) return;
    // Adopted only once the rotation ended (certificates are issued by that root itself): an answer
    // of a manager whose view is a beat old never takes the node back to the old root.
    if (ca.issuerKey !== new X509Certificate(ca.trustRoot).publicKey.export({ type: 'spki', format: 'der' }).toString('base64')) return;
    if (!issuerInChain(this.certs.certPem, ca.trustRoot)) return; // renewed first (issuer check above)
    this.certs.caPem = ca.trustRoot;
    this.files.writeCerts(this.certs);
    this.changed();
    this.log.info("the cluster's new root CA is this node's trust root now");
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    const wait = Math.max(0, delayMs);
    this.timer = setTimeout(
      () => {
        if (wait > MAX_TIMER_MS) this.start();
        else void this.renew('the certificate is due for renewal');
      },
      Math.min(wait, MAX_TIMER_MS),
    );
    this.timer.unref();
  }

  /** One renewal at a time; a failure is retried in 30 s. */
  renew(reason: string): Promise<void> {
    this.running ??= this.renewOnce(reason)
      .then(
        () => this.start(),
        (err: Error) => {
          this.log.warn('node certificate renewal failed; retrying', { error: err.message });
          this.schedule(TEST_RENEW_MS || RETRY_MS);
        },
      )
      .finally(() => (this.running = null));
    return this.running;
  }

  private async renewOnce(reason: string): Promise<void> {
    const keys = newKeyPair();
    const r = await this.request(keys.publicKeyPem);
    if (this.stopped) return;
    const was = identityOf(this.certs.certPem);
    const got = identityOf(r.certPem);
    if (got.nodeId !== was.nodeId || got.role !== was.role || got.clusterId !== was.clusterId)
      throw new Error('the manager answered with a certificate for another node or role');
    if (!issuerInChain(r.certPem, this.certs.caPem)) throw new Error("the renewed certificate does not lead to this node's trust root");
    this.certs.certPem = r.certPem;
    this.certs.keyPem = keys.keyPem;
    this.files.writeCerts(this.certs);
    this.changed();
    this.log.info('node certificate renewed', { reason, notAfter: got.notAfter.toISOString() });
  }
}

/** What a node's renewer uses of its runtime: a manager signs in process, a worker asks a manager. */
export interface RenewingNode {
  manager(): {
    renew(node: CertIdentity, certPem: string, body: { publicKeyPem: string }): Promise<RenewResponse>;
    refreshTls(): void;
  } | null;
  worker(): { call<T>(path: string, body: unknown): Promise<T>; beatSoon(): void } | null;
  /** A worker's own endpoint (log-forward.ts), whose TLS follows the certificate. */
  endpoint(): Server | null;
}

/** A started renewer for the node's shared certificates. */
export function nodeRenewer(certs: NodeCerts, files: LocalStateFiles, log: Logger, node: RenewingNode): CertRenewer {
  const request = (publicKeyPem: string): Promise<RenewResponse> => {
    const m = node.manager();
    if (m) return m.renew(identityOf(certs.certPem), certs.certPem, { publicKeyPem });
    const w = node.worker();
    if (!w) return Promise.reject(new Error('the node runs neither as a manager nor as a worker'));
    return w.call<RenewResponse>('/renew', { publicKeyPem });
  };
  const changed = () => {
    node.manager()?.refreshTls();
    node.worker()?.beatSoon();
    node.endpoint()?.setSecureContext({ cert: certs.certPem, key: certs.keyPem, ca: certs.caPem });
  };
  const r = new CertRenewer(certs, files, request, changed, log);
  r.start();
  return r;
}
