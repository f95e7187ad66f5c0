// Starts and stops a daemon's services from their registrations, as containerd does with its
// plugins: each service says what it is (`id`), what it needs built first (`requires`), how it is
// built (`init`) and how it is released (`stop`). The runner orders them by `requires` (the
// registrations' own order breaks ties), builds each as soon as what it requires is ready — so
// independent services such as the supervisor's boot and the network set-up overlap — and stops
// them in the reverse of that order. A failed start stops what had started, then fails.
// `uses` names services read only later, after start-up (a getter), which breaks construction
// cycles without a value assigned after the fact.

export interface Registration<S, K extends keyof S = keyof S> {
  id: K;
  /** Built before this one; its value is on `deps` when init runs. */
  requires?: readonly (keyof S)[];
  /** Read after start-up only, through `later(id)` (a getter that throws until that service is built). */
  uses?: readonly (keyof S)[];
  init(deps: S, later: <U extends keyof S>(id: U) => () => S[U]): S[K] | Promise<S[K]>;
  /** Releases it; deps are what it required (and the seed), as at init. */
  stop?(value: S[K], deps: S): unknown;
}

export interface RunningServices<S> {
  get<K extends keyof S>(id: K): S[K];
  /** Stops every started service, last started first; a failing stop is reported and the rest go on. */
  stop(): Promise<void>;
}

export class ServiceGraphError extends Error {}

/** The registrations in start order: by `requires`, ties kept in list order. Throws on a missing id or a cycle. */
export function startOrder<S>(regs: readonly Registration<S>[], seeded: ReadonlySet<keyof S> = new Set()): Registration<S>[] {
  const byId = new Map<keyof S, Registration<S>>();
  for (const r of regs) {
    if (byId.has(r.id) || seeded.has(r.id)) throw new ServiceGraphError(`service ${String(r.id)} is registered twice`);
    byId.set(r.id, r);
  }
  for (const r of regs)
    for (const dep of [...(r.requires ?? []), ...(r.uses ?? [])])
      if (!byId.has(dep) && !seeded.has(dep))
        throw new ServiceGraphError(`service ${String(r.id)} requires ${String(dep)}, which is not registered`);
  const order: Registration<S>[] = [];
  const placed = new Set<keyof S>(seeded);
  while (order.length < regs.length) {
    const next = regs.find((r) => !placed.has(r.id) && (r.requires ?? []).every((d) => placed.has(d)));
    if (!next) {
      const stuck = regs.filter((r) => !placed.has(r.id)).map((r) => String(r.id));
      throw new ServiceGraphError(`services require each other in a cycle: ${stuck.join(', ')}`);
    }
    order.push(next);
    placed.add(next.id);
  }
  return order;
}

export async function startServices<S extends object>(
  regs: readonly Registration<S>[],
  seed: Partial<S>,
  hooks: { report: (message: string) => void; ready?: (id: string) => void },
): Promise<RunningServices<S>> {
  const order = startOrder(regs, new Set(Object.keys(seed) as (keyof S)[]));
  const values = new Map<keyof S, unknown>(Object.entries(seed) as [keyof S, unknown][]);
  const started: Registration<S>[] = [];
  const ready = new Map<keyof S, Promise<void>>();
  const depsOf = new Map<keyof S, S>();
  const later = <U extends keyof S>(id: U) => {
    return () => {
      if (!values.has(id)) throw new ServiceGraphError(`service ${String(id)} is not started yet`);
      return values.get(id) as S[U];
    };
  };
  for (const r of order) {
    const allowed = new Set<keyof S>([...(r.requires ?? []), ...(Object.keys(seed) as (keyof S)[])]);
    const deps = new Proxy({} as S, {
      get: (_, key) => {
        if (!allowed.has(key as keyof S)) throw new ServiceGraphError(`service ${String(r.id)} reads ${String(key)} without requiring it`);
        return values.get(key as keyof S);
      },
    });
    depsOf.set(r.id, deps);
    const usable = new Set(r.uses ?? []);
    const laterOf = <U extends keyof S>(id: U) => {
      if (!usable.has(id)) throw new ServiceGraphError(`service ${String(r.id)} uses ${String(id)} without declaring it`);
      return later(id);
    };
    ready.set(
      r.id,
      Promise.all((r.requires ?? []).map((d) => ready.get(d))).then(async () => {
        values.set(r.id, await r.init(deps, laterOf));
        started.push(r);
        hooks.ready?.(String(r.id));
      }),
    );
  }
  const stop = async () => {
    const startIndex = new Map(order.map((r, i) => [r.id, i]));
    for (const r of started.splice(0).sort((a, b) => startIndex.get(b.id)! - startIndex.get(a.id)!)) {
      try {
        await r.stop?.(values.get(r.id) as S[typeof r.id], depsOf.get(r.id)!);
      } catch (err) {
        hooks.report(`stopping ${String(r.id)} failed: ${(err as Error).message}`);
      }
    }
  };
  const outcomes = await Promise.allSettled(ready.values());
  const failed = outcomes.find((o) => o.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  return { get: (id) => later(id)(), stop };
}
