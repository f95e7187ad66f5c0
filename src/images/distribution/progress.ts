import type { JsonMessage, ProgressSink } from '../../types/distribution.ts';
// The JSON progress stream of pull and push, one object per line, in the shape and key order the
// docker CLI renders (status, progressDetail, progress, id, errorDetail, error, aux). The `progress`
// text is what dockerd renders for a 200-column terminal: a 50-cell bar plus "current/total" in
// decimal units with four significant digits.

const UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];

/** Decimal size with four significant digits, trailing zeros dropped: 49.15kB, 821kB, 2MB. */
export function humanSize(bytes: number): string {
  let size = bytes;
  let i = 0;
  while (size >= 1000 && i < UNITS.length - 1) {
    size /= 1000;
    i++;
  }
  return `${Number(size.toPrecision(4))}${UNITS[i]}`;
}

/** The `progress` string: "[=====>      ]  1.379MB/4.335MB"; empty when there is nothing to show. */
export function renderProgress(current: number, total: number): string {
  if (current <= 0 && total <= 0) return '';
  if (total <= 0) return humanSize(current).padStart(8);
  const filled = Math.min(50, Math.floor(Math.floor((current / total) * 100) / 2));
  const bar = `[${'='.repeat(filled)}>${' '.repeat(50 - filled)}] `;
  const numbers = current > total ? humanSize(current).padStart(8) : `${humanSize(current).padStart(8)}/${humanSize(total)}`;
  return bar + numbers;
}

/** A status line for one item (layer): {"status":…,"progressDetail":{},"id":…}. */
export function itemStatus(id: string, status: string): JsonMessage {
  return { status, progressDetail: {}, id };
}

export function itemProgress(id: string, status: string, current: number, total: number): JsonMessage {
  return { status, progressDetail: { current, total }, progress: renderProgress(current, total), id };
}

export function errorMessage(message: string): JsonMessage {
  return { errorDetail: { message }, error: message };
}

/** Serialises with the fixed key order (JSON.stringify keeps insertion order). */
export function encodeMessage(m: JsonMessage): string {
  const o: Record<string, unknown> = {};
  if (m.status !== undefined) o.status = m.status;
  if (m.progressDetail !== undefined) o.progressDetail = m.progressDetail;
  if (m.progress) o.progress = m.progress;
  if (m.id) o.id = m.id;
  if (m.errorDetail) o.errorDetail = m.errorDetail;
  if (m.error !== undefined) o.error = m.error;
  if (m.aux !== undefined) o.aux = m.aux;
  return JSON.stringify(o) + '\r\n';
}

/**
 * Rate-limits byte-progress updates per item (one every `intervalMs`, plus the final one) so a fast
 * transfer does not flood the client with thousands of lines.
 */
export class ProgressThrottle {
  private last = 0;

  constructor(
    private readonly sink: ProgressSink,
    private readonly id: string,
    private readonly status: string,
    private readonly intervalMs = 100,
  ) {}

  update(current: number, total: number, force = false): void {
    const now = Date.now();
    if (!force && now - this.last < this.intervalMs) return;
    this.last = now;
    this.sink(itemProgress(this.id, this.status, current, total));
  }
}

/** dockerd's short ID of a digest: the first 12 hex digits. */
export function shortId(digest: string): string {
  return digest.replace(/^[a-z0-9]+:/, '').slice(0, 12);
}
