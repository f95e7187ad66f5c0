// JSON.parse and JSON.stringify of megabytes without holding the event loop: the same results (and
// the same errors) as the native calls, built piece by piece with a turn for other requests every
// few milliseconds. One native call on a 4 MiB body or a record with 50 000 labels held the loop
// 30–60 ms; here no piece takes more than a few. Small values go to the native calls at once.
import { randomBytes } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';

/** A value whose text is at most this long is parsed by one native JSON.parse. */
const NATIVE_PARSE_BYTES = 64 * 1024;
/** Runs of small members or elements are parsed natively together, about this much text at a time. */
const CHUNK_BYTES = 32 * 1024;
/** Work done between two turns given to the event loop. */
const SLICE_MS = 6;
/** Containers nested deeper than this (a hostile body) are parsed natively: scans stay linear. */
const MAX_SLICED_DEPTH = 6;

/** Ends a slice when it has run long enough: the caller awaits it between pieces of work. */
class Slicer {
  private until = performance.now() + SLICE_MS;

  /** Whether the slice is over (checked synchronously: an await per entry would cost more than the entry). */
  due(): boolean {
    return performance.now() >= this.until;
  }

  async pause(): Promise<void> {
    await nextTurn();
    this.until = performance.now() + SLICE_MS;
  }
}

/** Thrown by the scanner on text that is not JSON: the native parse then says what is wrong. */
class NotJson extends Error {}

/**
 * JSON.parse(text), in slices. Invalid JSON throws JSON.parse's own error (the native parse runs
 * once more to give it, holding the loop only for bodies that are refused anyway).
 */
export async function parseJsonSliced(text: string): Promise<unknown> {
  if (text.length <= NATIVE_PARSE_BYTES) return JSON.parse(text);
  const p = new SlicedParser(text);
  try {
    return await p.parseAll();
  } catch (err) {
    if (!(err instanceof NotJson)) throw err;
    return JSON.parse(text); // throws the native error
  }
}

/** JSON's four whitespace characters. */
function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

class SlicedParser {
  private readonly slicer = new Slicer();

  constructor(private readonly text: string) {}

  async parseAll(): Promise<unknown> {
    const start = this.ws(0);
    let end = this.text.length;
    while (end > start && isWs(this.text.charCodeAt(end - 1))) end--;
    if (start >= end) throw new NotJson();
    if (this.skipValue(start) !== end) throw new NotJson();
    return this.value(start, end, 0);
  }

  /** The value whose text is exactly [start, end). */
  private async value(start: number, end: number, depth: number): Promise<unknown> {
    const c = this.text.charCodeAt(start);
    if (end - start <= NATIVE_PARSE_BYTES || depth >= MAX_SLICED_DEPTH || (c !== 0x7b && c !== 0x5b)) {
      return this.native(start, end);
    }
    return c === 0x7b ? this.object(start, end, depth) : this.array(start, end, depth);
  }

  private native(start: number, end: number, open = '', close = ''): unknown {
    try {
      return JSON.parse(open + this.text.slice(start, end) + close);
    } catch {
      throw new NotJson();
    }
  }

  private async object(start: number, end: number, depth: number): Promise<Record<string, unknown>> {
    const { text } = this;
    const out: Record<string, unknown> = {};
    let i = this.ws(start + 1);
    if (text.charCodeAt(i) === 0x7d) return this.closing(i, end, out);
    let run = -1; // start of the members not parsed yet
    let sep = -1; // the comma before this member
    for (;;) {
      const member = i;
      if (text.charCodeAt(i) !== 0x22) throw new NotJson();
      const keyEnd = this.skipString(i);
      i = this.ws(keyEnd);
      if (text.charCodeAt(i) !== 0x3a) throw new NotJson();
      const valueStart = this.ws(i + 1);
      const valueEnd = this.skipValue(valueStart);
      i = this.ws(valueEnd);
      if (valueEnd - valueStart > NATIVE_PARSE_BYTES) {
        if (run >= 0) mergeInto(out, this.native(run, sep, '{', '}') as Record<string, unknown>);
        run = -1;
        const key = this.native(member, keyEnd) as string;
        setOwn(out, key, await this.value(valueStart, valueEnd, depth + 1));
      } else if (run < 0) run = member;
      const c = text.charCodeAt(i);
      if (c === 0x7d) {
        if (run >= 0) mergeInto(out, this.native(run, i, '{', '}') as Record<string, unknown>);
        return this.closing(i, end, out);
      }
      if (c !== 0x2c) throw new NotJson();
      if (run >= 0 && i - run >= CHUNK_BYTES) {
        mergeInto(out, this.native(run, i, '{', '}') as Record<string, unknown>);
        run = -1;
      }
      sep = i;
      i = this.ws(i + 1);
      if (this.slicer.due()) await this.slicer.pause();
    }
  }

