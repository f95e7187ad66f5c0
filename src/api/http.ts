// Request and response helpers shared by every route module.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { invalidParameter } from '../errors.ts';
import { goDecodeProblem } from '../util/go-json.ts';
import { parsePlatformSpec, PlatformSpecError, type PlatformSpec } from '../util/platform-spec.ts';
import { JsonText } from '../util/json-text.ts';
import { parseJsonSliced, stringifyJsonSliced } from '../util/json-sliced.ts';

/**
 * JSON bodies larger than this are refused (400); archives and tars are streamed, never buffered.
 * A body is parsed, checked, stored and copied into events in synchronous passes, each holding the
 * event loop in proportion to its size: at 16 MiB one pass took ~250 ms, at 4 MiB they stay within
 * tens of ms. No client sends JSON this large (an Env of 100 000 entries is under 3 MiB).
 */
export const MAX_JSON_BODY = 4 * 1024 * 1024;

/** Bodies read whole before the handler ran (authorization): the handler gets them from here. */
const consumedBodies = new WeakMap<IncomingMessage, Buffer>();

/** Records a body that was read to its end before the handler (the stream has nothing left). */
export function keepConsumedBody(req: IncomingMessage, body: Buffer): void {
  consumedBodies.set(req, body);
}

export async function readBody(req: IncomingMessage, limit = MAX_JSON_BODY): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) throw invalidParameter(`request body is too large (${declared} bytes, limit ${limit})`);
  const kept = consumedBodies.get(req);
  if (kept) {
    consumedBodies.delete(req);
    if (kept.length > limit) throw invalidParameter(`request body is too large (limit ${limit} bytes)`);
    return kept;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw invalidParameter(`request body is too large (limit ${limit} bytes)`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * Parses a JSON request body. An empty body gives `emptyValue` (dockerd accepts empty bodies on
 * several endpoints); anything that is not valid JSON is a 400 in the words of Go's json.Decoder,
 * as dockerd's ReadJSON answers ("invalid JSON: invalid character '}' looking for beginning of
 * object key string", "invalid JSON: unexpected EOF", "unexpected content after JSON").
 */
export async function readJson<T = unknown>(req: IncomingMessage, emptyValue?: T): Promise<T> {
  const body = await readBody(req);
  if (body.length === 0 && emptyValue !== undefined) return emptyValue;
  return (await parseBodyJson(body)) as T;
}

/** A request body's JSON value, refused (400) with Go's json.Decoder words when it is not JSON. */
export async function parseBodyJson(body: Buffer): Promise<unknown> {
  const text = body.toString('utf8');
  checkNesting(text);
  // Parsing megabytes in one call held the event loop 30–60 ms (a map of 50 000 labels): large
  // bodies are parsed in slices, with turns for other requests between them.
  try {
    return body.length > SLICED_ABOVE_BYTES ? await parseJsonSliced(text) : JSON.parse(text);
  } catch {
    // Go's scanner names the problem; a first value followed by `}` or `]` is what Go accepts.
    const problem = goDecodeProblem(body);
    if ('end' in problem) return JSON.parse(body.subarray(0, problem.end).toString('utf8'));
    if (problem.afterValue) throw invalidParameter(problem.message);
    if (problem.message === 'EOF') throw invalidParameter('invalid JSON: got EOF while reading request body');
    throw invalidParameter(`invalid JSON: ${problem.message}`);
  }
}

/** No API body comes near this; recursive code (copies, checks, JSON.stringify) overflows far deeper. */
export const MAX_JSON_DEPTH = 512;

/**
 * Refuses a JSON text nested deeper than MAX_JSON_DEPTH (a 400 before any code walks it: a body of
 * 100 000 nested arrays once reached a service spec's checks and overflowed the stack, a 500).
 * One pass over the characters, skipping strings.
 */
export function checkNesting(text: string): void {
  let depth = 0;
  let field = ''; // the top-level field being read, to name in the refusal
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // a string: to its closing quote, past escapes
      const start = i + 1;
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
      if (depth === 1 && /^\s*:/.test(text.slice(i + 1, i + 20))) field = text.slice(start, i);
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) {
        throw invalidParameter(`invalid JSON: ${field ? `${field}: ` : ''}nested more than ${MAX_JSON_DEPTH} levels deep`);
      }
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
}

/** Bodies above this size are parsed in slices. */
const SLICED_ABOVE_BYTES = 256 * 1024;

/** Lets queued I/O callbacks (other requests) run before going on. */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Like readJson, but requires a JSON object (not an array, string or null). `goType` names the Go
 * type dockerd decodes the body into, for Go's words on a value of another JSON type.
 */
export async function readJsonObject<T extends object = Record<string, unknown>>(
  req: IncomingMessage,
  allowEmpty = false,
  goType?: string,
): Promise<T> {
  const value = await readJson<unknown>(req, allowEmpty ? {} : undefined);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    if (!goType) throw invalidParameter('invalid JSON: expected an object');
    const jt = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value === 'boolean' ? 'bool' : typeof value;
    throw invalidParameter(`invalid JSON: json: cannot unmarshal ${jt} into Go value of type ${goType}`);
  }
  return value as T;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Like sendJson for an answer that may be large (a record with 50 000 labels or a 4 MiB string:
 * one JSON.stringify held the loop 15–50 ms): serialised in slices, with turns for other requests.
 */
export async function sendJsonSliced(res: ServerResponse, status: number, body: unknown): Promise<void> {
  const bytes = Buffer.from((await stringifyJsonSliced(body)) ?? '');
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': bytes.length });
  res.end(bytes);
}

