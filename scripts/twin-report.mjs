// Summarises what the twin e2e run (test/e2e/twin/, the e2e files run again with the `engine` CLI as
// the client) left to the docker CLI: test/helpers/cli-client.ts writes, per test file, one dot per
// call engine ran (<file>.calls) and one JSON line per call its command table lacked a command,
// subcommand or flag of (<file>.jsonl: file, test, missing, args). Usage: twin-report.mjs DIR.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
if (!dir || !existsSync(dir)) process.exit(0);
const files = readdirSync(dir);
let engineCalls = 0;
const fallbacks = [];
for (const f of files) {
  const text = readFileSync(join(dir, f), 'utf8');
  if (f.endsWith('.calls')) engineCalls += text.length;
  if (f.endsWith('.jsonl')) for (const line of text.split('\n').filter(Boolean)) fallbacks.push(JSON.parse(line));
}
if (!engineCalls && !fallbacks.length) process.exit(0);
const byMissing = new Map();
for (const r of fallbacks) {
  const e = byMissing.get(r.missing) ?? { calls: 0, tests: new Set() };
  e.calls++;
  e.tests.add(`${r.file.replace(/\.test\.js$/, '')}: ${r.test}`);
  byMissing.set(r.missing, e);
}
const out = [`twin run: ${engineCalls} CLI calls ran on engine, ${fallbacks.length} fell back to the docker CLI`];
for (const [missing, e] of [...byMissing].sort((a, b) => b[1].calls - a[1].calls)) {
  out.push(`  engine lacks "${missing}": ${e.calls} call(s) in ${e.tests.size} test(s)`);
  for (const t of [...e.tests].slice(0, 5)) out.push(`    - ${t}`);
  if (e.tests.size > 5) out.push(`    - … ${e.tests.size - 5} more`);
}
console.log(out.join('\n'));
