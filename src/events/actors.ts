// Actor attributes as dockerd builds them, so `docker events` output and label/image filters look
// the same: containers carry their labels, `image` (as the user named it) and `name`; images their
// labels and `name`.

export interface ContainerLike {
  Id: string;
  Name: string;
  Config: { Image?: string; Labels?: Record<string, string> | null };
}

/** Extra attributes first, then labels, image and name on top (dockerd's order of writes). */
export function containerAttributes(rec: ContainerLike, extra: Record<string, string> = {}): Record<string, string> {
  const attrs: Record<string, string> = { ...extra };
  copyLabels(attrs, rec.Config.Labels);
  if (rec.Config.Image) attrs.image = rec.Config.Image;
  attrs.name = rec.Name.replace(/^\/+/, '');
  return attrs;
}

export function imageAttributes(labels: Record<string, string> | null | undefined, name: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  copyLabels(attrs, labels);
  if (name) attrs.name = name;
  return attrs;
}

/**
 * Copies labels into attrs: a for-in loop, about twice as fast as a spread on the large objects a
 * hostile client sends (200 000 labels). A "__proto__" label is defined, never assigned, so it
 * stays an attribute instead of replacing the prototype.
 */
function copyLabels(attrs: Record<string, string>, labels: Record<string, string> | null | undefined): void {
  if (!labels) return;
  for (const k in labels) {
    if (k === '__proto__') Object.defineProperty(attrs, k, { value: labels[k], enumerable: true, writable: true, configurable: true });
    else attrs[k] = labels[k]!;
  }
}
