// The failures a snapshotter reports to containerd, by class: the server turns each class into the
// gRPC status containerd's errdefs reads back (not found, already exists, failed precondition,
// invalid argument), so containerd's metadata layer and our client see the classes they expect.

export type SnapshotErrorKind = 'not-found' | 'already-exists' | 'failed-precondition' | 'invalid-argument';

export class SnapshotError extends Error {
  constructor(
    readonly kind: SnapshotErrorKind,
    message: string,
  ) {
    super(message);
  }
}

export const notFound = (message: string) => new SnapshotError('not-found', message);
export const alreadyExists = (message: string) => new SnapshotError('already-exists', message);
export const failedPrecondition = (message: string) => new SnapshotError('failed-precondition', message);
export const invalidArgument = (message: string) => new SnapshotError('invalid-argument', message);
