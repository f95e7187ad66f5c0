// The fluentd driver: each entry as a Forward-protocol message, the MessagePack array
// [tag, time, record, options] fluent-logger-golang writes (time in whole seconds, or an EventTime
// with fluentd-sub-second-precision), the record dockerd builds: container_id, container_name (with
// its leading slash), source, log, the extra attributes, and partial_* fields for pieces of long
// lines. Over TCP (default 127.0.0.1:24224), TLS (tls://) or a unix socket. Without fluentd-async
// the receiver must be there at start (dockerd dials in the driver's constructor); with it,
// messages wait in a buffer of fluentd-buffer-limit messages until the receiver comes, retried
// every fluentd-retry-wait (doubling up to a minute), dropped after fluentd-max-retries failed
// attempts. fluentd-request-ack sends a chunk id in the options and resends, on the next
// connection, what the receiver did not acknowledge; with fluentd-read-timeout, an ack that does
// not come within it drops the connection (fluent-logger-golang's read deadline on the ack), and so
// does a write the kernel has not taken within fluentd-write-timeout (its write deadline: what was
// not taken is sent again on the next connection). fluentd-async-reconnect-interval: in async mode
// a write on a connection older than it first replaces the connection.

import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { extraAttrs, logTag } from './attrs.ts';
import { RemoteLogDriver, type RemoteFactoryOptions, type RemoteRecord } from './driver.ts';
import { decodeMsgpack, MsgpackShortRead, MsgpackWriter, type MsgpackValue } from './msgpack.ts';
import { StreamTransport } from './transport.ts';
import { fluentdConfig } from './validate.ts';

/** Bytes of unacknowledged messages kept for resending (fluentd-request-ack). */
const UNACKED_LIMIT = 8 << 20;

/** Reads the receiver's ack maps ({"ack": id}) off the connection. */
class AckReader {
  private buf: Buffer = Buffer.alloc(0);
  constructor(private readonly onAck: (id: string) => void) {}
  push(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    for (;;) {
      let v: MsgpackValue;
      let off: number;
      try {
        [v, off] = decodeMsgpack(this.buf);
      } catch (err) {
        if (!(err instanceof MsgpackShortRead)) this.buf = Buffer.alloc(0); // not msgpack: nothing to keep
        return;
      }
      this.buf = this.buf.subarray(off);
      const isMap = v !== null && typeof v === 'object' && !Buffer.isBuffer(v) && !Array.isArray(v);
      const ack = isMap ? (v as Record<string, MsgpackValue>)['ack'] : undefined;
      if (typeof ack === 'string') this.onAck(ack);
    }
  }
  reset(): void {
    this.buf = Buffer.alloc(0);
  }
}

/** fluent-logger-golang's longest wait between retries. */
const MAX_RETRY_WAIT_MS = 60_000;

export function fluentdMessage(
  rec: RemoteRecord,
  o: { tag: string; id: string; name: string; extra: [string, string][]; subSecond: boolean },
  chunk?: string,
): Buffer {
  const w = new MsgpackWriter();
  w.arrayHeader(4).string(o.tag);
  if (o.subSecond) w.eventTime(rec.timeNano);
  else w.int(Number(rec.timeNano / 1_000_000_000n));
  // dockerd's record; an extra attribute of the same name replaces a field (maps.Copy)
  const fields: [string, string | Buffer][] = [
    ['container_id', o.id],
    ['container_name', o.name],
    ['source', rec.stream],
    ['log', rec.line],
  ];
  for (const [k, v] of o.extra) {
    const at = fields.findIndex((f) => f[0] === k);
    if (at >= 0) fields[at]![1] = v;
    else fields.push([k, v]);
  }
  const p = rec.partial;
  if (p)
    fields.push(
      ['partial_message', 'true'],
      ['partial_id', p.id],
      ['partial_ordinal', String(p.ordinal)],
      ['partial_last', String(p.last)],
    );
  w.mapHeader(fields.length);
  for (const [k, v] of fields) w.string(k)[typeof v === 'string' ? 'string' : 'bytesAsString'](v as string & Buffer);
  if (chunk === undefined) return w.mapHeader(0).toBuffer();
  return w.mapHeader(1).string('chunk').string(chunk).toBuffer();
}

