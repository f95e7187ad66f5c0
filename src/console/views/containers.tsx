// Containers: one virtualised table for thousands of rows (only the rows in view are in the DOM),
// search and state filter, ports, live CPU and memory sparklines (for the running rows in view),
// actions on one or many, and the create-and-run form. Rows change from the events stream (containers-store.ts).
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { call } from '../api.ts';
import { containerStore, nameOf, statusOf, type ContainerRow } from '../containers-store.ts';
import { ago, portsText, shortId } from '../format.ts';
import { MAX_TABLE_STREAMS } from '../stats-hub.ts';
import { ActionButton, ErrorLine, useStore } from '../ui.tsx';
import { rowWindow, streamedRows } from '../virtual.ts';
import { CreateForm } from './create.tsx';
import { Sparkline } from './sparkline.tsx';

const ROW = 34;
const SETTLE_MS = 150;
export const ACTIONS: Array<{ label: string; path: (id: string) => [string, string]; when: (s: string) => boolean }> = [
  { label: 'Start', path: (id) => ['POST', `/containers/${id}/start`], when: (s) => s === 'created' || s === 'exited' || s === 'dead' },
  { label: 'Stop', path: (id) => ['POST', `/containers/${id}/stop`], when: (s) => s === 'running' || s === 'restarting' },
  { label: 'Restart', path: (id) => ['POST', `/containers/${id}/restart`], when: () => true },
  { label: 'Kill', path: (id) => ['POST', `/containers/${id}/kill`], when: (s) => s === 'running' },
  { label: 'Pause', path: (id) => ['POST', `/containers/${id}/pause`], when: (s) => s === 'running' },
  { label: 'Unpause', path: (id) => ['POST', `/containers/${id}/unpause`], when: (s) => s === 'paused' },
  { label: 'Remove', path: (id) => ['DELETE', `/containers/${id}?force=1`], when: () => true },
];

