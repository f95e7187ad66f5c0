// The words Go's encoding/json uses for a request body that is not JSON, so a client sees dockerd's
// answers ("invalid character 'i' looking for beginning of object key string", "unexpected EOF")
// and not JavaScript's parser text. A byte-at-a-time state machine after Go's scanner, over the
// first JSON value as json.Decoder reads it: iterative, with the nesting held in one bounded stack.
// Only the refusal path runs it (JSON.parse accepts what Go accepts, and is faster).

/** Go's scanner refuses values nested deeper than this ("exceeded max depth"). */
export const GO_MAX_DEPTH = 10_000;

/** What json.Decoder.Decode makes of the first value of a text. */
export type GoScan =
  /** A complete first value ending just before byte `end`. */
  | { kind: 'value'; end: number }
  /** Nothing but white space: io.EOF. */
  | { kind: 'eof' }
  /** The text ends inside the value: io.ErrUnexpectedEOF. */
  | { kind: 'unexpected-eof' }
  /** A syntax error, in Go's words. */
  | { kind: 'syntax'; message: string };

const enum S {
  BeginValue,
  BeginValueOrEmpty,
  BeginStringOrEmpty,
  BeginString,
  EndValue,
  InString,
  InStringEsc,
  U1,
  U2,
  U3,
  U4,
  Neg,
  Digits1,
  Zero,
  Dot,
  Dot0,
  E,
  ESign,
  E0,
  Literal,
}

const enum P {
  ObjectKey,
  ObjectValue,
  ArrayValue,
}

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

const ESCAPES: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 0x5c: '\\\\' };

/** A byte as Go's quoteChar shows it: 'x', '\n', '\x00', '\'', '"', or \u00XX for the unprintable. */
export function goQuoteChar(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === 0x22) return `'"'`;
  const esc = ESCAPES[c];
  if (esc) return `'${esc}'`;
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, '0')}'`;
  // A byte of 0x80 and up is shown as the rune of that number (Go converts the byte to a rune).
  if ((c >= 0x80 && c <= 0xa0) || c === 0xad) return `'\\u${c.toString(16).padStart(4, '0')}'`;
  return `'${String.fromCharCode(c)}'`;
}

/** Literal keywords: the bytes still expected after the first one. */
const LITERALS: Record<number, string> = { 0x74: 'true', 0x66: 'false', 0x6e: 'null' };

