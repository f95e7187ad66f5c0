import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { EntrySink } from './codec.ts';
import { jsonCodec } from './format-json.ts';

/** Counts what the parse hands over, keeping nothing of the block. */
class CountingSink extends EntrySink<number> {
  n = 0;
  constructor() {
    super(true, true, undefined, undefined);
  }
  hotEntry(): void {
    this.n++;
  }
  hotText(): void {
    this.n++;
  }
  get pending(): boolean {
    return this.n > 0;
  }
  take(): number {
    return this.n;
  }
}

describe('json-file parse', () => {
  it('keeps no reference to the block it parsed (a reader pools 1 MiB blocks and lets them go when idle)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const collected = new Set<string>();
    const registry = new FinalizationRegistry<string>((name) => collected.add(name));
    const codec = jsonCodec({});
    const sink = new CountingSink();
    (() => {
      const line = '{"log":"hello\\n","stream":"stdout","time":"2024-01-01T00:00:00.000000001Z"}\n';
      const block = Buffer.from(line.repeat(10_000));
      assert.equal(codec.hotParse(block, 0, block.length, sink), block.length);
      registry.register(block.buffer, 'block');
    })();
    assert.equal(sink.n, 10_000);
    for (let i = 0; i < 20 && !collected.has('block'); i++) {
      gc();
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(collected.has('block'), 'the parsed block was collected');
  });
});
