// gRPC status → the daemon's error table. containerd's message (the status details) is kept as the
// error message; the original ServiceError stays reachable as `err.cause` (with `.code`).

import { status, type ServiceError } from '@grpc/grpc-js';
import { EngineError, type ErrorCode } from '../errors.ts';

export { status as GrpcStatus };

function isServiceError(err: unknown): err is ServiceError {
  return err instanceof Error && typeof (err as Partial<ServiceError>).code === 'number' && 'details' in err;
}

export function codeFor(grpcCode: number): ErrorCode {
  switch (grpcCode) {
    case status.NOT_FOUND:
      return 'NOT_FOUND';
    case status.ALREADY_EXISTS:
    case status.FAILED_PRECONDITION:
      return 'CONFLICT';
    case status.INVALID_ARGUMENT:
      return 'INVALID_PARAMETER';
    case status.UNAVAILABLE:
      return 'UNAVAILABLE';
    default:
      return 'INTERNAL';
  }
}

/** Wraps a grpc-js error; anything else (already an EngineError, a local bug) passes through. */
export function fromGrpc(err: unknown): unknown {
  if (!isServiceError(err)) return err;
  let message = err.details || err.message;
  if (err.code === status.UNAVAILABLE) message = `supervisor unavailable: ${message}`;
  return new EngineError(codeFor(err.code), message, { cause: err });
}

/** The gRPC status code behind an error from the client, if there is one. */
export function grpcCode(err: unknown): number | undefined {
  if (isServiceError(err)) return err.code;
  if (err instanceof EngineError && isServiceError(err.cause)) return err.cause.code;
  return undefined;
}