/**
 * Like sendJson for a list that may be large (every container with its labels). Entries that come
 * serialised already (JsonText, docker ps) are copied into the body as they are; others are
 * serialised in slices (stringifyJsonSliced), with turns for other requests between them.
 */
export async function sendJsonList(res: ServerResponse, status: number, items: readonly unknown[]): Promise<void> {
  let body: Buffer;
  if (items.length > 0 && items.every((x) => x instanceof JsonText)) {
    const parts: Buffer[] = [];
    for (const x of items as readonly JsonText[]) parts.push(parts.length ? COMMA : OPEN, x.bytes);
    parts.push(CLOSE);
    body = Buffer.concat(parts);
  } else {
    // Serialised in slices: one entry may be large (an image with 50 000 labels).
    body = Buffer.from((await stringifyJsonSliced(items)) ?? '[]');
  }
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': body.length });
  res.end(body);
}

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

export function sendNoContent(res: ServerResponse, status = 204): void {
  res.writeHead(status);
  res.end();
}

/** Query-string helpers with dockerd's parsing rules. */
export class Query {
  constructor(readonly params: URLSearchParams) {}

  has(name: string): boolean {
    return this.params.has(name);
  }

  string(name: string): string | undefined {
    return this.params.get(name) ?? undefined;
  }

  strings(name: string): string[] {
    return this.params.getAll(name);
  }

  /** dockerd's BoolValue: absent, "", "0", "no", "false", "none" are false; anything else true. */
  bool(name: string, dflt = false): boolean {
    const v = this.params.get(name);
    if (v === null) return dflt;
    const s = v.trim().toLowerCase();
    return !(s === '' || s === '0' || s === 'no' || s === 'false' || s === 'none');
  }

  /** An integer as Go's strconv.Atoi reads it (digits with an optional sign), refused in its words. */
  int(name: string, dflt?: number): number | undefined {
    const v = this.params.get(name);
    if (v === null || v === '') return dflt;
    const n = atoi(v);
    if (typeof n === 'string') throw invalidParameter(`strconv.Atoi: parsing ${JSON.stringify(v)}: ${n}`);
    return n;
  }

  /**
   * dockerd's Uint32Value (resize's h and w): required, digits only; its refusal is "invalid
   * syntax" or "value out of range" (a negative number is out of range).
   */
  uint32(name: string): number | string {
    let v = this.params.get(name) ?? '';
    const neg = v.startsWith('-');
    if (neg) v = v.slice(1);
    if (!/^[0-9]+$/.test(v)) return 'invalid syntax';
    const n = Number(v);
    if (neg || n > 0xffffffff) return 'value out of range';
    return n;
  }

  /** The `filters` parameter: JSON object of name → list of values (or the legacy name → {value: true}). */
  filters(): Map<string, string[]> {
    const raw = this.params.get('filters');
    const out = new Map<string, string[]>();
    if (!raw) return out;
    // dockerd reads the name → {value: true} form, else the legacy name → [values] form, and
    // answers only "invalid filter" when neither fits.
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw invalidParameter('invalid filter');
    }
    if (parsed === null) return out;
    if (typeof parsed !== 'object' || Array.isArray(parsed)) throw invalidParameter('invalid filter');
    const entries = Object.entries(parsed as Record<string, unknown>);
    const legacy = entries.every(([, v]) => v === null || (Array.isArray(v) && v.every((x) => typeof x === 'string')));
    const current = entries.every(
      ([, v]) =>
        v === null ||
        (!!v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((b) => typeof b === 'boolean' || b === null)),
    );
    if (!legacy && !current) throw invalidParameter('invalid filter');
    for (const [k, v] of entries) {
      if (v === null) out.set(k, []);
      else if (Array.isArray(v)) out.set(k, v as string[]);
      else
        out.set(
          k,
          Object.entries(v as Record<string, unknown>)
            .filter(([, on]) => on)
            .map(([val]) => val),
        );
    }
    return out;
  }
}

/** Go's strconv.Atoi: the number, or why it is refused ("invalid syntax", "value out of range"). */
export function atoi(v: string): number | string {
  if (!/^[+-]?[0-9]+$/.test(v)) return 'invalid syntax';
  const n = BigInt(v);
  if (n > 9223372036854775807n || n < -9223372036854775808n) return 'value out of range';
  return Number(n);
}

/** Bodies larger than this are not read to their end before an error: the connection is cut. */
const MAX_DISCARDED_BODY = 64 * 1024 * 1024;
const DISCARD_GRACE_MS = 5000;

/** Reads and drops what is left of a request body (bounded in size and time). */
/** A `platform` query parameter read as dockerd reads it (containerd's platforms.Parse); its refusal is a 400. */
export function platformParam(q: Query): PlatformSpec | undefined {
  const v = q.string('platform');
  if (!v) return undefined;
  try {
    return parsePlatformSpec(v);
  } catch (err) {
    if (err instanceof PlatformSpecError) throw invalidParameter(err.message);
    throw err;
  }
}

export function discardUnreadBody(req: IncomingMessage): Promise<void> {
  if (req.complete || req.readableEnded || req.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let size = 0;
    const done = () => {
      clearTimeout(timer);
      req.off('data', onData).off('end', done).off('close', done).off('error', done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_DISCARDED_BODY) done();
    };
    const timer = setTimeout(done, DISCARD_GRACE_MS);
    req.on('data', onData).once('end', done).once('close', done).once('error', done);
    req.resume();
  });
}
