// Docker Engine API wire types for docker cp and docker diff: the path stat carried (base64 JSON)
// in the X-Docker-Container-Path-Stat header, and one entry of GET /containers/{id}/changes.

export interface ContainerPathStat {
  name: string;
  size: number;
  mode: number;
  mtime: string;
  linkTarget: string;
}

/** Kind: 0 modified, 1 added, 2 deleted. */
export interface Change {
  Path: string;
  Kind: 0 | 1 | 2;
}
