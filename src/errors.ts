// One error table for the whole daemon (the fastify/undici idea): every failure a handler or a
// service raises is an EngineError carrying a stable code; the API layer maps the code to the HTTP
// status and writes {"message": …}. Handlers never choose status codes themselves.

// Each code is one of moby's errdefs classes, whose status dockerd's httpstatus.FromError gives:
// INVALID_PARAMETER = errdefs.InvalidParameter (400), UNAUTHORIZED = Unauthorized (401),
// FORBIDDEN = Forbidden (403), NOT_FOUND = NotFound (404), CONFLICT = Conflict (409),
// NOT_MODIFIED = NotModified (304), NOT_IMPLEMENTED = NotImplemented (501), UNAVAILABLE =
// Unavailable (503), INTERNAL = System/Unknown (500). A condition the client caused is never
// INTERNAL, even where dockerd answers 500 for it (a plain Go error: a path over NAME_MAX, a build
// context without a Dockerfile): the words stay dockerd's, the status says whose fault it is.
export const ERROR_STATUS = {
  INVALID_PARAMETER: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  NOT_MODIFIED: 304,
  NOT_IMPLEMENTED: 501,
  UNAVAILABLE: 503,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class EngineError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'EngineError';
  }
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export const invalidParameter = (message: string, cause?: unknown) => new EngineError('INVALID_PARAMETER', message, { cause });
export const notFound = (message: string) => new EngineError('NOT_FOUND', message);
export const conflict = (message: string) => new EngineError('CONFLICT', message);
export const unauthorized = (message: string) => new EngineError('UNAUTHORIZED', message);
export const forbidden = (message: string) => new EngineError('FORBIDDEN', message);
export const notImplemented = (message: string) => new EngineError('NOT_IMPLEMENTED', message);
export const unavailable = (message: string, cause?: unknown) => new EngineError('UNAVAILABLE', message, { cause });
export const internal = (message: string, cause?: unknown) => new EngineError('INTERNAL', message, { cause });

/** The HTTP status for any thrown value: EngineErrors by their code, everything else is a 500. */
export function statusOf(err: unknown): number {
  return err instanceof EngineError ? err.status : 500;
}

export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

export function isNotFound(err: unknown): boolean {
  return err instanceof EngineError && err.code === 'NOT_FOUND';
}
