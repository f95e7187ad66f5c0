// A tiny line of the last minute of one stats value, drawn on a canvas (no chart library per row).
import { useEffect, useRef } from 'preact/hooks';
import { statsOf, watchStats, type Point } from '../stats-hub.ts';

export function Sparkline({ id, pick, label, max }: { id: string; pick: (p: Point) => number; label: string; max?: (p: Point) => number }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const text = useRef<HTMLSpanElement>(null);
  useEffect(() => {
    const draw = () => {
      const c = canvas.current;
      const pts = statsOf(id).slice(-60);
      if (!c || pts.length === 0) return;
      const ctx = c.getContext('2d')!;
      const values = pts.map(pick);
      const top = Math.max(1e-9, max ? max(pts[pts.length - 1]!) : 0, ...values);
      ctx.clearRect(0, 0, c.width, c.height);
      ctx.beginPath();
      values.forEach((v, i) => {
        const x = c.width - 1 - ((values.length - 1 - i) / 59) * (c.width - 1); // the newest at the right edge
        const y = c.height - 1 - (v / top) * (c.height - 2);
        if (i === 0) ctx.moveTo(x, y);
        else ctx.lineTo(x, y);
      });
      ctx.strokeStyle = '#3b82f6';
      ctx.stroke();
      if (values.length === 1) ctx.fillRect(c.width - 2, c.height - 2 - (values[0]! / top) * (c.height - 2), 2, 2); // one sample: a dot
      if (text.current)
        text.current.textContent = label === 'CPU' ? `${values[values.length - 1]!.toFixed(1)} %` : fmt(values[values.length - 1]!);
    };
    return watchStats(id, draw);
  }, [id]);
  return (
    <span class="spark" role="img" aria-label={`${label} of the last minute`}>
      <canvas ref={canvas} width={60} height={18} />
      <span ref={text} class="dim" />
    </span>
  );
}

function fmt(n: number): string {
  return n >= 1 << 30 ? `${(n / (1 << 30)).toFixed(1)}G` : n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(0)}M` : `${Math.round(n / 1024)}K`;
}
