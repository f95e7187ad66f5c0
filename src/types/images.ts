// Docker Engine API wire types for local images: an entry of the rmi/prune answer, the options of
// POST /commit, and what POST /images/load reports.
import type { ContainerConfig } from './container-api.ts';

export interface ImageDeleteItem {
  Untagged?: string;
  Deleted?: string;
}

/** POST /commit: the query and the body. */
export interface CommitOptions {
  container: string;
  repo?: string;
  tag?: string;
  comment?: string;
  author?: string;
  pause: boolean;
  changes: string[];
  /** The request body: a container config whose set fields override the container's. */
  config?: ContainerConfig | null;
}

export interface LoadResult {
  /** The lines dockerd prints: "Loaded image: busybox:latest", "Loaded image ID: sha256:…". */
  messages: string[];
  ids: string[];
}
