// What the image side needs to know about containers (commit, export, image removal) and their
// init layers, provided by the container side (daemon/containers: the service and RootfsManager);
// kept as interfaces declared here so images/ never imports daemon/, the layer above it.
import type { ContainerConfig } from '../types/container-api.ts';

export interface ContainerSnapshot {
  id: string;
  /** The image ID (sha256:…) the container was created from. */
  imageId: string;
  snapshotKey: string;
  snapshotter: string;
  running: boolean;
  paused: boolean;
  config: ContainerConfig;
  /**
   * --userns-remap: the container's files are owned by remapped host ids on disk; these give the
   * ids the container sees (what export writes). Absent for containers in the host's namespace.
   */
  remap?: { uid(hostId: number): number; gid(hostId: number): number };
}

export interface ContainerFacts {
  /** By ID, unique ID prefix or name; 404 when unknown. Its writable layer is made if create left it for later. */
  snapshotOf(ref: string): Promise<ContainerSnapshot>;
  /**
   * Makes the writable layers not made yet of the containers created from `imageId`: once the image
   * is gone (rmi -f), they hold its layers, as dockerd's do.
   */
  keepLayersOf(imageId: string): Promise<void>;
  /** Every container and the image it uses. */
  imageUsers(): Array<{ id: string; image: string; running: boolean }>;
  /** Runs fn with the container's processes frozen when it is running (and not paused already). */
  frozen<T>(ref: string, fn: () => Promise<T>): Promise<T>;
}

/** The shared init layers containers sit on (one per image chain), which go with the last image using the chain. */
export interface InitLayers {
  /** Drops a chain's init layer; false when a container's layer still sits on it. */
  removeInit(chainId: string): Promise<boolean>;
}
