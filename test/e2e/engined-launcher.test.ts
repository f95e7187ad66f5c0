// bin/engined's command line for node: V8's code tiers (no Sparkplug, TurboFan only for the functions
// named hot… and only late: see the launcher's comment for the memory each saves),
// ENGINE_V8_CODE=default to restore V8's own, and ENGINE_V8_FLAGS for flags of one's own.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { startDaemon } from '../helpers/daemon.ts';

const CODE_FLAGS = ['--no-sparkplug', '--invocation-count-for-turbofan=100000', '--turbo-filter=hot*'];

async function nodeArgs(env: NodeJS.ProcessEnv): Promise<string[]> {
  const d = await startDaemon({ env, args: ['--bridge', 'none'] });
  try {
    return readFileSync(`/proc/${d.child.pid}/cmdline`, 'utf8').split('\0');
  } finally {
    await d.cleanup();
  }
}

describe('bin/engined', () => {
  it("runs node with the daemon's code tiers; ENGINE_V8_CODE=default drops them, ENGINE_V8_FLAGS adds flags", async () => {
    const tiers = await nodeArgs({});
    for (const f of CODE_FLAGS) assert.ok(tiers.includes(f), `${f} in ${tiers.join(' ')}`);
    assert.ok(
      tiers.some((a) => a.endsWith('/dist/bundle/engined.js')),
      tiers.join(' '),
    );

    const own = await nodeArgs({ ENGINE_V8_CODE: 'default', ENGINE_V8_FLAGS: '--max-opt=2 --stack-size=900' });
    for (const f of CODE_FLAGS) assert.ok(!own.includes(f), `${f} not in ${own.join(' ')}`);
    assert.ok(own.includes('--max-opt=2') && own.includes('--stack-size=900'), own.join(' '));
  });
});
