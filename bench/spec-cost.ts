// Where the lifecycle floor's extra time with engined's own OCI spec goes (issue 16): the bare
// containerd lifecycle (scenarios/floor.ts) with engined's captured spec, whole and with one part
// taken out at a time (seccomp, masked/readonly paths, device rules, cgroup namespace, /etc binds,
// rlimits), taking turns. Reports the median of Tasks.Create and of the whole lifecycle per variant.
// After a build: bin/node dist/bench/spec-cost.js [rounds=10]

import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ContainerdFloor } from './scenarios/floor.ts';
import { captureEnginedSpec } from './scenarios/engined-spec.ts';
import { Engined } from './targets/engined.ts';

type Spec = any;
const VARIANTS: Record<string, (s: Spec) => void> = {
  full: () => undefined,
  'no seccomp': (s) => delete s.linux.seccomp,
  'no masked/readonly paths': (s) => {
    s.linux.maskedPaths = [];
    s.linux.readonlyPaths = [];
  },
  'no device rules': (s) => {
    s.linux.devices = [];
    s.linux.resources.devices = [{ allow: false, access: 'rwm' }];
  },
  'no cgroup namespace': (s) => (s.linux.namespaces = s.linux.namespaces.filter((n: { type: string }) => n.type !== 'cgroup')),
  'no /etc binds': (s) => (s.mounts = s.mounts.filter((m: { destination: string }) => !m.destination.startsWith('/etc/'))),
  'no rlimits/oom': (s) => {
    delete s.process.rlimits;
    delete s.process.oomScoreAdj;
  },
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const rounds = Number(process.argv[2] ?? 10);
const { daemon } = await Engined.start();
const work = await mkdtemp('/tmp/engine-spec-cost-');
try {
  await daemon.loadBusybox();
  const specFor = await captureEnginedSpec(daemon, work);
  console.log(JSON.stringify(specFor('x'), null, 1).slice(0, 200));
  const floor = await ContainerdFloor.open(daemon.containerdSocket, join(work, 'floor'));
  const results = new Map<string, { create: number[]; total: number[] }>();
  for (const name of Object.keys(VARIANTS)) results.set(name, { create: [], total: [] });
  for (let r = -1; r < rounds; r++) {
    const names = Object.keys(VARIANTS);
    if (r % 2) names.reverse();
    for (const name of names) {
      const p = await floor.once((id) => {
        const s = specFor(id) as Spec;
        VARIANTS[name]!(s);
        return s;
      });
      if (r >= 0) {
        results.get(name)!.create.push(p.taskCreate);
        results.get(name)!.total.push(p.total);
      }
    }
  }
  floor.close();
  console.log(`| variant | Tasks.Create median ms | lifecycle median ms |\n|---|---:|---:|`);
  for (const [name, r] of results) console.log(`| ${name} | ${median(r.create).toFixed(1)} | ${median(r.total).toFixed(1)} |`);
} finally {
  await daemon.stop();
  await rm(work, { recursive: true, force: true });
}
