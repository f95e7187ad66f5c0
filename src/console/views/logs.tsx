// Logs that follow live: GET /containers/{id}/logs?follow=1 read as it streams (framed without a
// TTY, raw with one), stdout and stderr coloured apart, search, timestamps on or off, follow
// (keep the end in view) on or off. The last MAX_LINES lines are kept.
import { useEffect, useRef, useState } from 'preact/hooks';
import { streamBytes } from '../api.ts';
import { FrameDemux, LineSplitter } from '../streams.ts';
import { ErrorLine } from '../ui.tsx';

const MAX_LINES = 5000;
interface Line {
  n: number;
  stream: string;
  time: string;
  text: string;
}

export function LogsTab({ id, tty }: { id: string; tty: boolean }) {
  const [lines, setLines] = useState<Line[]>([]);
  const [search, setSearch] = useState('');
  const [timestamps, setTimestamps] = useState(false);
  const [follow, setFollow] = useState(true);
  const [error, setError] = useState('');
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const abort = new AbortController();
    const demux = new FrameDemux();
    const split = new LineSplitter();
    const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder(), stdin: new TextDecoder() };
    let n = 0;
    let pending: Line[] = [];
    let scheduled = false;
    const flush = () => {
      scheduled = false;
      const add = pending;
      pending = [];
      setLines((old) => {
        const all = old.concat(add);
        return all.length > MAX_LINES ? all.slice(all.length - MAX_LINES) : all;
      });
    };
    const take = (stream: 'stdout' | 'stderr' | 'stdin', data: Uint8Array) => {
      for (const raw of split.push(stream, decoders[stream].decode(data, { stream: true }))) {
        const sp = raw.indexOf(' ');
        pending.push({ n: n++, stream, time: sp > 0 ? raw.slice(0, sp) : '', text: sp > 0 ? raw.slice(sp + 1) : raw });
      }
      if (!scheduled) {
        scheduled = true;
        requestAnimationFrame(flush);
      }
    };
    setLines([]);
    streamBytes(
      'GET',
      `/containers/${id}/logs?follow=1&stdout=1&stderr=1&timestamps=1&tail=1000`,
      (chunk) => {
        if (tty) take('stdout', chunk);
        else for (const f of demux.push(chunk)) take(f.stream, f.data);
      },
      abort.signal,
    ).catch((e: Error) => setError(e.message));
    return () => abort.abort();
  }, [id, tty]);

  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines, follow]);

  const q = search.toLowerCase();
  const shown = q ? lines.filter((l) => l.text.toLowerCase().includes(q)) : lines;
  return (
    <div>
      <div class="toolbar">
        <input
          type="search"
          aria-label="Search the logs"
          placeholder="Search"
          value={search}
          onInput={(e) => setSearch(e.currentTarget.value)}
        />
        <label class="check">
          <input type="checkbox" checked={timestamps} onChange={(e) => setTimestamps(e.currentTarget.checked)} /> Timestamps
        </label>
        <label class="check">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.currentTarget.checked)} /> Follow
        </label>
        <span class="dim">
          {shown.length} of {lines.length} lines
        </span>
      </div>
      <ErrorLine error={error} />
      <div class="logs" ref={box} role="log" aria-label="Container logs" tabIndex={0}>
        {shown.map((l) => (
          <div key={l.n} class={`line ${l.stream}`}>
            {timestamps && <time class="dim">{l.time} </time>}
            {l.text}
          </div>
        ))}
      </div>
    </div>
  );
}
