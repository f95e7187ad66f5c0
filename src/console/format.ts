// Numbers as the console shows them: sizes, rates, CPU percent from two stats samples (docker
// stats' formula), memory without the page cache, relative times. Pure.

export function bytes(n: number | undefined | null): string {
  if (n === undefined || n === null || !Number.isFinite(n) || n < 0) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n >= 100 || i === 0 ? Math.round(n) : n.toFixed(1)} ${units[i]}`;
}

export interface StatsSample {
  read?: string;
  cpu_stats?: { cpu_usage?: { total_usage?: number; percpu_usage?: number[] }; system_cpu_usage?: number; online_cpus?: number };
  precpu_stats?: { cpu_usage?: { total_usage?: number }; system_cpu_usage?: number };
  memory_stats?: { usage?: number; limit?: number; stats?: Record<string, number> };
  networks?: Record<string, { rx_bytes?: number; tx_bytes?: number }>;
  blkio_stats?: { io_service_bytes_recursive?: Array<{ op?: string; value?: number }> | null };
}

/** docker stats' CPU %: the container's share of the host's CPU time since the previous sample, times the CPUs. */
export function cpuPercent(s: StatsSample): number {
  const cpu = s.cpu_stats?.cpu_usage?.total_usage ?? 0;
  const pre = s.precpu_stats?.cpu_usage?.total_usage ?? 0;
  const sys = s.cpu_stats?.system_cpu_usage ?? 0;
  const preSys = s.precpu_stats?.system_cpu_usage ?? 0;
  const cpus = s.cpu_stats?.online_cpus || s.cpu_stats?.cpu_usage?.percpu_usage?.length || 1;
  const dCpu = cpu - pre;
  const dSys = sys - preSys;
  return dCpu > 0 && dSys > 0 ? (dCpu / dSys) * cpus * 100 : 0;
}

/** docker stats' memory: usage less the inactive file cache (cgroup v1 total_inactive_file, v2 inactive_file). */
export function memoryUsed(s: StatsSample): number {
  const m = s.memory_stats;
  if (!m?.usage) return 0;
  const st = m.stats ?? {};
  const cache = st.total_inactive_file ?? st.inactive_file ?? 0;
  return cache < m.usage ? m.usage - cache : m.usage;
}

export function networkTotals(s: StatsSample): { rx: number; tx: number } {
  let rx = 0;
  let tx = 0;
  for (const n of Object.values(s.networks ?? {})) {
    rx += n.rx_bytes ?? 0;
    tx += n.tx_bytes ?? 0;
  }
  return { rx, tx };
}

export function blockTotals(s: StatsSample): { read: number; write: number } {
  let read = 0;
  let write = 0;
  for (const e of s.blkio_stats?.io_service_bytes_recursive ?? []) {
    const op = (e.op ?? '').toLowerCase();
    if (op === 'read') read += e.value ?? 0;
    else if (op === 'write') write += e.value ?? 0;
  }
  return { read, write };
}

export function ago(unixSeconds: number, now = Date.now() / 1000): string {
  const d = Math.max(0, Math.round(now - unixSeconds));
  if (d < 60) return `${d} s ago`;
  if (d < 3600) return `${Math.floor(d / 60)} min ago`;
  if (d < 86400) return `${Math.floor(d / 3600)} h ago`;
  return `${Math.floor(d / 86400)} days ago`;
}

export function shortId(id: string): string {
  return id.replace(/^sha256:/, '').slice(0, 12);
}

/** The ports column of docker ps, from a list entry's Ports. */
export function portsText(ports: Array<{ IP?: string; PrivatePort: number; PublicPort?: number; Type: string }> | undefined): string {
  return (ports ?? [])
    .map((p) =>
      p.PublicPort
        ? `${p.IP && p.IP !== '0.0.0.0' ? p.IP + ':' : ''}${p.PublicPort}→${p.PrivatePort}/${p.Type}`
        : `${p.PrivatePort}/${p.Type}`,
    )
    .filter((v, i, all) => all.indexOf(v) === i)
    .join(', ');
}

/** go-units' HumanDuration, the words of docker ps' Status ("Up 3 minutes", "Exited (0) 2 hours ago"). */
export function humanDuration(seconds: number): string {
  const s = Math.floor(seconds);
  if (s < 1) return 'Less than a second';
  if (s === 1) return '1 second';
  if (s < 60) return `${s} seconds`;
  const minutes = Math.floor(seconds / 60);
  if (minutes === 1) return 'About a minute';
  if (minutes < 60) return `${minutes} minutes`;
  const hours = Math.floor(seconds / 3600 + 0.5);
  if (hours === 1) return 'About an hour';
  if (hours < 48) return `${hours} hours`;
  if (hours < 24 * 7 * 2) return `${Math.floor(hours / 24)} days`;
  if (hours < 24 * 30 * 2) return `${Math.floor(hours / 24 / 7)} weeks`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24 / 30)} months`;
  return `${Math.floor(hours / 24 / 365)} years`;
}
