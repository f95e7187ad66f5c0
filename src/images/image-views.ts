// The API shapes of local images: ImageSummary (list), ImageInspect, history items, and the list
// filters (dangling, label, reference, before, since, until) with dockerd's matching rules.
import { parseTimeValue } from '../util/time.ts';
import { versionLessThan } from '../util/api-version.ts';
import { invalidParameter } from '../errors.ts';
import type { Timestamp } from '../supervisor/types.ts';
import type { ImageInspect, ImageSummary } from '../types/api/index.ts';
import type { LocalImage } from './image-store.ts';
import { LABEL } from './image-write.ts';
import { familiarName, familiarString, parseReference } from '../util/image-reference.ts';
import { compileGoGlob } from '../wire/glob.ts';

export function createdSeconds(img: LocalImage): number {
  const t = img.config.created ? Date.parse(img.config.created) : NaN;
  return Number.isNaN(t) ? 0 : Math.floor(t / 1000);
}

export function parentId(img: LocalImage): string {
  for (const r of img.records) if (r.labels?.[LABEL.parent]) return r.labels[LABEL.parent]!;
  return '';
}

/** Tagged names as users see them (busybox:latest). */
export function repoTags(img: LocalImage): string[] {
  const out: string[] = [];
  for (const n of img.names) {
    try {
      const r = parseReference(n, { defaultTag: false });
      if (r.tag && !r.digest) out.push(familiarString(r));
    } catch {
      // a record name that is not a reference: not shown
    }
  }
  return out.sort();
}

/** name@digest for every repository the image is known under. */
export function repoDigests(img: LocalImage): string[] {
  const out = new Set<string>();
  for (const n of img.names) {
    try {
      const r = parseReference(n, { defaultTag: false });
      out.add(`${familiarName(r)}@${r.digest ?? img.record.target.digest}`);
    } catch {
      // not a reference
    }
  }
  return [...out].sort();
}

export function summaryView(img: LocalImage, o: { size: number; sharedSize: number; containers: number; tags?: string[] }): ImageSummary {
  return {
    Containers: o.containers,
    Created: createdSeconds(img),
    Id: img.id,
    Labels: img.config.config?.Labels ?? {},
    ParentId: parentId(img),
    RepoDigests: repoDigests(img),
    RepoTags: o.tags ?? repoTags(img),
    SharedSize: o.sharedSize,
    Size: o.size,
  };
}

function rfc3339(ts: Timestamp | null | undefined): string | undefined {
  if (!ts) return undefined;
  const ms = Number(ts.seconds) * 1000;
  return `${new Date(ms).toISOString().slice(0, 19)}.${String(ts.nanos).padStart(9, '0')}Z`;
}

export function inspectView(img: LocalImage, o: { size: number; driver: string; version: string }): ImageInspect {
  const c = img.config as typeof img.config & { variant?: string; 'os.version'?: string; comment?: string; docker_version?: string };
  const rc = c.config ?? {};
  const config: Record<string, unknown> = {
    User: rc.User ?? '',
    Env: rc.Env ?? null,
    Cmd: rc.Cmd ?? null,
    Entrypoint: rc.Entrypoint ?? null,
    WorkingDir: rc.WorkingDir ?? '',
    Labels: rc.Labels ?? null,
    ExposedPorts: rc.ExposedPorts ?? null,
    Volumes: rc.Volumes ?? null,
    OnBuild: rc.OnBuild ?? null,
    ...(rc.StopSignal ? { StopSignal: rc.StopSignal } : {}),
    ...(rc.Healthcheck ? { Healthcheck: rc.Healthcheck } : {}),
    ...(rc.Shell ? { Shell: rc.Shell } : {}),
  };
  if (versionLessThan(o.version, '1.50')) {
    // Older clients expect the full container-config shape here.
    Object.assign(config, {
      Hostname: '',
      Domainname: '',
      AttachStdin: false,
      AttachStdout: false,
      AttachStderr: false,
      Tty: false,
      OpenStdin: false,
      StdinOnce: false,
      Image: '',
    });
  }
  const tagged = img.records
    .filter((r) => img.names.includes(r.name))
    .map((r) => r.updated_at ?? r.created_at)
    .filter(Boolean) as Timestamp[];
  const last = tagged.sort((a, b) => Number(b.seconds) - Number(a.seconds))[0];
  const lastComment = [...(c.history ?? [])].reverse().find((h) => h.comment)?.comment ?? '';
  return {
    Id: img.id,
    RepoTags: repoTags(img),
    RepoDigests: repoDigests(img),
    Parent: parentId(img),
    Comment: c.comment ?? lastComment,
    ...(c.created ? { Created: c.created } : {}),
    DockerVersion: c.docker_version ?? '',
    Author: c.author ?? '',
    Config: config,
    Architecture: c.architecture ?? '',
    ...(c.variant ? { Variant: c.variant } : {}),
    Os: c.os ?? '',
    ...(c['os.version'] ? { OsVersion: c['os.version'] } : {}),
    Size: o.size,
    GraphDriver: { Name: o.driver, Data: {} },
    RootFS: { Type: c.rootfs?.type ?? 'layers', Layers: c.rootfs?.diff_ids ?? [] },
    Metadata: last ? { LastTagTime: rfc3339(last) } : {},
    Descriptor: { mediaType: img.record.target.media_type, digest: img.record.target.digest, size: Number(img.record.target.size) },
  };
}

