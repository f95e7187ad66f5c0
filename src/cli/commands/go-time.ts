// Go's time.Time.Format for the times of inspect templates (`{{.CreatedAt.Format "2006-01-02"}}`):
// the layout's elements of the reference time Mon Jan 2 15:04:05 MST 2006, taken longest first as
// Go's layout reader takes them; the rest of the layout is copied. Times come from the daemon in
// RFC 3339; one in UTC prints its zone as Go's UTC location does (MST → UTC, Z07:00 → Z).

/** The parts of an RFC 3339 time: its numbers, its nanoseconds and its offset in minutes. */
export interface TimeParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  nanos: number;
  /** Minutes east of UTC; `utc` when the text said Z. */
  offset: number;
  utc: boolean;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** The layout elements, longest first where one is the prefix of another. */
// prettier-ignore
const ELEMENTS = [
  'January', 'Jan', 'Monday', 'Mon', 'MST',
  'Z07:00:00', '-07:00:00', 'Z070000', '-070000', 'Z07:00', '-07:00', 'Z0700', '-0700', 'Z07', '-07',
  '2006', '002', '01', '02', '03', '04', '05', '06', '_2', '15', 'PM', 'pm', '1', '2', '3', '4', '5',
];

function weekday(t: TimeParts): number {
  const d = new Date(0);
  d.setUTCFullYear(t.year, t.month - 1, t.day);
  return d.getUTCDay();
}

function dayOfYear(t: TimeParts): number {
  const start = new Date(0);
  start.setUTCFullYear(t.year, 0, 1);
  const d = new Date(0);
  d.setUTCFullYear(t.year, t.month - 1, t.day);
  return Math.round((d.getTime() - start.getTime()) / 86_400_000) + 1;
}

function zone(t: TimeParts, element: string): string {
  if (t.utc && element.startsWith('Z')) return 'Z';
  const sign = t.offset < 0 ? '-' : '+';
  const hh = pad(Math.floor(Math.abs(t.offset) / 60), 2);
  const mm = pad(Math.abs(t.offset) % 60, 2);
  const shape = element.replace(/^Z/, '-');
  if (shape === '-07') return `${sign}${hh}`;
  if (shape === '-0700') return `${sign}${hh}${mm}`;
  if (shape === '-07:00') return `${sign}${hh}:${mm}`;
  if (shape === '-070000') return `${sign}${hh}${mm}00`;
  return `${sign}${hh}:${mm}:00`;
}

function element(t: TimeParts, e: string): string {
  const h12 = t.hour % 12 === 0 ? 12 : t.hour % 12;
  switch (e) {
    case 'January':
      return MONTHS[t.month - 1]!;
    case 'Jan':
      return MONTHS[t.month - 1]!.slice(0, 3);
    case 'Monday':
      return DAYS[weekday(t)]!;
    case 'Mon':
      return DAYS[weekday(t)]!.slice(0, 3);
    case 'MST':
      // A fixed offset without a name prints as the offset, as Go's FixedZone("", …) does.
      return t.utc ? 'UTC' : zone(t, '-0700');
    case '2006':
      return pad(t.year, 4);
    case '06':
      return pad(t.year % 100, 2);
    case '01':
      return pad(t.month, 2);
    case '1':
      return String(t.month);
    case '02':
      return pad(t.day, 2);
    case '_2':
      return String(t.day).padStart(2, ' ');
    case '2':
      return String(t.day);
    case '002':
      return pad(dayOfYear(t), 3);
    case '15':
      return pad(t.hour, 2);
    case '03':
      return pad(h12, 2);
    case '3':
      return String(h12);
    case '04':
      return pad(t.minute, 2);
    case '4':
      return String(t.minute);
    case '05':
      return pad(t.second, 2);
    case '5':
      return String(t.second);
    case 'PM':
      return t.hour >= 12 ? 'PM' : 'AM';
    case 'pm':
      return t.hour >= 12 ? 'pm' : 'am';
  }
  return zone(t, e);
}

/** time.Time.Format(layout). */
export function formatGoTime(t: TimeParts, layout: string): string {
  let out = '';
  let i = 0;
  while (i < layout.length) {
    // Fractional seconds: `.000` or `,000` keeps its digits, `.999` drops trailing zeros (and the dot when none are left).
    const frac = /^[.,](0+|9+)(?!\d)/.exec(layout.slice(i));
    if (frac) {
      const n = frac[1]!.length;
      const digits = pad(t.nanos, 9).slice(0, Math.min(n, 9));
      if (frac[1]![0] === '0') out += `${frac[0][0]}${digits}`;
      else {
        const trimmed = digits.replace(/0+$/, '');
        if (trimmed) out += `${frac[0][0]}${trimmed}`;
      }
      i += frac[0].length;
      continue;
    }
    const e = ELEMENTS.find((x) => layout.startsWith(x, i));
    if (e) {
      out += element(t, e);
      i += e.length;
    } else out += layout[i++];
  }
  return out;
}
