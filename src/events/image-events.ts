// Image events as dockerd logs them: Actor.ID is the image ID (or, for pull and push, the familiar
// reference), attributes are the image's labels plus `name`.
import type { EventPublisher } from './bus.ts';
import { imageActor } from './actors.ts';

interface LabelledImage {
  config: { config?: { Labels?: Record<string, string> | null } | null };
}

export type ImageLookup = (ref: string) => Promise<LabelledImage>;

/** Publishes at once with the labels given (none for a deleted image). */
export function publishImageEvent(
  events: EventPublisher | undefined,
  action: string,
  id: string,
  name: string,
  labels?: Record<string, string> | null,
): void {
  events?.publish({ Type: 'image', Action: action, Actor: imageActor(id, labels, name) });
}

/** Looks the image up for its labels first; never throws (an image gone meanwhile has none). */
export async function publishImageEventFor(
  events: EventPublisher | undefined,
  lookup: ImageLookup,
  action: string,
  id: string,
  name: string,
): Promise<void> {
  if (!events) return;
  const labels = await lookup(id).then(
    (img) => img.config.config?.Labels,
    () => undefined,
  );
  publishImageEvent(events, action, id, name, labels);
}
