// One container: its state and actions in a header (kept current by the events stream), and tabs
// for logs, stats, processes, files, a terminal and the inspect tree.
import { useEffect, useState } from 'preact/hooks';
import { call, getJson, onEvents } from '../api.ts';
import { ActionButton, ErrorLine, Tree } from '../ui.tsx';
import { ACTIONS } from './containers.tsx';
import { FilesTab } from './files.tsx';
import { LogsTab } from './logs.tsx';
import { lazyView } from './lazy.tsx';

const StatsTab = lazyView(() => import('./stats-charts.tsx').then((m) => m.StatsTab));
const TerminalTab = lazyView(() => import('./terminal.tsx').then((m) => m.TerminalTab));

export interface Inspect {
  Id: string;
  Name: string;
  State: { Status: string; Running: boolean; ExitCode: number; StartedAt: string };
  Config: { Image: string; Tty: boolean; Cmd?: string[] };
  HostConfig?: { Memory?: number };
}

const TABS = [
  ['logs', 'Logs'],
  ['stats', 'Stats'],
  ['top', 'Processes'],
  ['files', 'Files'],
  ['terminal', 'Terminal'],
  ['inspect', 'Inspect'],
] as const;

export function ContainerView({ id, tab }: { id: string; tab: string }) {
  const [c, setC] = useState<Inspect & Record<string, unknown>>();
  const [error, setError] = useState('');
  useEffect(() => {
    const load = () =>
      getJson<Inspect & Record<string, unknown>>(`/containers/${id}/json`).then(
        (v) => {
          setC(v);
          setError('');
        },
        (e: Error) => setError(e.message),
      );
    void load();
    return onEvents((e) => {
      if (e.Type === 'container' && (e.Actor.ID === id || e.Actor.ID === c?.Id)) void load();
    });
  }, [id]);
  if (!c) return <ErrorLine error={error || ''} />;
  const state = c.State.Status;
  return (
    <section aria-labelledby="container-title">
      <div class="toolbar">
        <h1 id="container-title">{c.Name.replace(/^\//, '')}</h1>
        <span class={`state state-${state}`} data-testid="container-state">
          {state}
        </span>
        <span class="dim">{c.Config.Image}</span>
        {ACTIONS.filter((a) => a.when(state)).map((a) => (
          <ActionButton
            key={a.label}
            label={a.label}
            title={`${a.label} ${c.Name.replace(/^\//, '')}`}
            onError={setError}
            run={async () => {
              const [m, p] = a.path(c.Id);
              await call(m, p);
              if (a.label === 'Remove') location.hash = '#/containers';
            }}
          />
        ))}
      </div>
      <ErrorLine error={error} />
      <div role="tablist" aria-label="Container views" class="tabs">
        {TABS.map(([t, label]) => (
          <a key={t} role="tab" aria-selected={tab === t} href={`#/containers/${id}/${t}`}>
            {label}
          </a>
        ))}
      </div>
      <div role="tabpanel" class="tabpanel">
        {tab === 'logs' && <LogsTab id={c.Id} tty={c.Config.Tty} />}
        {tab === 'stats' && <StatsTab id={c.Id} running={c.State.Running} limited={(c.HostConfig?.Memory ?? 0) > 0} />}
        {tab === 'top' && <TopTab id={c.Id} running={c.State.Running} />}
        {tab === 'files' && <FilesTab id={c.Id} />}
        {tab === 'terminal' && <TerminalTab id={c.Id} running={c.State.Running} />}
        {tab === 'inspect' && <Tree value={c} name={c.Name.replace(/^\//, '')} open />}
      </div>
    </section>
  );
}

function TopTab({ id, running }: { id: string; running: boolean }) {
  const [top, setTop] = useState<{ Titles: string[]; Processes: string[][] }>();
  const [error, setError] = useState('');
  const load = () =>
    getJson<{ Titles: string[]; Processes: string[][] }>(`/containers/${id}/top`).then(setTop, (e: Error) => setError(e.message));
  useEffect(() => {
    if (running) void load();
  }, [id, running]);
  if (!running) return <p class="dim">The container is not running.</p>;
  return (
    <div>
      <button type="button" onClick={() => void load()}>
        Refresh
      </button>
      <ErrorLine error={error} />
      {top && (
        <table class="grid small">
          <thead>
            <tr>
              {top.Titles.map((t) => (
                <th scope="col" key={t}>
                  {t}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {top.Processes.map((p, i) => (
              <tr key={i}>
                {p.map((v, j) => (
                  <td key={j}>{v}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
