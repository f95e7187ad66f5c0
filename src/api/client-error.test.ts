// Answers to requests Node's parser refuses: a status per llhttp error code and a JSON body.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { Logger } from '../util/log.ts';
import { answerClientError, clientErrorAnswer, jsonErrorResponse, type ParserError } from './client-error.ts';

const parserError = (code: string, reason = 'x'): ParserError => Object.assign(new Error(`Parse Error: ${reason}`), { code, reason });
const quiet = new Logger({ level: 'fatal', format: 'text', raw: false });

test('statuses by parser error code; every message says what was wrong', () => {
  assert.equal(clientErrorAnswer(parserError('HPE_HEADER_OVERFLOW')).status, 431);
  assert.equal(clientErrorAnswer(parserError('HPE_CHUNK_EXTENSIONS_OVERFLOW')).status, 413);
  assert.equal(clientErrorAnswer(parserError('ERR_HTTP_REQUEST_TIMEOUT')).status, 408);
  for (const code of [
    'HPE_INVALID_CHUNK_SIZE',
    'HPE_INVALID_TRANSFER_ENCODING',
    'HPE_INVALID_VERSION',
    'HPE_INVALID_METHOD',
    'HPE_INVALID_EOF_STATE',
    'HPE_INVALID_CONTENT_LENGTH',
    'HPE_SOMETHING_NEW',
  ]) {
    const a = clientErrorAnswer(parserError(code, 'Something odd'));
    assert.equal(a.status, 400, code);
    assert.match(a.message, /^bad request: ./, code);
  }
  assert.match(clientErrorAnswer(parserError('HPE_SOMETHING_NEW', 'Something odd')).message, /Something odd/);
});

test('the answer is a complete HTTP/1.1 response with a JSON body, and the connection is ended', async () => {
  const text = jsonErrorResponse(431, 'request header fields too large').toString();
  assert.match(text, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
  assert.match(text, /\r\nContent-Type: application\/json\r\n/);
  assert.match(text, /\r\nConnection: close\r\n/);
  const body = text.slice(text.indexOf('\r\n\r\n') + 4);
  assert.match(text, new RegExp(`\\r\\nContent-Length: ${Buffer.byteLength(body)}\\r\\n`));
  assert.deepEqual(JSON.parse(body), { message: 'request header fields too large' });

  const socket = new PassThrough();
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  answerClientError(parserError('HPE_INVALID_METHOD'), socket, quiet, 'test');
  await new Promise((r) => socket.once('end', r));
  assert.match(Buffer.concat(chunks).toString(), /^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*\{"message":"bad request: invalid method"\}$/);
});

test('a reset connection gets no answer: it is destroyed', () => {
  const socket = new PassThrough();
  let written = false;
  socket.on('data', () => (written = true));
  answerClientError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), socket, quiet, 'test');
  assert.equal(socket.destroyed, true);
  assert.equal(written, false);
});
