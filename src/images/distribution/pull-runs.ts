// Running pulls for POST /images/create?fromImage=…: the reference normalised, identical concurrent
// pulls joined into one run (same record name, platform and credentials: both callers see the same
// progress), docker pull --all-tags tag after tag, and dockerd's pull event for each reference.
import { createHash } from 'node:crypto';
import { notFound } from '../../errors.ts';
import { familiarName, familiarString, parseReference, referenceString, repoName, type Reference } from '../../util/image-reference.ts';
import type { EventPublisher } from '../../events/bus.ts';
import { publishImageEvent } from '../../events/image-events.ts';
import type { AuthConfig, JsonMessage, ProgressSink } from '../../types/distribution.ts';
import type { ImageStore } from '../image-store.ts';
import { translateRegistryError } from './errors.ts';
import { parsePlatform, type Platform } from './media.ts';
import { Puller, recordNameFor, type PullDeps, type PullResult } from './pull.ts';
import type { RegistryAccess } from './registry-access.ts';
import { SharedOperations } from './shared.ts';

export interface PullParams {
  fromImage: string;
  tag?: string;
  platform?: string;
  auth: AuthConfig;
}

const authKey = (a: AuthConfig) =>
  createHash('sha256')
    .update(JSON.stringify([a.username, a.password, a.identitytoken, a.registrytoken]))
    .digest('hex')
    .slice(0, 16);

/** fromImage (+ tag, which may be a digest) → normalised reference; no tag at all means every tag. */
export function pullReference(fromImage: string, tag: string | undefined): { ref: Reference; allTags: boolean } {
  const base = parseReference(fromImage, { defaultTag: false });
  if (tag) {
    if (/^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$/.test(tag))
      return { ref: { domain: base.domain, path: base.path, digest: tag }, allTags: false };
    return { ref: parseReference(`${repoName(base)}:${tag}`), allTags: false };
  }
  return { ref: base, allTags: !base.tag && !base.digest };
}

export class PullRuns {
  private readonly pulls = new SharedOperations<PullResult>();

  constructor(
    private readonly access: RegistryAccess,
    private readonly images: ImageStore,
    private readonly events: EventPublisher | undefined,
    /** What a Puller needs, read from the live configuration when each pull starts. */
    private readonly pullerDeps: () => PullDeps,
  ) {}

  /** POST /images/create?fromImage=…: streams progress to `sink`; rejects on failure. */
  async pull(p: PullParams, sink: ProgressSink, signal: AbortSignal): Promise<void> {
    const { ref, allTags } = pullReference(p.fromImage, p.tag);
    const platform = p.platform ? parsePlatform(p.platform) : undefined;
    if (!allTags) {
      await this.pullOne(ref, platform, p.auth, sink, signal);
      await this.pulledEvent(ref);
      return;
    }
    // docker pull --all-tags: every tag of the repository, one after the other.
    const session = await this.access.firstSession(ref.domain, [`repository:${ref.path}:pull`], p.auth, true, signal);
    const tags = await session.listTags(ref.path, signal).catch((err) => {
      throw translateRegistryError(err);
    });
    if (!tags.length) throw notFound(`repository ${familiarName(ref)} has no tags`);
    for (const tag of tags) {
      await this.pullOne({ ...ref, tag }, platform, p.auth, sink, signal, true);
      await this.pulledEvent({ ...ref, tag });
    }
    sink({ status: `Status: Downloaded newer image for ${familiarName(ref)}` });
  }

  /** dockerd names the pulled reference (busybox:latest) as the event's actor. */
  private async pulledEvent(ref: Reference): Promise<void> {
    const name = familiarString(ref);
    if (!this.events) return;
    const labels = await this.images.resolve(referenceString(ref)).then(
      (img) => img.config.config?.Labels,
      () => undefined, // the image went meanwhile (removed by another client): the event without labels
    );
    publishImageEvent(this.events, 'pull', name, name, labels);
  }

  private pullOne(
    ref: Reference,
    platform: Platform | undefined,
    auth: AuthConfig,
    sink: ProgressSink,
    signal: AbortSignal,
    quietStatus = false,
  ): Promise<PullResult> {
    const key = `${recordNameFor(ref)}|${platform ? JSON.stringify(platform) : ''}|${authKey(auth)}`;
    const out: ProgressSink = quietStatus
      ? (m: JsonMessage) => {
          if (!m.status?.startsWith('Status: ')) sink(m);
        }
      : sink;
    return this.pulls.run(key, out, signal, (shared, opSignal) => {
      return new Puller(this.pullerDeps(), ref, auth, platform, shared, opSignal).run();
    });
  }

  /** How many pulls are running (identical ones count once). */
  get runningPulls(): number {
    return this.pulls.size;
  }
}
