import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DirCache, SampleTarget, SystemCpu } from './collector.ts';
import { StatsSampler, type ContainerFacts, type SampleSource, type StatsSink } from './sampler.ts';
import { nilBlkio, type Sample } from './wire.ts';

/** A container whose CPU counter grows 10 ms per ms of wall time. */
class FakeSource implements SampleSource {
  reads = 0;
  sysReads = 0;
  released = 0;
  release(_cache: DirCache): void {
    this.released++;
  }
  systemCpu(): SystemCpu {
    this.sysReads++;
    return { systemUsage: Math.round(performance.now() * 2e6), onlineCpus: 2 };
  }
  sample(target: SampleTarget, sys: SystemCpu | undefined, _cache: DirCache): Sample | undefined {
    this.reads++;
    const mono = performance.now();
    return {
      readNs: BigInt(Date.now()) * 1_000_000n,
      mono,
      pids: { current: target.pid },
      blkio: nilBlkio(),
      cpu: {
        cpu_usage: { total_usage: Math.round(mono * 1e6), usage_in_kernelmode: 0, usage_in_usermode: 0 },
        system_cpu_usage: sys!.systemUsage,
        online_cpus: 2,
        throttling_data: { periods: 0, throttled_periods: 0, throttled_time: 0 },
      },
      memory: {},
    };
  }
}

class Collect implements StatsSink {
  frames: any[] = [];
  ended = false;
  send(text: string): void {
    this.frames.push(JSON.parse(text));
  }
  end(): void {
    this.ended = true;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function setup(containers: Record<string, ContainerFacts>) {
  const source = new FakeSource();
  // Ticks are driven by hand; the timer interval is long enough never to fire in a test.
  const sampler = new StatsSampler({
    source,
    facts: (id) => containers[id],
    intervalMs: 3_600_000,
    minGapMs: 20,
    lingerTicks: 2,
    batchSize: 2,
  });
  return { source, sampler };
}

const facts = (id: string, over: Partial<ContainerFacts> = {}): ContainerFacts => ({
  id,
  name: `/${id}`,
  pid: 7,
  running: true,
  restarting: false,
  networks: true,
  ...over,
});

test("a stream's first frame already carries precpu from an earlier reading", async () => {
  const cs = { a: facts('a') };
  const { sampler } = setup(cs);
  const sink = new Collect();
  sampler.subscribe(cs.a, true, sink);
  await sleep(30);
  await sampler.tick();
  assert.equal(sink.frames.length, 1);
  const f = sink.frames[0];
  assert.ok(f.precpu_stats.system_cpu_usage > 0);
  assert.ok(f.cpu_stats.cpu_usage.total_usage > f.precpu_stats.cpu_usage.total_usage);
  assert.notEqual(f.preread, '0001-01-01T00:00:00Z');
  await sleep(30);
  await sampler.tick();
  assert.equal(sink.frames.length, 2);
  assert.deepEqual(sink.frames[1].precpu_stats, sink.frames[0].cpu_stats, "each frame's precpu is the previous frame's cpu");
  sampler.close();
  assert.ok(sink.ended);
});

test('one reading per container per tick, whatever the number of streams', async () => {
  const cs = { a: facts('a'), b: facts('b'), c: facts('c') };
  const { source, sampler } = setup(cs);
  const sinks = Array.from({ length: 12 }, () => new Collect());
  sinks.forEach((s, i) => sampler.subscribe(cs[(['a', 'b', 'c'] as const)[i % 3]!], true, s));
  await sleep(30);
  const before = source.reads;
  const sysBefore = source.sysReads;
  await sampler.tick();
  assert.equal(source.reads - before, 3);
  assert.equal(source.sysReads - sysBefore, 2, 'batches of 2 containers share a /proc/stat reading');
  for (const s of sinks) assert.equal(s.frames.length, 1);
  // The streams of one container got the same reading.
  assert.equal(sinks[0]!.frames[0].read, sinks[3]!.frames[0].read);
  assert.equal(sampler.snapshot().subscribers, 12);
  sampler.close();
});

test('stream=false: one frame, then the request ends; a warm container answers without waiting for a tick', async () => {
  const cs = { a: facts('a') };
  const { sampler } = setup(cs);
  const first = new Collect();
  sampler.subscribe(cs.a, false, first);
  await sleep(30);
  await sampler.tick();
  assert.equal(first.frames.length, 1);
  assert.ok(first.ended);
  await sleep(30);
  const second = new Collect();
  sampler.subscribe(cs.a, false, second);
  await sleep(5);
  assert.equal(second.frames.length, 1, 'answered from the cached reading without a tick');
  assert.ok(second.ended);
  assert.ok(second.frames[0].precpu_stats.cpu_usage.total_usage > 0);
  sampler.close();
});

test('frames are at least minGap apart: a subscriber primed just before a tick waits for the next one', async () => {
  const cs = { a: facts('a') };
  const { sampler } = setup(cs);
  const sink = new Collect();
  sampler.subscribe(cs.a, true, sink);
  await sampler.tick(); // < 20 ms after the priming reading
  assert.equal(sink.frames.length, 0);
  await sleep(30);
  await sampler.tick();
  assert.equal(sink.frames.length, 1);
  sampler.close();
});

test('a stopped container streams zero frames; removal ends the streams', async () => {
  const cs: Record<string, ContainerFacts> = { a: facts('a', { running: false, pid: 0 }) };
  const { sampler } = setup(cs);
  const sink = new Collect();
  sampler.subscribe(cs.a!, true, sink);
  await sampler.tick();
  assert.equal(sink.frames.length, 1);
  assert.equal(sink.frames[0].read, '0001-01-01T00:00:00Z');
  assert.equal(sink.frames[0].name, '/a');
  assert.equal(sink.ended, false);
  delete cs.a;
  await sampler.tick();
  assert.ok(sink.ended);
  assert.equal(sampler.snapshot().entries, 0);
});

test('a container is dropped some ticks after its last request went away; cancelled sinks get nothing', async () => {
  const cs = { a: facts('a') };
  const { source, sampler } = setup(cs);
  const sink = new Collect();
  const cancel = sampler.subscribe(cs.a, true, sink);
  cancel();
  await sleep(30);
  await sampler.tick();
  await sampler.tick();
  assert.equal(sink.frames.length, 0);
  assert.equal(sampler.snapshot().entries, 1, 'still warm');
  await sampler.tick();
  assert.equal(sampler.snapshot().entries, 0);
  assert.equal(source.released, 1, 'its open files are let go');
  const reads = source.reads;
  await sampler.tick();
  assert.equal(source.reads, reads, 'nothing is read once nobody follows');
  sampler.close();
});
