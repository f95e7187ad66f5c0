// bin/engined lets TurboFan compile only the functions named hot… (its --turbo-filter): the log
// codecs' per-line loops are named so, and nothing else may reach TurboFan. This runs both file
// formats' write and read in a node with the launcher's filter and V8's default invocation count
// (so that a few MiB are enough), and reads what V8 says it compiled: a rename that drops the
// prefix, or a filter V8 no longer honours, fails here instead of slowing logs or growing memory.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const launcher = new URL('../../../bin/engined', import.meta.url);
const driverModule = new URL('./index.js', import.meta.url).href;

/** The --turbo-filter flag bin/engined gives node. */
function launcherFilter(): string {
  const code = /^code="([^"]*)"/m.exec(readFileSync(launcher, 'utf8'))?.[1] ?? '';
  const filter = code.split(' ').find((f) => f.startsWith('--turbo-filter='));
  assert.ok(filter, `a --turbo-filter in bin/engined's code flags: ${code}`);
  return filter;
}

const CHILD = `
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createLogDriver } from ${JSON.stringify(driverModule)};
const chunk = Buffer.from(('x'.repeat(99) + '\\n').repeat(655));
for (const kind of ['json-file', 'local']) {
  const dir = await mkdtemp(join(tmpdir(), 'hot-tiers-'));
  try {
    const driver = createLogDriver(kind, { containerId: 'hot', dir, options: {}, attrs: {} });
    await driver.attach({ stdout: Readable.from((function* () { for (let i = 0; i < 256; i++) yield chunk; })()) });
    let n = 0;
    for await (const _ of driver.read({ follow: false, stdout: true, stderr: true })) n++;
    await driver.close();
    console.log('entries', kind, n);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
`;

describe('V8 tiers of the log path', () => {
  it('compiles the hot… functions of both file formats with TurboFan, and nothing else', () => {
    const r = spawnSync(process.execPath, ['--no-sparkplug', launcherFilter(), '--trace-opt', '--input-type=module', '-e', CHILD], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^entries json-file 167680$/m);
    assert.match(r.stdout, /^entries local 167680$/m);
    const turbofan = new Set<string>();
    for (const line of r.stdout.split('\n')) {
      const m = /^\[compiling method \S+ <JSFunction ([^<>]*?) ?\(sfi = [^)]*\)> \(target TURBOFAN_JS\)/.exec(line);
      if (m) turbofan.add(m[1]!);
    }
    for (const name of ['hotLines', 'hotIndexOfByte', 'hotParse', 'hotParseRecord', 'hotRecord'])
      assert.ok(turbofan.has(name), `${name} compiled by TurboFan (compiled: ${[...turbofan].join(', ')})`);
    const others = [...turbofan].filter((n) => !n.startsWith('hot'));
    assert.deepEqual(others, [], 'only hot… functions reach TurboFan');
  });
});
