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
  const attrs: Record<string, string> = { ...extra, ...(rec.Config.Labels ?? {}) };
  if (rec.Config.Image) attrs.image = rec.Config.Image;
  attrs.name = rec.Name.replace(/^\/+/, '');
  return attrs;
}

export function imageAttributes(labels: Record<string, string> | null | undefined, name: string): Record<string, string> {
  const attrs: Record<string, string> = { ...(labels ?? {}) };
  if (name) attrs.name = name;
  return attrs;
}
