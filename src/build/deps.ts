// What the builder needs from the services beside and below it, as small interfaces: the step
// containers (RUN), base images (resolve, pull), and the image store. The composition root
// (main/compose.ts) adapts the container and distribution services to them, so build/ never
// imports daemon/.
import type { BuildSink } from '../types/build.ts';
import type { AuthConfig } from '../types/distribution.ts';
import type { LocalImage } from '../images/image-store.ts';

/** The container a RUN step runs in. */
export interface StepContainerSpec {
  /** The parent image's ID. */
  image: string;
  cmd: string[];
  env: string[];
  user: string;
  workingDir: string;
  /** HostConfig fields from the build options (network mode, extra hosts, resources, ulimits, shm). */
  hostConfig: Record<string, unknown>;
}

export interface StepContainer {
  id: string;
  snapshotKey: string;
  snapshotter: string;
}

export interface BuildContainers {
  create(spec: StepContainerSpec): Promise<StepContainer>;
  /** Starts the container, passes its output on, and resolves with its exit code; the signal kills it. */
  run(id: string, output: (data: Buffer, stream: 'stdout' | 'stderr') => void, signal: AbortSignal): Promise<number>;
  /** Removes the container (killing it first if it still runs). */
  remove(id: string): Promise<void>;
}

export interface BaseImages {
  /** The local image, or undefined when there is none by that name. */
  find(ref: string): Promise<LocalImage | undefined>;
  /** Pulls the image, reporting progress as the build stream's status lines. */
  pull(ref: string, platform: string | undefined, auth: AuthConfig, sink: BuildSink, signal: AbortSignal): Promise<void>;
}

/** dockerd's builder metrics (builder_builds_triggered, builder_builds_failed{reason}). */
export interface BuildMetrics {
  triggered(): void;
  failed(reason: string): void;
}
