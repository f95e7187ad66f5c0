// The journald driver: each entry one datagram of journald's native protocol to
// /run/systemd/journal/socket (ENGINE_TEST_JOURNAL_SOCKET in tests), the fields dockerd sends:
// MESSAGE, PRIORITY (6 for stdout, 3 for stderr), CONTAINER_ID, CONTAINER_ID_FULL, CONTAINER_NAME,
// CONTAINER_TAG, IMAGE_NAME, SYSLOG_IDENTIFIER, SYSLOG_TIMESTAMP, CONTAINER_LOG_EPOCH and
// CONTAINER_LOG_ORDINAL, the partial-message fields, and the extra attributes under sanitized names.
// A field is `KEY=value\n`, or, when the value holds a newline, `KEY\n` + its length as a
// little-endian uint64 + the value + `\n`. `docker logs` reads the dual-logging cache, or with
// cache-disabled=true the journal itself, as dockerd (journal-reader.ts).

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { formatTimeNano } from '../../util/time.ts';
import { extraAttrs, logTag } from './attrs.ts';
import { RemoteLogDriver, type RemoteFactoryOptions, type RemoteRecord } from './driver.ts';
import { UnixgramTransport } from './unixgram.ts';
import { readJournal } from './journal-reader.ts';

export const JOURNAL_SOCKET = '/run/systemd/journal/socket';

export function journalSocket(): string {
  return process.env.ENGINE_TEST_JOURNAL_SOCKET || JOURNAL_SOCKET;
}

/** dockerd's sanitizeKeyMod: upper case, anything but A-Z and 0-9 becomes '_', leading '_' dropped. */
export function journalKey(s: string): string {
  let out = '';
  for (const ch of s) {
    let c = ch;
    if (c >= 'a' && c <= 'z') c = c.toUpperCase();
    else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) c = '_';
    if (out === '' && c === '_') continue;
    out += c;
  }
  return out;
}

/** One field in the native protocol's text or binary form. */
export function journalField(key: string, value: Buffer | string): Buffer {
  const v = typeof value === 'string' ? Buffer.from(value) : value;
  if (!v.includes(10)) return Buffer.concat([Buffer.from(`${key}=`), v, Buffer.from('\n')]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(v.length));
  return Buffer.concat([Buffer.from(`${key}\n`), len, v, Buffer.from('\n')]);
}

/** Decodes one datagram into its fields (for tests and diagnostics). */
export function parseJournalDatagram(d: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let off = 0;
  while (off < d.length) {
    const nl = d.indexOf(10, off);
    if (nl < 0) throw new Error('journal datagram: field without newline');
    const line = d.subarray(off, nl).toString();
    const eq = line.indexOf('=');
    if (eq >= 0) {
      out[line.slice(0, eq)] = line.slice(eq + 1);
      off = nl + 1;
    } else {
      const len = Number(d.readBigUInt64LE(nl + 1));
      out[line] = d.subarray(nl + 9, nl + 9 + len).toString();
      off = nl + 9 + len + 1;
    }
  }
  return out;
}

export function createJournaldDriver(o: RemoteFactoryOptions): RemoteLogDriver {
  const tag = logTag(o.containerId, o.options, o.attrs);
  const fixed: Record<string, string> = {
    CONTAINER_ID: o.containerId.slice(0, 12),
    CONTAINER_ID_FULL: o.containerId,
    CONTAINER_NAME: o.attrs['name'] ?? '',
    CONTAINER_TAG: tag,
    IMAGE_NAME: o.attrs['image'] ?? '',
    SYSLOG_IDENTIFIER: tag,
    CONTAINER_LOG_EPOCH: randomBytes(32).toString('hex'),
    ...extraAttrs(o.options, o.attrs, journalKey),
  };
  const fixedBytes = Buffer.concat(Object.entries(fixed).map(([k, v]) => journalField(k, v)));
  let ordinal = 0;
  const path = journalSocket();
  const debug = o.onDebug ?? (() => {});
  return new RemoteLogDriver({
    name: 'journald',
    encode: (rec: RemoteRecord) => {
      const parts = [journalField('MESSAGE', rec.line), journalField('PRIORITY', rec.stream === 'stderr' ? '3' : '6'), fixedBytes];
      parts.push(journalField('SYSLOG_TIMESTAMP', formatTimeNano(rec.timeNano)));
      const p = rec.partial;
      if (p) {
        parts.push(journalField('CONTAINER_PARTIAL_ID', p.id), journalField('CONTAINER_PARTIAL_ORDINAL', String(p.ordinal)));
        parts.push(journalField('CONTAINER_PARTIAL_LAST', String(p.last)));
        if (!p.last) parts.push(journalField('CONTAINER_PARTIAL_MESSAGE', 'true'));
      }
      parts.push(journalField('CONTAINER_LOG_ORDINAL', String(++ordinal)));
      return [Buffer.concat(parts)];
    },
    transport: new UnixgramTransport(path),
    // With cache-disabled=true: the journal, until the last entry this driver sent once it closed.
    read: (opts, signal, closed) =>
      readJournal(o.containerId, opts, signal, {
        closed,
        caughtUp: (f) => f['CONTAINER_LOG_EPOCH'] === fixed.CONTAINER_LOG_EPOCH && Number(f['CONTAINER_LOG_ORDINAL']) >= ordinal,
      }),
    options: o.options,
    cachePath: join(o.dir, 'container-cached.log'),
    onDebug: debug,
    onError: o.onError,
    startError: (err) => (existsSync(path) ? err.message : 'journald is not enabled on this host'),
  });
}
