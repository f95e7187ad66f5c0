// Where engined's resident memory goes (issue 16), variant against variant: each variant is an
// engined from a repository root with optional ENGINE_*/MALLOC_* variables, run through the same
// workload as `run.js --quick --only memory,lifecycle,list,logs` (the lifecycle group, 500 listed
// containers, 256 MiB of logs written and read back), with the same 3 s settle before each idle
// reading. Variants take turns within each round (the order rotates), so load spreads over all.
// Each reading: VmRSS of engined and its containerd, and engined's mappings grouped (smaps); at
// the end of each run, V8's own figures through the inspector (SIGUSR1; read after the RSS).
//
// --late S reads once more S seconds after the end; --split reads between list and logs too;
// --malloc adds glibc's figures through gdb.
//
//   bin/node dist/bench/memory.js [--runs N] [--settle S] [--late S] [--malloc] [--split] label=root[:K=V,K=V] …

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { resolve } from 'node:path';
import { progress, iterations, parseOptions } from './lib/options.ts';
import { loadAverage, rssMiB, smapsGroups } from './lib/proc.ts';
import { median } from './lib/stats.ts';
import { emptyResults } from './results.ts';
import type { Engined } from './targets/engined.ts';

interface Variant {
  label: string;
  root: string;
  env: Record<string, string>;
}
type Reading = Record<string, number>;
const run = promisify(execFile);
const POINTS = ['start-up', 'lifecycles', 'list', 'end', 'late'] as const;

function parseArgs(argv: string[]): { runs: number; settle: number; late: number; malloc: boolean; split: boolean; variants: Variant[] } {
  let runs = 3;
  let malloc = false;
  let split = false;
  let settle = 3;
  let late = 0;
  const variants: Variant[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--runs') runs = Number(argv[++i]);
    else if (a === '--settle') settle = Number(argv[++i]);
    else if (a === '--late') late = Number(argv[++i]);
    else if (a === '--malloc') malloc = true;
    else if (a === '--split') split = true;
    else {
      const [label, rest] = a.split('=', 2) as [string, string];
      const [root, env] = [rest.split(':')[0]!, rest.split(':').slice(1).join(':')];
      const kv = env ? env.split(',').map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]) : [];
      variants.push({ label, root: resolve(root), env: Object.fromEntries(kv) });
    }
  }
  if (!variants.length) variants.push({ label: 'this', root: resolve('.'), env: {} });
  return { runs, settle, late, malloc, split, variants };
}

/**
 * glibc's view through gdb: the bytes its arenas hold free (malloc_info), then what malloc_trim(0)
 * gives back (the RSS drop). Diagnostic only: it stops the process for a moment.
 */
async function mallocFigures(pid: number): Promise<Reading> {
  const file = `/tmp/bench-malloc-${pid}.xml`;
  const script = [
    `set $f = (void*)fopen("${file}","w")`,
    'call (int)malloc_info(0,$f)',
    'call (int)fclose($f)',
    'call (int)malloc_trim(0)',
  ];
  const before = rssMiB(pid);
  await run('gdb', ['-p', String(pid), '-batch', ...script.flatMap((c) => ['-ex', c])], { timeout: 60_000 });
  const xml = readFileSync(file, 'utf8');
  const tail = xml.slice(xml.lastIndexOf('</heap>'));
  const attr = (tag: string, type: string) => Number(new RegExp(`<${tag} type="${type}"[^>]* size="(\\d+)"`).exec(tail)?.[1] ?? NaN);
  const [sys, mmapped] = [attr('system', 'current'), attr('total', 'mmap')];
  const total = (type: string) => attr('total', type);
  return {
    'malloc arenas (system)': sys / 2 ** 20,
    'malloc free in arenas': (total('fast') + total('rest')) / 2 ** 20,
    'malloc mmapped chunks': mmapped / 2 ** 20,
    'RSS drop on malloc_trim': before - rssMiB(pid),
  };
}

