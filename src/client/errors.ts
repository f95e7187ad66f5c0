// The SDK's errors: EngineError for an answer of the daemon with an error status (the status and
// the daemon's message), ConnectionError when the daemon cannot be reached at all.

export class EngineError extends Error {
  override readonly name = 'EngineError';
  constructor(
    /** HTTP status of the daemon's answer (400 bad parameter, 404 not found, 409 conflict, 500 …). */
    readonly status: number,
    message: string,
    readonly method: string,
    readonly path: string,
  ) {
    super(message);
  }
  get notFound(): boolean {
    return this.status === 404;
  }
  get conflict(): boolean {
    return this.status === 409;
  }
}

export class ConnectionError extends Error {
  override readonly name = 'ConnectionError';
  constructor(
    readonly host: string,
    override readonly cause: Error,
  ) {
    super(`Cannot connect to the engine daemon at ${host}. Is the engine daemon running? (${cause.message})`);
  }
}

/** The message of an error body: {"message": …} as the daemon sends, else the text itself. */
export function errorMessage(body: string, status: number): string {
  try {
    const j = JSON.parse(body) as { message?: unknown };
    if (j && typeof j.message === 'string') return j.message;
  } catch {
    // not JSON: the text itself is the message (a proxy's page, or an old daemon)
  }
  return body.trim() || `status ${status}`;
}
