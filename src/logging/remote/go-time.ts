// Go's time layouts the syslog formats use, in the daemon's local time zone: time.Stamp
// ("Jan _2 15:04:05") and RFC 3339 with an optional microsecond fraction ("Z" for UTC, else ±hh:mm).

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const p2 = (n: number): string => String(n).padStart(2, '0');

/** time.Stamp: the day padded with a space. */
export function goTimeStamp(ms: number): string {
  const d = new Date(ms);
  return `${MONTHS[d.getMonth()]} ${String(d.getDate()).padStart(2, ' ')} ${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}`;
}

/** time.RFC3339 (whole seconds), or with `micros` the ".000000" layout. */
export function rfc3339Local(ms: number, micros?: number): string {
  const d = new Date(ms);
  const off = -d.getTimezoneOffset();
  const zone = off === 0 ? 'Z' : `${off > 0 ? '+' : '-'}${p2(Math.floor(Math.abs(off) / 60))}:${p2(Math.abs(off) % 60)}`;
  const frac = micros === undefined ? '' : `.${String(micros).padStart(6, '0')}`;
  return `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())}T${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}${frac}${zone}`;
}
