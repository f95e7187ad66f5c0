// Stats charts of one container over the last minutes (uPlot): CPU, memory with its limit,
// network and block I/O rates, from the shared stats stream (stats-hub.ts).
import uPlot from 'uplot';
import { useEffect, useRef } from 'preact/hooks';
import { bytes } from '../format.ts';
import { statsOf, watchStats, type Point } from '../stats-hub.ts';

interface ChartDef {
  title: string;
  series: Array<{ label: string; pick: (p: Point) => number; stroke: string }>;
  value: (v: number) => string;
}

const CHARTS: ChartDef[] = [
  { title: 'CPU %', series: [{ label: 'CPU', pick: (p) => p.cpu, stroke: '#2563eb' }], value: (v) => `${v.toFixed(1)} %` },
  {
    title: 'Memory',
    series: [
      { label: 'used', pick: (p) => p.mem, stroke: '#16a34a' },
      { label: 'limit', pick: (p) => p.limit, stroke: '#9ca3af' },
    ],
    value: bytes,
  },
  {
    title: 'Network',
    series: [
      { label: 'received/s', pick: (p) => p.rx, stroke: '#7c3aed' },
      { label: 'sent/s', pick: (p) => p.tx, stroke: '#db2777' },
    ],
    value: bytes,
  },
  {
    title: 'Block I/O',
    series: [
      { label: 'read/s', pick: (p) => p.read, stroke: '#ea580c' },
      { label: 'written/s', pick: (p) => p.write, stroke: '#0891b2' },
    ],
    value: bytes,
  },
];

function Chart({ id, def }: { id: string; def: ChartDef }) {
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const data = () => {
      const pts = statsOf(id);
      if (el.current) el.current.dataset.points = String(pts.length);
      return [pts.map((p) => p.t), ...def.series.map((s) => pts.map(s.pick))] as uPlot.AlignedData;
    };
    const plot = new uPlot(
      {
        title: def.title,
        width: Math.max(280, (el.current!.clientWidth || 400) - 8),
        height: 160,
        series: [
          {},
          ...def.series.map((s) => ({
            label: s.label,
            stroke: s.stroke,
            value: (_u: uPlot, v: number | null) => (v === null ? '–' : def.value(v)),
          })),
        ],
        axes: [{}, { values: (_u: uPlot, vals: number[]) => vals.map(def.value), size: 70 }],
      },
      data(),
      el.current!,
    );
    const off = watchStats(id, () => plot.setData(data()));
    return () => {
      off();
      plot.destroy();
    };
  }, [id]);
  return <div class="chart" ref={el} role="img" aria-label={`${def.title} chart`} />;
}

/** `limited`: the container has a memory limit; otherwise the "limit" is the host's memory, which would flatten the usage line. */
export function StatsTab({ id, running, limited }: { id: string; running: boolean; limited: boolean }) {
  if (!running) return <p class="dim">The container is not running.</p>;
  const charts = CHARTS.map((d) =>
    d.title === 'Memory' && !limited ? { ...d, title: 'Memory (no limit)', series: d.series.slice(0, 1) } : d,
  );
  return (
    <div class="charts">
      {charts.map((d) => (
        <Chart key={d.title} id={id} def={d} />
      ))}
    </div>
  );
}
