// Overview: the host and engine (/info, /version), counts, disk usage (/system/df) and the live
// event feed. Counts and usage are read again when an event says they changed (no polling).
import { useEffect, useState } from 'preact/hooks';
import { getJson, onEvents, recentEvents, type EngineEvent } from '../api.ts';
import { bytes, shortId } from '../format.ts';
import { ErrorLine } from '../ui.tsx';

interface Info {
  Name: string;
  ServerVersion: string;
  OperatingSystem: string;
  KernelVersion: string;
  NCPU: number;
  MemTotal: number;
  Containers: number;
  ContainersRunning: number;
  ContainersPaused: number;
  ContainersStopped: number;
  Images: number;
  Driver: string;
  Swarm?: { LocalNodeState?: string };
}
interface Df {
  LayersSize?: number;
  Images?: Array<{ Size: number; SharedSize: number }>;
  Containers?: Array<{ SizeRw?: number }>;
  Volumes?: Array<{ UsageData?: { Size: number } }>;
  BuildCache?: Array<{ Size: number }>;
}

export function OverviewView() {
  const [info, setInfo] = useState<Info>();
  const [version, setVersion] = useState<{ ApiVersion: string; Version: string }>();
  const [df, setDf] = useState<Df>();
  const [events, setEvents] = useState<EngineEvent[]>([...recentEvents]);
  const [error, setError] = useState('');

  useEffect(() => {
    let infoTimer: ReturnType<typeof setTimeout> | undefined;
    let dfTimer: ReturnType<typeof setTimeout> | undefined;
    const loadInfo = () => getJson<Info>('/info').then(setInfo, (e: Error) => setError(e.message));
    // Disk usage measures every container's layer: read again at most every 3 s, and only when sizes can have changed.
    const loadDf = () => getJson<Df>('/system/df').then(setDf, (e: Error) => setError(e.message));
    void loadInfo();
    void loadDf();
    getJson<{ ApiVersion: string; Version: string }>('/version').then(setVersion, (e: Error) => setError(e.message));
    const off = onEvents((e) => {
      setEvents([...recentEvents]);
      if (e.Type === 'container' || e.Type === 'image' || e.Type === 'volume') {
        clearTimeout(infoTimer);
        infoTimer = setTimeout(loadInfo, 300);
      }
      const sizes =
        e.Type === 'image' ||
        e.Type === 'volume' ||
        (e.Type === 'container' && ['create', 'destroy', 'die', 'commit', 'extract-to-dir'].includes(e.Action));
      if (sizes && !dfTimer) dfTimer = setTimeout(() => ((dfTimer = undefined), void loadDf()), 3000);
    });
    return () => {
      off();
      clearTimeout(infoTimer);
      clearTimeout(dfTimer);
    };
  }, []);

  const sum = (xs: Array<number | undefined> | undefined) => (xs ?? []).reduce<number>((a, b) => a + (b ?? 0), 0);
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <ErrorLine error={error} />
      {info && (
        <div class="cards">
          <div class="card">
            <h2>Host</h2>
            <p>{info.Name}</p>
            <p class="dim">
              {info.OperatingSystem} · kernel {info.KernelVersion} · {info.NCPU} CPUs · {bytes(info.MemTotal)}
            </p>
          </div>
          <div class="card">
            <h2>Engine</h2>
            <p>{info.ServerVersion}</p>
            <p class="dim">
              API {version?.ApiVersion ?? '…'} · storage {info.Driver} · cluster {info.Swarm?.LocalNodeState ?? 'inactive'}
            </p>
          </div>
          <div class="card">
            <h2>Containers</h2>
            <p data-testid="count-containers">{info.Containers}</p>
            <p class="dim">
              {info.ContainersRunning} running · {info.ContainersPaused} paused · {info.ContainersStopped} stopped
            </p>
          </div>
          <div class="card">
            <h2>Images</h2>
            <p>{info.Images}</p>
          </div>
        </div>
      )}
      {df && (
        <table class="grid small">
          <caption>Disk usage</caption>
          <thead>
            <tr>
              <th scope="col">Type</th>
              <th scope="col">Count</th>
              <th scope="col">Size</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <td>Images</td>
              <td>{df.Images?.length ?? 0}</td>
              <td>{bytes(df.LayersSize ?? 0)}</td>
            </tr>
            <tr>
              <td>Containers</td>
              <td>{df.Containers?.length ?? 0}</td>
              <td>{bytes(sum(df.Containers?.map((c) => c.SizeRw)))}</td>
            </tr>
            <tr>
              <td>Volumes</td>
              <td>{df.Volumes?.length ?? 0}</td>
              <td>{bytes(sum(df.Volumes?.map((v) => ((v.UsageData?.Size ?? 0) > 0 ? v.UsageData!.Size : 0))))}</td>
            </tr>
            <tr>
              <td>Build cache</td>
              <td>{df.BuildCache?.length ?? 0}</td>
              <td>{bytes(sum(df.BuildCache?.map((b) => b.Size)))}</td>
            </tr>
          </tbody>
        </table>
      )}
      <h2>Events</h2>
      <ol class="events" aria-live="polite" aria-label="Live events">
        {events.length === 0 && <li class="dim">Nothing yet: events appear here as they happen.</li>}
        {events.slice(0, 100).map((e) => (
          <li key={e.timeNano + e.Actor.ID + e.Action}>
            <time>{new Date(e.timeNano / 1e6).toLocaleTimeString()}</time> <b>{e.Type}</b> {e.Action}{' '}
            <span class="dim">{e.Actor.Attributes?.name ?? shortId(e.Actor.ID)}</span>
          </li>
        ))}
      </ol>
    </section>
  );
}