export function createFluentdDriver(o: RemoteFactoryOptions): RemoteLogDriver {
  const cfg = fluentdConfig(o.options);
  const debug = o.onDebug ?? (() => {});
  // fluent-logger-golang reconnects on that interval in its async loop only; said once, not silent.
  if (cfg.reconnectIntervalMs && !cfg.async)
    debug('fluentd: fluentd-async-reconnect-interval applies with fluentd-async=true only (as in dockerd)');
  const fmt = {
    tag: logTag(o.containerId, o.options, o.attrs),
    id: o.containerId,
    name: `/${o.attrs['name'] ?? ''}`,
    extra: Object.entries(extraAttrs(o.options, o.attrs)),
    subSecond: cfg.subSecond,
  };
  const tls = cfg.tls ? (isIP(cfg.host) ? {} : { servername: cfg.host }) : undefined;
  // fluentd-request-ack: each message carries a chunk id and is kept until the receiver answers
  // {"ack": id}; what a lost connection left unacknowledged is sent again first on the next one.
  const unacked = new Map<string, Buffer>();
  let unackedBytes = 0;
  // fluentd-read-timeout: the oldest unacknowledged message waits at most this long for its ack.
  let ackTimer: NodeJS.Timeout | undefined;
  const armAckTimer = (restart: boolean) => {
    if (!cfg.readTimeoutMs || (ackTimer && !restart)) return;
    clearTimeout(ackTimer);
    ackTimer = undefined;
    if (!unacked.size) return;
    ackTimer = setTimeout(() => {
      ackTimer = undefined;
      if (unacked.size) transport.drop(new Error(`no ack within ${cfg.readTimeoutMs}ms for ${unacked.size} messages: reconnecting`));
    }, cfg.readTimeoutMs);
    ackTimer.unref();
  };
  const acks = new AckReader((id) => {
    const m = unacked.get(id);
    if (m) (unacked.delete(id), (unackedBytes -= m.length));
    armAckTimer(true);
  });
  const transport = new StreamTransport(cfg.path ? { path: cfg.path } : { host: cfg.host, port: cfg.port, tls }, {
    bufferLimit: cfg.async ? 256 << 20 : 8 << 20,
    maxPendingRecords: cfg.async ? cfg.bufferLimit : undefined,
    retryDelayMs: Math.max(cfg.retryWaitMs, 1),
    maxDelayMs: MAX_RETRY_WAIT_MS,
    maxRetries: cfg.maxRetries,
    failStart: !cfg.async,
    dialTimeoutMs: 3000, // fluent-logger-golang's dial timeout
    onError: (err) => debug(`fluentd: ${err.message}`),
    onData: cfg.requestAck ? (d) => acks.push(d) : undefined,
    resend: cfg.requestAck ? () => (acks.reset(), armAckTimer(true), [...unacked.values()]) : undefined,
    writeTimeoutMs: cfg.writeTimeoutMs || undefined,
    rotateAfterMs: cfg.async && cfg.reconnectIntervalMs ? cfg.reconnectIntervalMs : undefined,
  });
  const where = cfg.path ? `unix ${cfg.path}` : `${cfg.tls ? 'tls' : 'tcp'} ${cfg.host}:${cfg.port}`;
  return new RemoteLogDriver({
    name: 'fluentd',
    encode: (rec) => {
      if (!cfg.requestAck) return [fluentdMessage(rec, fmt)];
      const id = randomBytes(16).toString('base64');
      const msg = fluentdMessage(rec, fmt, id);
      unacked.set(id, msg);
      unackedBytes += msg.length;
      // a receiver that never answers: the oldest are given up rather than kept without bound
      for (const [old, m] of unacked) {
        if (unackedBytes <= UNACKED_LIMIT) break;
        unacked.delete(old);
        unackedBytes -= m.length;
      }
      armAckTimer(false);
      return [msg];
    },
    transportHolds: !cfg.async,
    transport,
    options: o.options,
    cachePath: join(o.dir, 'container-cached.log'),
    onDebug: debug,
    onError: o.onError,
    startError: (err) => `dial ${where}: ${err.message}`,
  });
}