/** V8's figures from inside engined: the inspector, opened with SIGUSR1. */
async function v8Figures(pid: number): Promise<Reading | null> {
  process.kill(pid, 'SIGUSR1');
  for (let i = 0; i < 30; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const list = await fetch('http://127.0.0.1:9229/json/list')
      .then((r) => r.json() as Promise<Array<{ webSocketDebuggerUrl: string }>>)
      .catch(() => null);
    if (!list?.[0]) continue;
    const ws = new WebSocket(list[0].webSocketDebuggerUrl);
    const expression = `(() => { const v8 = process.getBuiltinModule('v8'); return JSON.stringify({ pid: process.pid,
      m: process.memoryUsage(), h: v8.getHeapStatistics(), s: v8.getHeapSpaceStatistics() }); })()`;
    const answer = await new Promise<string>((ok, fail) => {
      ws.onopen = () => ws.send(JSON.stringify({ id: 1, method: 'Runtime.evaluate', params: { expression } }));
      ws.onmessage = (e) => ok(JSON.parse(String(e.data)).result.result.value);
      ws.onerror = () => fail(new Error('inspector'));
    }).finally(() => ws.close());
    const j = JSON.parse(answer);
    if (j.pid !== pid) throw new Error(`port 9229 is another process's inspector (${j.pid})`);
    const MiB = (b: number) => b / 2 ** 20;
    const r: Reading = {
      'heap total': MiB(j.m.heapTotal),
      'heap used': MiB(j.m.heapUsed),
      'heap physical': MiB(j.h.total_physical_size),
      external: MiB(j.m.external),
      arrayBuffers: MiB(j.m.arrayBuffers),
      'V8 malloced': MiB(j.h.malloced_memory),
    };
    for (const s of j.s) {
      r[`${s.space_name} physical`] = MiB(s.physical_space_size);
      r[`${s.space_name} used`] = MiB(s.space_used_size);
    }
    return r;
  }
  return null;
}

async function main(): Promise<void> {
  const { runs, settle, late, malloc, split, variants } = parseArgs(process.argv.slice(2));
  const it = iterations(true);
  const opts = { ...parseOptions(['--quick', '--no-dockerd']) };
  const rows: Record<string, Record<string, Reading[]>> = {};
  const { lifecycleGroup } = await import('./groups/lifecycle.ts');
  const { listGroup } = await import('./groups/containers.ts');
  const { logsGroup } = await import('./groups/io.ts');
  const { startTracked, teardownAll } = await import('./lib/tracked.ts');
  try {
    for (let run = 0; run < runs; run++) {
      const order = variants.map((_, i) => variants[(i + run) % variants.length]!);
      for (const v of order) {
        progress(`run ${run + 1}/${runs}: ${v.label} (load ${loadAverage()})`);
        const { Engined: E } = (await import(`${v.root}/dist/bench/targets/engined.js`)) as typeof import('./targets/engined.ts');
        const engined: Engined = (await startTracked(() => E.start(v.env))).daemon;
        const read = async (point: string, secs = settle) => {
          await new Promise((r) => setTimeout(r, secs * 1000));
          const r: Reading = { engined: rssMiB(engined.pid), containerd: rssMiB(engined.containerdPid()), ...smapsGroups(engined.pid) };
          r['load1'] = Number(loadAverage().split(' ')[0]);
          r['threads'] = Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${engined.pid}/status`, 'utf8'))?.[1]);
          ((rows[v.label] ??= {})[point] ??= []).push(r);
          progress(`  ${point}: engined ${r.engined!.toFixed(1)} MiB, containerd ${r.containerd!.toFixed(1)} MiB`);
        };
        try {
          await read('start-up');
          await engined.loadBusybox();
          const ctx = { opts, it, res: emptyResults(), engined, dockerd: null };
          await lifecycleGroup(ctx);
          await read('lifecycles');
          await listGroup(ctx);
          if (split) await read('list');
          await logsGroup(ctx);
          await read('end');
          if (late) await read('late', late);
          const last = rows[v.label]![late ? 'late' : 'end']!.at(-1)!;
          if (malloc) Object.assign(last, await mallocFigures(engined.pid));
          const v8 = await v8Figures(engined.pid).catch((e) => (progress(`  v8 figures: ${(e as Error).message}`), null));
          if (v8) Object.assign(last, v8);
        } finally {
          await engined.stop();
        }
      }
    }
  } finally {
    await teardownAll();
  }
  // Medians per variant and point; the V8 figures of the last point (one per run).
  for (const point of POINTS) {
    const keys = [...new Set(variants.flatMap((v) => (rows[v.label]?.[point] ?? []).flatMap((r) => Object.keys(r))))];
    if (!keys.length) continue;
    console.log(`\n### ${point} (median of ${runs}, MiB)\n`);
    console.log(`| | ${variants.map((v) => v.label).join(' | ')} |\n|---|${variants.map(() => '---:').join('|')}|`);
    for (const k of keys) {
      const cells = variants.map((v) => {
        const xs = (rows[v.label]?.[point] ?? []).map((r) => r[k]).filter((x): x is number => x !== undefined);
        return xs.length ? `${median(xs).toFixed(1)}${k === 'engined' ? ` [${xs.map((x) => x.toFixed(0)).join(' ')}]` : ''}` : '';
      });
      console.log(`| ${k} | ${cells.join(' | ')} |`);
    }
  }
}

main().catch((err) => {
  progress(`FAILED: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