/** Scans the first JSON value of `bytes` the way json.Decoder does, with Go's error words. */
export function scanGoJson(bytes: Uint8Array, maxDepth = GO_MAX_DEPTH): GoScan {
  const stack: P[] = [];
  let state = S.BeginValue;
  let literal = ''; // the keyword being read
  let literalAt = 0; // the index in it of the next byte expected
  let nonSpace = false;
  const bad = (c: number, context: string): GoScan => ({ kind: 'syntax', message: `invalid character ${goQuoteChar(c)} ${context}` });

  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (!isSpace(c)) nonSpace = true;
    // Each byte may pass through several states (the end of a number is seen on the next byte):
    // the loop below re-dispatches it without recursion.
    for (;;) {
      switch (state) {
        case S.BeginValueOrEmpty:
          if (isSpace(c)) break;
          if (c === 0x5d) {
            state = S.EndValue;
            continue;
          }
          state = S.BeginValue;
          continue;
        case S.BeginValue:
          if (isSpace(c)) break;
          if (c === 0x7b || c === 0x5b) {
            if (stack.length >= maxDepth) return { kind: 'syntax', message: 'exceeded max depth' };
            stack.push(c === 0x7b ? P.ObjectKey : P.ArrayValue);
            state = c === 0x7b ? S.BeginStringOrEmpty : S.BeginValueOrEmpty;
          } else if (c === 0x22) state = S.InString;
          else if (c === 0x2d) state = S.Neg;
          else if (c === 0x30) state = S.Zero;
          else if (c >= 0x31 && c <= 0x39) state = S.Digits1;
          else if (LITERALS[c]) {
            literal = LITERALS[c]!;
            literalAt = 1;
            state = S.Literal;
          } else return bad(c, 'looking for beginning of value');
          break;
        case S.BeginStringOrEmpty:
          if (isSpace(c)) break;
          if (c === 0x7d) {
            stack[stack.length - 1] = P.ObjectValue;
            state = S.EndValue;
            continue;
          }
          state = S.BeginString;
          continue;
        case S.BeginString:
          if (isSpace(c)) break;
          if (c !== 0x22) return bad(c, 'looking for beginning of object key string');
          state = S.InString;
          break;
        case S.EndValue: {
          if (stack.length === 0) return { kind: 'value', end: i }; // the top-level value ended before c
          if (isSpace(c)) break;
          const top = stack[stack.length - 1]!;
          if (top === P.ObjectKey) {
            if (c !== 0x3a) return bad(c, 'after object key');
            stack[stack.length - 1] = P.ObjectValue;
            state = S.BeginValue;
          } else if (top === P.ObjectValue) {
            if (c === 0x2c) {
              stack[stack.length - 1] = P.ObjectKey;
              state = S.BeginString;
            } else if (c === 0x7d) {
              stack.pop();
              if (stack.length === 0) return { kind: 'value', end: i + 1 };
            } else return bad(c, 'after object key:value pair');
          } else if (c === 0x2c) state = S.BeginValue;
          else if (c === 0x5d) {
            stack.pop();
            if (stack.length === 0) return { kind: 'value', end: i + 1 };
          } else return bad(c, 'after array element');
          break;
        }
        case S.InString:
          if (c === 0x22) state = S.EndValue;
          else if (c === 0x5c) state = S.InStringEsc;
          else if (c < 0x20) return bad(c, 'in string literal');
          break;
        case S.InStringEsc:
          if (c === 0x75) state = S.U1;
          else if ('bfnrt\\/"'.includes(String.fromCharCode(c))) state = S.InString;
          else return bad(c, 'in string escape code');
          break;
        case S.U1:
        case S.U2:
        case S.U3:
        case S.U4:
          if (!isHex(c)) return bad(c, 'in \\u hexadecimal character escape');
          state = state === S.U4 ? S.InString : ((state + 1) as S);
          break;
        case S.Neg:
          if (c === 0x30) state = S.Zero;
          else if (c >= 0x31 && c <= 0x39) state = S.Digits1;
          else return bad(c, 'in numeric literal');
          break;
        case S.Digits1:
          if (isDigit(c)) break;
          state = S.Zero;
          continue;
        case S.Zero:
          if (c === 0x2e) state = S.Dot;
          else if (c === 0x65 || c === 0x45) state = S.E;
          else {
            state = S.EndValue;
            continue;
          }
          break;
        case S.Dot:
          if (!isDigit(c)) return bad(c, 'after decimal point in numeric literal');
          state = S.Dot0;
          break;
        case S.Dot0:
          if (isDigit(c)) break;
          if (c === 0x65 || c === 0x45) state = S.E;
          else {
            state = S.EndValue;
            continue;
          }
          break;
        case S.E:
          if (c === 0x2b || c === 0x2d) {
            state = S.ESign;
            break;
          }
          state = S.ESign;
          continue;
        case S.ESign:
          if (!isDigit(c)) return bad(c, 'in exponent of numeric literal');
          state = S.E0;
          break;
        case S.E0:
          if (isDigit(c)) break;
          state = S.EndValue;
          continue;
        case S.Literal: {
          const want = literal.charCodeAt(literalAt);
          if (c !== want) return bad(c, `in literal ${literal} (expecting ${goQuoteChar(want)})`);
          if (++literalAt === literal.length) state = S.EndValue;
          break;
        }
      }
      break;
    }
  }
  // At the end of the text: a value that a following space would end is complete.
  if (stack.length === 0 && (state === S.EndValue || state === S.Digits1 || state === S.Zero || state === S.Dot0 || state === S.E0)) {
    return { kind: 'value', end: bytes.length };
  }
  return nonSpace ? { kind: 'unexpected-eof' } : { kind: 'eof' };
}

/**
 * Why json.Decoder refuses a request body as dockerd reads it (Decode, then More), in dockerd's
 * words without its "invalid JSON: " prefix; undefined when Go reads its first value and nothing
 * but white space or a closing bracket follows. `end` is where that value ends.
 */
export function goDecodeProblem(bytes: Uint8Array): { message: string; afterValue?: boolean } | { end: number } {
  const scan = scanGoJson(bytes);
  switch (scan.kind) {
    case 'eof':
      return { message: 'EOF' };
    case 'unexpected-eof':
      return { message: 'unexpected EOF' };
    case 'syntax':
      return { message: scan.message };
  }
  let i = scan.end;
  while (i < bytes.length && isSpace(bytes[i]!)) i++;
  // Decoder.More: more content unless the next byte closes a (non-existent) container.
  if (i < bytes.length && bytes[i] !== 0x5d && bytes[i] !== 0x7d) return { message: 'unexpected content after JSON', afterValue: true };
  return { end: scan.end };
}

/**
 * Why json.Unmarshal refuses a text (the whole text must be one value), in Go's words; undefined
 * when it is valid JSON. Unmarshal's words differ from the Decoder's at the end of input
 * ("unexpected end of JSON input") and after the value ("after top-level value").
 */
export function goUnmarshalError(text: string | Uint8Array): string | undefined {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const scan = scanGoJson(bytes);
  if (scan.kind === 'syntax') return scan.message;
  if (scan.kind !== 'value') return 'unexpected end of JSON input';
  for (let i = scan.end; i < bytes.length; i++) {
    if (!isSpace(bytes[i]!)) return `invalid character ${goQuoteChar(bytes[i]!)} after top-level value`;
  }
  return undefined;
}