  private async array(start: number, end: number, depth: number): Promise<unknown[]> {
    const { text } = this;
    const out: unknown[] = [];
    let i = this.ws(start + 1);
    if (text.charCodeAt(i) === 0x5d) return this.closing(i, end, out);
    let run = -1;
    let sep = -1;
    for (;;) {
      const valueStart = i;
      const valueEnd = this.skipValue(valueStart);
      i = this.ws(valueEnd);
      if (valueEnd - valueStart > NATIVE_PARSE_BYTES) {
        if (run >= 0) pushAll(out, this.native(run, sep, '[', ']') as unknown[]);
        run = -1;
        out.push(await this.value(valueStart, valueEnd, depth + 1));
      } else if (run < 0) run = valueStart;
      const c = text.charCodeAt(i);
      if (c === 0x5d) {
        if (run >= 0) pushAll(out, this.native(run, i, '[', ']') as unknown[]);
        return this.closing(i, end, out);
      }
      if (c !== 0x2c) throw new NotJson();
      if (run >= 0 && i - run >= CHUNK_BYTES) {
        pushAll(out, this.native(run, i, '[', ']') as unknown[]);
        run = -1;
      }
      sep = i;
      i = this.ws(i + 1);
      if (this.slicer.due()) await this.slicer.pause();
    }
  }

  /** The closing bracket at i must be the last character of the value. */
  private closing<T>(i: number, end: number, out: T): T {
    if (i !== end - 1) throw new NotJson();
    return out;
  }

  private ws(i: number): number {
    const { text } = this;
    while (isWs(text.charCodeAt(i))) i++; // NaN past the end
    return i;
  }

  /** The index after the string starting (with its quote) at i. */
  private skipString(i: number): number {
    const { text } = this;
    if (text.charCodeAt(i) !== 0x22) throw new NotJson();
    let from = i + 1;
    for (;;) {
      const q = text.indexOf('"', from);
      if (q < 0) throw new NotJson();
      let b = q - 1;
      while (text.charCodeAt(b) === 0x5c) b--;
      if ((q - 1 - b) % 2 === 0) return q + 1;
      from = q + 1;
    }
  }

  /** The index after the value starting at i (its contents are checked later, by the native parse). */
  private skipValue(i: number): number {
    const { text } = this;
    const c = text.charCodeAt(i);
    if (c === 0x22) return this.skipString(i);
    if (c === 0x7b || c === 0x5b) {
      let depth = 0;
      for (let j = i; j < text.length;) {
        const d = text.charCodeAt(j);
        if (d === 0x22) {
          j = this.skipString(j);
          continue;
        }
        if (d === 0x7b || d === 0x5b) depth++;
        else if (d === 0x7d || d === 0x5d) {
          if (--depth === 0) return j + 1;
        }
        j++;
      }
      throw new NotJson();
    }
    let j = i;
    for (; j < text.length; j++) {
      const d = text.charCodeAt(j);
      if (d === 0x2c || d === 0x7d || d === 0x5d || isWs(d)) break;
    }
    if (j === i) throw new NotJson();
    return j;
  }
}

/** out[key] = value as JSON.parse defines it: a "__proto__" key is an own property, not the prototype. */
function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/** Later members win, an existing key keeps its place: JSON.parse's rules for repeated keys. */
function mergeInto(out: Record<string, unknown>, part: Record<string, unknown>): void {
  for (const key of Object.keys(part)) setOwn(out, key, part[key]);
}

function pushAll(out: unknown[], part: unknown[]): void {
  for (let i = 0; i < part.length; i++) out.push(part[i]);
}

/** Below this depth, containers are walked (a large map may be inside); deeper ones go natively. */
const MAX_STRINGIFY_DEPTH = 8;

/**
 * JSON.stringify(value), in slices: the same text (toJSON, skipped undefined members, null for
 * undefined elements; a cycle still throws, from the native call below the depth limit).
 */
export async function stringifyJsonSliced(value: unknown): Promise<string | undefined> {
  const s = new Stringifier();
  return (await s.write(value, 0)) ? s.text() : undefined;
}

/** Parts joined into one string once this many are pending: one join of them all took ~10 ms. */
const JOIN_PARTS = 4096;

class Stringifier {
  private readonly slicer = new Slicer();
  private readonly parts: string[] = [];
  private readonly joined: string[] = [];

  text(): string {
    this.joined.push(this.parts.join(''));
    return this.joined.join('');
  }

