// Detach keys ("ctrl-p,ctrl-q"): parsing the docker notation into bytes, and the escape matcher that
// watches a TTY session's stdin for the sequence (the bytes of a partial match are held back and
// released when the match fails, so the process sees exactly what was typed). The daemon and the
// CLI parse them alike.

/** A key the notation does not have (the daemon answers it with a 400). */
export class DetachKeysError extends Error {}

export const DEFAULT_DETACH_KEYS = 'ctrl-p,ctrl-q';

const CTRL_SPECIALS: Record<string, number> = { '@': 0, '[': 27, '\\': 28, ']': 29, '^': 30, _: 31 };

/** "ctrl-p,ctrl-q" → [0x10, 0x11]; a key is one character or ctrl-<a-z @ [ \ ] ^ _>. */
export function parseDetachKeys(spec: string): Buffer {
  const out: number[] = [];
  for (const key of spec.split(',')) {
    const k = key.trim();
    if (k.length === 1) {
      out.push(k.charCodeAt(0));
      continue;
    }
    const m = /^ctrl-(.)$/i.exec(k);
    if (!m) throw new DetachKeysError(`Invalid detach keys (${spec}) provided: unknown key: ${k}`);
    const c = m[1]!.toLowerCase();
    if (c >= 'a' && c <= 'z') out.push(c.charCodeAt(0) - 96);
    else if (c in CTRL_SPECIALS) out.push(CTRL_SPECIALS[c]!);
    else throw new DetachKeysError(`Invalid detach keys (${spec}) provided: unknown character: '${m[1]}'`);
  }
  return Buffer.from(out);
}

/** Feeds stdin through; `push` returns the bytes to forward and whether the sequence was typed. */
export class EscapeMatcher {
  private matched = 0;
  constructor(private readonly keys: Buffer) {}

  push(chunk: Buffer): { forward: Buffer; detach: boolean } {
    if (this.keys.length === 0) return { forward: chunk, detach: false };
    const out: number[] = [];
    for (const b of chunk) {
      if (b === this.keys[this.matched]) {
        this.matched++;
        if (this.matched === this.keys.length) return { forward: Buffer.from(out), detach: true };
        continue;
      }
      // A broken partial match: release what was held, then retry this byte from the start.
      for (let i = 0; i < this.matched; i++) out.push(this.keys[i]!);
      this.matched = 0;
      if (b === this.keys[0]) {
        this.matched = 1;
        if (this.keys.length === 1) return { forward: Buffer.from(out), detach: true };
      } else {
        out.push(b);
      }
    }
    return { forward: Buffer.from(out), detach: false };
  }
}
