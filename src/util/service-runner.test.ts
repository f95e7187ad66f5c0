// The service runner on small graphs: order, overlap, missing ids, cycles, failed starts, undeclared reads.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Registration, startOrder, startServices, ServiceGraphError } from './service-runner.ts';

interface S {
  config: string;
  db: string;
  events: string;
  net: string;
  boot: string;
  containers: string;
}

/** A registration that records its init and stop in `trace`, after an optional delay. */
function reg(trace: string[], id: keyof S, requires: (keyof S)[] = [], opts: { delayMs?: number; fail?: string } = {}): Registration<S> {
  return {
    id,
    requires,
    async init(deps) {
      trace.push(`init ${id}`);
      for (const d of requires) assert.ok(deps[d] !== undefined, `${id} sees ${d}`);
      if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
      if (opts.fail) throw new Error(opts.fail);
      trace.push(`ready ${id}`);
      return id;
    },
    stop(value) {
      trace.push(`stop ${value}`);
    },
  };
}

describe('service runner', () => {
  test('orders by requires, ties in list order; stops in reverse', async () => {
    const trace: string[] = [];
    const regs = [reg(trace, 'containers', ['db', 'events']), reg(trace, 'events', ['db']), reg(trace, 'db')];
    assert.deepEqual(
      startOrder(regs).map((r) => r.id),
      ['db', 'events', 'containers'],
    );
    const running = await startServices(regs, { config: 'c' }, { report: () => {} });
    assert.equal(running.get('containers'), 'containers');
    await running.stop();
    assert.deepEqual(trace.slice(-3), ['stop containers', 'stop events', 'stop db']);
  });

  test('independent services start together; a dependent waits for all it requires', async () => {
    const trace: string[] = [];
    const regs = [
      reg(trace, 'boot', [], { delayMs: 30 }),
      reg(trace, 'net', [], { delayMs: 10 }),
      reg(trace, 'containers', ['boot', 'net']),
    ];
    const readyOrder: string[] = [];
    const running = await startServices(regs, {}, { report: () => {}, ready: (id) => readyOrder.push(id) });
    assert.deepEqual(readyOrder, ['net', 'boot', 'containers']);
    assert.deepEqual(trace, ['init boot', 'init net', 'ready net', 'ready boot', 'init containers', 'ready containers']);
    await running.stop();
    assert.deepEqual(trace.slice(-3), ['stop containers', 'stop net', 'stop boot']);
  });

  test('a missing dependency, a duplicate and a cycle are refused before anything starts', () => {
    const t: string[] = [];
    assert.throws(
      () => startOrder([reg(t, 'db', ['events'])]),
      new ServiceGraphError('service db requires events, which is not registered'),
    );
    assert.throws(() => startOrder([reg(t, 'db'), reg(t, 'db')]), /service db is registered twice/);
    assert.throws(
      () => startOrder([reg(t, 'db'), reg(t, 'events', ['net']), reg(t, 'net', ['events'])]),
      /services require each other in a cycle: events, net/,
    );
    assert.deepEqual(t, []);
  });

  test('a failed start stops what started (after the others settle) and fails with its error', async () => {
    const trace: string[] = [];
    const regs = [
      reg(trace, 'db'),
      reg(trace, 'boot', [], { delayMs: 20, fail: 'containerd did not start' }),
      reg(trace, 'net', ['db'], { delayMs: 40 }),
      reg(trace, 'containers', ['boot', 'net']),
    ];
    await assert.rejects(startServices(regs, {}, { report: () => {} }), /containerd did not start/);
    assert.ok(!trace.includes('init containers'), 'nothing built on a failed service');
    assert.deepEqual(trace.slice(-2), ['stop net', 'stop db'], trace.join(', '));
  });

  test('a service reads only what it requires or was seeded; uses gives a getter for later', async () => {
    const sneaky: Registration<S> = { id: 'net', requires: [], init: (deps) => deps.db };
    await assert.rejects(startServices([reg([], 'db'), sneaky], {}, { report: () => {} }), /service net reads db without requiring it/);
    let getContainers: (() => string) | undefined;
    const net: Registration<S> = {
      id: 'net',
      uses: ['containers'],
      init: (deps, later) => {
        getContainers = later('containers');
        assert.throws(() => getContainers!(), /containers is not started yet/);
        return `net of ${deps.config}`;
      },
    };
    const running = await startServices([net, reg([], 'containers', ['net'])], { config: 'cfg' }, { report: () => {} });
    assert.equal(running.get('net'), 'net of cfg');
    assert.equal(getContainers!(), 'containers');
  });

  test('a failing stop is reported and the others still stop', async () => {
    const trace: string[] = [];
    const reports: string[] = [];
    const bad: Registration<S> = { id: 'events', requires: ['db'], init: () => 'events', stop: () => Promise.reject(new Error('busy')) };
    const running = await startServices(
      [reg(trace, 'db'), bad, reg(trace, 'containers', ['events'])],
      {},
      { report: (m) => reports.push(m) },
    );
    await running.stop();
    assert.deepEqual(reports, ['stopping events failed: busy']);
    assert.deepEqual(trace.slice(-2), ['stop containers', 'stop db']);
  });
});