  /** Between two entries: joins what is pending now and then; true when the slice is over. */
  private between(): boolean {
    if (this.parts.length >= JOIN_PARTS) {
      this.joined.push(this.parts.join(''));
      this.parts.length = 0;
    }
    return this.slicer.due();
  }

  /** Appends the value's text; false (nothing appended) where JSON.stringify gives undefined. */
  async write(value: unknown, depth: number): Promise<boolean> {
    if (typeof value === 'string') return this.longString(value);
    if (!isPlainContainer(value) || depth >= MAX_STRINGIFY_DEPTH) return this.native(value);
    // Only containers and long strings are awaited: an await per leaf would cost more than the leaf.
    const child = (v: unknown): boolean | Promise<boolean> => (isSliced(v) ? this.write(v, depth + 1) : this.native(v));
    if (Array.isArray(value)) {
      this.parts.push('[');
      for (let i = 0; i < value.length;) {
        if (i > 0) this.parts.push(',');
        const v: unknown = value[i];
        if (isSliced(v)) {
          if (!(await child(v))) this.parts.push('null');
          i++;
        } else {
          // A run of primitives (an Env's strings) goes to one native call; objects one by one
          // (one with a toJSON may take long).
          let end = i + 1;
          if (isPrimitive(v)) while (end < value.length && end - i < ARRAY_RUN && isPrimitive(value[end]) && !isSliced(value[end])) end++;
          this.parts.push(JSON.stringify(end - i === value.length ? value : value.slice(i, end)).slice(1, -1));
          i = end;
        }
        if (this.between()) await this.slicer.pause();
      }
      this.parts.push(']');
      return true;
    }
    const obj = value as Record<string, unknown>;
    this.parts.push('{');
    let first = true;
    for (const key of Object.keys(obj)) {
      const at = this.parts.length;
      this.parts.push(first ? '' : ',', JSON.stringify(key), ':');
      const v = obj[key];
      if (isSliced(v) ? await child(v) : this.native(v)) first = false;
      else this.parts.length = at; // native() gave nothing: only the key was added since `at`
      if (this.between()) await this.slicer.pause();
    }
    this.parts.push('}');
    return true;
  }

  private native(value: unknown): boolean {
    const text = JSON.stringify(value);
    if (text === undefined) return false;
    this.parts.push(text);
    return true;
  }

  /** A string escaped a piece at a time; a piece never ends between the halves of a surrogate pair. */
  private async longString(value: string): Promise<boolean> {
    if (value.length <= LONG_STRING) return this.native(value);
    for (let at = 0; at < value.length;) {
      let end = Math.min(value.length, at + LONG_STRING);
      const last = value.charCodeAt(end - 1);
      if (end < value.length && last >= 0xd800 && last <= 0xdbff) end++;
      const piece = JSON.stringify(value.slice(at, end));
      this.parts.push(piece.slice(at === 0 ? 0 : 1, end === value.length ? piece.length : -1));
      at = end;
      if (this.between()) await this.slicer.pause();
    }
    return true;
  }
}

/** Array elements serialised together by one native call, at most. */
const ARRAY_RUN = 512;

/** Strings longer than this are escaped a piece at a time. */
const LONG_STRING = 256 * 1024;

/** Not an object: serialised at once, whatever it is (undefined and functions become null in arrays). */
function isPrimitive(v: unknown): boolean {
  return v === null || typeof v !== 'object';
}

/** What the stringifier walks in slices rather than handing to one native call. */
function isSliced(v: unknown): boolean {
  return (typeof v === 'string' && v.length > LONG_STRING) || isPlainContainer(v);
}

/** An array or a plain object without toJSON: what JSON.stringify serialises member by member. */
function isPlainContainer(v: unknown): v is object {
  if (v === null || typeof v !== 'object') return false;
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
  if (Array.isArray(v)) return true;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * JSON texts of objects that never change (a container's labels, its Config), made once (in
 * slices) and reused wherever the object is serialised again. The caller vouches for the object.
 */
const knownTexts = new WeakMap<object, string>();

export function rememberJsonText(value: object, text: string): void {
  knownTexts.set(value, text);
}

export function knownJsonText(value: object): string | undefined {
  return knownTexts.get(value);
}

/** Stands for a member in a serialisation; unguessable, so no other member can hold it. */
const MARK = `"spliced-${randomBytes(16).toString('hex')}"`;

/**
 * JSON.stringify(outer) where outer[key] serialises to `text`: the rest is serialised with a
 * marker in its place and the text spliced in (outer keeps its key order; key must be present).
 */
export function spliceJson(outer: object, key: string, text: string): string {
  const json = JSON.stringify({ ...outer, [key]: JSON.parse(MARK) as string });
  const at = json.indexOf(MARK);
  return json.slice(0, at) + text + json.slice(at + MARK.length);
}
