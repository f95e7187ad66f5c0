// Answers for requests Node's HTTP parser refuses before any handler sees them (its 'clientError'
// event): bad chunk framing, Content-Length with Transfer-Encoding, an unknown HTTP version, a bad
// method token, oversized headers, a body cut short by a half-close. Node's default answer is a
// bare status line; clients of this API expect {"message": …} on every error, so each gets a JSON
// body naming what was wrong, and the connection is closed (the parser's state is lost).
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../util/log.ts';

/** What Node's parser reports: an Error with an `HPE_*` (llhttp) or `ERR_*` code. */
export interface ParserError extends Error {
  code?: string;
  reason?: string;
}

/** The status and message for a parser error, by its code. */
export function clientErrorAnswer(err: ParserError): { status: number; message: string } {
  const reason = err.reason ?? err.message.replace(/^Parse Error:?\s*/, '');
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: 'request header fields too large' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, message: 'chunk extensions too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: 'request timeout: the request was not received in time' };
    case 'HPE_INVALID_EOF_STATE':
      return { status: 400, message: 'bad request: the connection was closed before the end of the request body' };
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return { status: 400, message: `bad request: invalid Transfer-Encoding: ${reason}` };
    case 'HPE_INVALID_CHUNK_SIZE':
      return { status: 400, message: `bad request: malformed chunked encoding: ${reason}` };
    case 'HPE_INVALID_VERSION':
      // A 400, not 505: the parser could not read the request line at all, so nothing was served.
      return { status: 400, message: 'bad request: unsupported HTTP version (HTTP/1.0 and HTTP/1.1 are served)' };
    case 'HPE_INVALID_METHOD':
      return { status: 400, message: 'bad request: invalid method' };
    case 'HPE_INVALID_CONTENT_LENGTH':
      return { status: 400, message: 'bad request: invalid Content-Length' };
    default:
      return { status: 400, message: `bad request: ${reason || 'malformed HTTP request'}` };
  }
}

/** The bytes of a complete HTTP/1.1 error answer that closes the connection. */
export function jsonErrorResponse(status: number, message: string): Buffer {
  const body = JSON.stringify({ message });
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${body}`);
}

/**
 * Node's 'clientError' handler. A reset or already-closed connection has nobody to answer: that is
 * a client going away, logged at debug level. Otherwise the JSON answer is written and the socket
 * closed once it is flushed (destroyed if the client never reads it).
 */
export function answerClientError(err: ParserError, socket: Duplex, log: Logger, listener: string): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    log.debug('client connection ended during a request', { listener, error: err.code ?? err.message });
    socket.destroy();
    return;
  }
  const { status, message } = clientErrorAnswer(err);
  log.debug('malformed HTTP request', { listener, status, code: err.code, error: message });
  socket.end(jsonErrorResponse(status, message));
  // A client that never reads its answer must not keep the socket: end() waits for the flush.
  const timer = setTimeout(() => socket.destroy(), 5000);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}