/**
 * History, newest first. Entries that start a locally known ancestor image carry its ID and tags
 * (found through the parent labels of committed images); the others are "<missing>".
 */
export function historyView(img: LocalImage, byId: Map<string, LocalImage>, layerSizes: number[] = []): Array<Record<string, unknown>> {
  const history = img.config.history?.length
    ? img.config.history
    : (img.config.rootfs?.diff_ids ?? []).map(() => ({ created: img.config.created, created_by: '', empty_layer: false, comment: '' }));
  const layers = img.manifest.layers;
  let li = 0;
  const items = history.map((h) => {
    const size = h.empty_layer ? 0 : (layerSizes[li] ?? Number(layers[li]?.size ?? 0));
    if (!h.empty_layer) li++;
    const created = h.created ? Math.floor(Date.parse(h.created) / 1000) : 0;
    return {
      Id: '<missing>',
      Created: Number.isNaN(created) ? 0 : created,
      CreatedBy: h.created_by ?? '',
      Tags: null as string[] | null,
      Size: size,
      Comment: h.comment ?? '',
    };
  });
  let cur: LocalImage | undefined = img;
  const seen = new Set<string>();
  while (cur && !seen.has(cur.id)) {
    seen.add(cur.id);
    const n = cur.config.history?.length ?? 0;
    const at = n - 1;
    if (at >= 0 && at < items.length) {
      items[at]!.Id = cur.id;
      const tags = repoTags(cur);
      items[at]!.Tags = tags.length ? tags : null;
    }
    const p = parentId(cur);
    cur = p ? byId.get(p) : undefined;
  }
  if (items.length && items[items.length - 1]!.Id === '<missing>') {
    items[items.length - 1]!.Id = img.id;
    const tags = repoTags(img);
    items[items.length - 1]!.Tags = tags.length ? tags : null;
  }
  return items.reverse();
}

// ---- filters -----------------------------------------------------------------------------------

/** Whether a reference filter matches a tag (Go's path.Match on the familiar name or name:tag). */
export function referenceMatches(pattern: string, tag: string): boolean {
  const r = parseReference(tag, { defaultTag: false });
  const glob = compileGoGlob(pattern); // linear time whatever the pattern
  if (!glob) throw invalidParameter(`invalid reference filter ${JSON.stringify(pattern)}: syntax error in pattern`);
  return glob.matches(familiarName(r)) || glob.matches(familiarString(r));
}

/** Unix seconds, RFC 3339 or a Go duration before now, in (fractional) unix seconds. */
export function parseTimeFilter(v: string): number {
  const ns = parseTimeValue(v);
  if (ns === undefined) throw invalidParameter(`invalid time filter ${JSON.stringify(v)}`);
  return Number(ns) / 1e9;
}