export function ContainersView() {
  useStore((fn) => containerStore.subscribe(fn));
  const [query, setQuery] = useState('');
  const [state, setState] = useState('all');
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [creating, setCreating] = useState(false);
  const [error, setError] = useState('');
  const [scroll, setScroll] = useState({ top: 0, height: 600 });
  const body = useRef<HTMLDivElement>(null);
  // A clock for the relative times of the Status column (the page's own; nothing is asked of the daemon).
  const [now, setNow] = useState(Date.now() / 1000);
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now() / 1000), 5000);
    return () => clearInterval(t);
  }, []);

  const rows = useMemo(() => {
    const q = query.trim().toLowerCase();
    const out: ContainerRow[] = [];
    for (const c of containerStore.rows.values()) {
      if (state !== 'all' && c.State !== state) continue;
      if (q && !nameOf(c).toLowerCase().includes(q) && !c.Image.toLowerCase().includes(q) && !c.Id.startsWith(q)) continue;
      out.push(c);
    }
    return out.sort((a, b) => b.Created - a.Created || a.Id.localeCompare(b.Id));
  }, [containerStore.version, query, state]);

  useEffect(() => {
    const el = body.current;
    if (!el) return;
    const measure = () => setScroll({ top: el.scrollTop, height: el.clientHeight });
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const win = rowWindow(scroll.top, scroll.height, ROW, rows.length);
  const visible = rows.slice(win.first, win.last);
  // Sparklines for the running rows in view, once the scrolling settles (a fling through a thousand
  // rows opens no stream), at most MAX_TABLE_STREAMS of them; none while the page is hidden.
  const [settled, setSettled] = useState(scroll);
  useEffect(() => {
    const t = setTimeout(() => setSettled(scroll), SETTLE_MS);
    return () => clearTimeout(t);
  }, [scroll.top, scroll.height]);
  const [hidden, setHidden] = useState(document.hidden);
  useEffect(() => {
    const on = () => setHidden(document.hidden);
    document.addEventListener('visibilitychange', on);
    return () => document.removeEventListener('visibilitychange', on);
  }, []);
  const sparked = new Set(hidden ? [] : streamedRows(rows, settled.top, settled.height, ROW, MAX_TABLE_STREAMS));

  const bulk = async (label: string) => {
    const action = ACTIONS.find((a) => a.label === label)!;
    setError('');
    const ids = [...selected].filter((id) => containerStore.rows.has(id));
    const results = await Promise.allSettled(
      ids.map((id) => {
        const [m, p] = action.path(id);
        return call(m, p);
      }),
    );
    const failed = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
    if (failed.length) setError(`${failed.length} of ${ids.length} failed: ${failed[0]}`);
    if (label === 'Remove') setSelected(new Set());
  };
  const toggle = (id: string) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSelected(next);
  };
  const allShown = rows.length > 0 && rows.every((c) => selected.has(c.Id));

  return (
    <section aria-labelledby="containers-title" class="containers">
      <div class="toolbar">
        <h1 id="containers-title">Containers</h1>
        <input
          type="search"
          placeholder="Search name, image or ID"
          aria-label="Search containers"
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
        />
        <select aria-label="Filter by state" value={state} onChange={(e) => setState(e.currentTarget.value)}>
          {['all', 'running', 'created', 'exited', 'paused', 'restarting', 'dead'].map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        <span class="dim" aria-live="polite" data-testid="row-count">
          {rows.length} shown
        </span>
        <button type="button" onClick={() => setCreating(!creating)} aria-expanded={creating}>
          Create…
        </button>
      </div>
      {creating && <CreateForm onDone={() => setCreating(false)} />}
      <div class="toolbar" role="toolbar" aria-label="Actions on the selected containers">
        <span class="dim">{selected.size} selected</span>
        {ACTIONS.map((a) => (
          <ActionButton
            key={a.label}
            label={a.label}
            title={`${a.label} selected containers`}
            disabled={selected.size === 0}
            run={() => bulk(a.label)}
            onError={setError}
          />
        ))}
      </div>
      <ErrorLine error={error || containerStore.error} />
      <div class="vtable" role="table" aria-label="Containers" aria-rowcount={rows.length}>
        <div class="vrow vhead" role="row">
          <span role="columnheader" class="c-sel">
            <input
              type="checkbox"
              aria-label="Select all shown containers"
              checked={allShown}
              onChange={() => setSelected(allShown ? new Set() : new Set(rows.map((c) => c.Id)))}
            />
          </span>
          <span role="columnheader" class="c-name">
            Name
          </span>
          <span role="columnheader" class="c-image">
            Image
          </span>
          <span role="columnheader" class="c-state">
            State
          </span>
          <span role="columnheader" class="c-status">
            Status
          </span>
          <span role="columnheader" class="c-ports">
            Ports
          </span>
          <span role="columnheader" class="c-cpu">
            CPU
          </span>
          <span role="columnheader" class="c-mem">
            Memory
          </span>
        </div>
        <div class="vbody" ref={body} onScroll={(e) => setScroll({ top: e.currentTarget.scrollTop, height: e.currentTarget.clientHeight })}>
          <div style={{ height: `${win.total}px`, position: 'relative' }}>
            <div style={{ transform: `translateY(${win.offset}px)` }}>
              {visible.map((c, i) => (
                <div class="vrow" role="row" aria-rowindex={win.first + i + 1} key={c.Id} data-id={c.Id} data-state={c.State}>
                  <span role="cell" class="c-sel">
                    <input type="checkbox" aria-label={`Select ${nameOf(c)}`} checked={selected.has(c.Id)} onChange={() => toggle(c.Id)} />
                  </span>
                  <span role="cell" class="c-name">
                    <a href={`#/containers/${c.Id}`}>{nameOf(c)}</a> <span class="dim">{shortId(c.Id)}</span>
                  </span>
                  <span role="cell" class="c-image" title={c.Image}>
                    {c.Image}
                  </span>
                  <span role="cell" class="c-state">
                    <span class={`state state-${c.State}`}>{c.State}</span>
                  </span>
                  <span role="cell" class="c-status" title={`created ${ago(c.Created)}`}>
                    {statusOf(c, now)}
                  </span>
                  <span role="cell" class="c-ports">
                    {portsText(c.Ports)}
                  </span>
                  <span role="cell" class="c-cpu">
                    {sparked.has(c.Id) && <Sparkline id={c.Id} label="CPU" pick={(p) => p.cpu} />}
                  </span>
                  <span role="cell" class="c-mem">
                    {sparked.has(c.Id) && <Sparkline id={c.Id} label="Memory" pick={(p) => p.mem} />}
                  </span>
                </div>
              ))}
            </div>
          </div>
        </div>
      </div>
    </section>
  );
}
