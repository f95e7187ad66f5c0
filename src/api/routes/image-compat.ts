// Answers of the image routes that depend on the client's API version, as dockerd's image router
// shapes them: list entries (untagged images as "<none>" before 1.43, VirtualSize before 1.44, no
// Descriptor before 1.48, Containers -1 before 1.51) and inspect (VirtualSize and a zero Created
// before 1.44, no Descriptor before 1.48). Views from the backend are copied, never changed.
import { versionLessThan } from '../../util/api-version.ts';

type View = Record<string, unknown>;

const ZERO_TIME = '0001-01-01T00:00:00Z';

/** GET /images/json entries for a client of API `version`. */
export function imageListForVersion(list: unknown[], version: string): unknown[] {
  const useNone = versionLessThan(version, '1.43');
  const withVirtualSize = versionLessThan(version, '1.44');
  const noDescriptor = versionLessThan(version, '1.48');
  const noContainers = versionLessThan(version, '1.51');
  if (!useNone && !withVirtualSize && !noDescriptor && !noContainers) return list;
  return list.map((item) => {
    if (!item || typeof item !== 'object') return item;
    const img: View = { ...(item as View) };
    const tags = img.RepoTags as string[] | null | undefined;
    const digests = img.RepoDigests as string[] | null | undefined;
    if (useNone && !tags?.length && !digests?.length) {
      img.RepoTags = ['<none>:<none>'];
      img.RepoDigests = ['<none>@<none>'];
    }
    if (withVirtualSize) img.VirtualSize = img.Size;
    if (noDescriptor) delete img.Descriptor;
    if (noContainers) img.Containers = -1;
    return img;
  });
}

/** GET /images/{name}/json for a client of API `version`. */
export function imageInspectForVersion(view: unknown, version: string): unknown {
  if (!view || typeof view !== 'object') return view;
  const before144 = versionLessThan(version, '1.44');
  const before148 = versionLessThan(version, '1.48');
  if (!before144 && !before148) return view;
  const img: View = { ...(view as View) };
  if (before144) {
    img.VirtualSize = img.Size;
    if (!img.Created) img.Created = ZERO_TIME;
  }
  if (before148) delete img.Descriptor;
  return img;
}
