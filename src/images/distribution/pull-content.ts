// What one pull writes to containerd's content store, or keeps there, under its lease: content
// already present held for the rest of the pull, its distribution-source label extended, the image
// configuration fetched and verified, and at the end the configuration, manifest and index written
// with the gc.ref labels that keep the layers alive once the lease goes.
import { createHash } from 'node:crypto';
import { internal } from '../../errors.ts';
import type { SupervisorClient } from '../../supervisor/client.ts';
import type { Logger } from '../../util/log.ts';
import type { OciImageConfig } from '../image-store.ts';
import { retryable } from './errors.ts';
import { sleep } from './layer-download.ts';
import { isPresent } from './layer-unpack.ts';
import type { Descriptor } from './media.ts';
import type { Resolved } from './pull-resolve.ts';
import type { RegistrySession } from './registry-client.ts';
import { readAll } from './transport.ts';

const sha256 = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** The pull the content belongs to. */
export interface ContentTarget {
  /** The registry and the repository path inside it. */
  domain: string;
  path: string;
  /** The pull's lease and the prefix of its ingest references. */
  lease: string;
  ingestPrefix: string;
  signal: AbortSignal;
}

export class PullContent {
  constructor(
    private readonly client: SupervisorClient,
    private readonly pull: ContentTarget,
    private readonly maxAttempts: () => number,
    private readonly log: Logger,
  ) {}

  /** Keeps something that is already there alive for the rest of the pull. */
  async hold(id: string, type: string): Promise<void> {
    // Content already held by another lease or image stays anyway; this lease only guards against GC.
    await this.client
      .call('leases', 'AddResource', { id: this.pull.lease, resource: { id, type } })
      .catch((err: Error) => this.log.debug(`pull lease: ${type} ${id} not added: ${err.message}`));
  }

  /** Adds this repository to a blob's distribution-source label (what push uses for cross-repository mounts). */
  async noteSource(digest: string): Promise<void> {
    const { domain, path } = this.pull;
    const key = `containerd.io/distribution.source.${domain}`;
    const info = await this.client.contentInfo(digest).catch(() => null); // Unknown content has no labels to extend: nothing to do.
    const repos = (info?.labels[key] ?? '').split(',').filter(Boolean);
    if (!info || repos.includes(path)) return;
    // The source label only speeds up later cross-repository mounts; a pull does not depend on it.
    await this.client
      .contentUpdate({ digest, labels: { [key]: [...repos, path].join(',') } }, [`labels.${key}`])
      .catch((err: Error) => this.log.debug(`distribution source label of ${digest}: ${err.message}`));
  }

  /** Writes a small blob we hold in memory (or merges labels into it when it is already there). */
  private async store(bytes: Buffer, digest: string, labels: Record<string, string>): Promise<void> {
    await this.client.contentWrite(`${this.pull.ingestPrefix}-${digest}`, bytes, { expected: digest, lease: this.pull.lease, labels });
  }

  async fetchConfig(session: RegistrySession, desc: Descriptor): Promise<{ bytes: Buffer; parsed: OciImageConfig }> {
    const { signal } = this.pull;
    let bytes: Buffer;
    if (await isPresent(() => this.client.contentInfo(desc.digest))) {
      await this.hold(desc.digest, 'content');
      bytes = await this.client.contentReadAll(desc.digest);
    } else {
      const attempts = Math.max(1, this.maxAttempts());
      for (let attempt = 1; ; attempt++) {
        try {
          const res = await session.getBlob(this.pull.path, desc.digest, signal);
          bytes = await readAll(res.body, 32 << 20);
          break;
        } catch (err) {
          if (signal.aborted || attempt >= attempts || !retryable(err)) throw err;
          await sleep(1000 * attempt, signal);
        }
      }
    }
    if (bytes.length !== desc.size || sha256(bytes) !== desc.digest)
      throw internal(`image config verification failed for digest ${desc.digest}`);
    const parsed = JSON.parse(bytes.toString('utf8')) as OciImageConfig;
    return { bytes, parsed };
  }

  /** Every layer is in: config, manifest, index, with the labels that keep them alive (the record comes after). */
  async storeImage(r: Resolved, configBytes: Buffer, chain: string[], snapshotter: string): Promise<void> {
    const snapLabel = `containerd.io/gc.ref.snapshot.${snapshotter}`;
    const top = chain[chain.length - 1];
    await this.store(configBytes, r.parsed.config.digest, top ? { [snapLabel]: top } : {});
    const mLabels: Record<string, string> = { 'containerd.io/gc.ref.content.config': r.parsed.config.digest };
    r.parsed.layers.forEach((l, i) => {
      mLabels[`containerd.io/gc.ref.content.l.${i}`] = l.digest;
    });
    await this.store(r.manifest.bytes, r.manifest.digest, mLabels);
    if (r.top !== r.manifest) {
      await this.store(r.top.bytes, r.top.digest, { [`containerd.io/gc.ref.content.m.${r.indexPosition ?? 0}`]: r.manifest.digest });
    }
  }
}
