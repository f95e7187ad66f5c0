// Tests of one COPY/ADD step planned from parsed instructions and run into a root.
import assert from 'node:assert/strict';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, describe, test } from 'node:test';
import { parseDockerfile } from '../dockerfile/parser.ts';
import { envFromList, expandInstruction } from '../dockerfile/shell-words.ts';
import type { AddInstruction, CopyInstruction } from '../dockerfile/types.ts';
import { planCopyStep } from './copy-step.ts';

const base = mkdtempSync(`${tmpdir()}/copy-step-`);
after(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const fresh = () => {
  const d = `${base}/${n++}`;
  mkdirSync(d, { recursive: true });
  return d;
};

const inst = (line: string, env: string[] = []) => {
  const i = parseDockerfile(`FROM x\n${line}\n`).stages[0]!.instructions[0]!;
  return expandInstruction(i, envFromList(env)) as CopyInstruction | AddInstruction;
};

function ctx(): string {
  const c = fresh();
  mkdirSync(`${c}/app`);
  writeFileSync(`${c}/app/main.js`, 'main');
  writeFileSync(`${c}/app/util.js`, 'util');
  chownSync(`${c}/app/main.js`, 1500, 1500);
  return c;
}

describe('COPY/ADD step', () => {
  test('plan: sources, destination, dockerd\'s comment; run writes as root', async () => {
    const c = ctx();
    const plan = await planCopyStep({ inst: inst('COPY $D /srv/', ['D=app']), sourceRoot: c, fromContext: true, workdir: '/', tmpDir: fresh() });
    assert.equal(plan.dest, '/srv/');
    assert.match(plan.srcHash, /^dir:[0-9a-f]{64}$/);
    assert.equal(plan.comment, `COPY ${plan.srcHash} in /srv/ `);
    const root = fresh();
    await plan.run(root);
    const st = statSync(`${root}/srv/main.js`);
    assert.deepEqual([readFileSync(`${root}/srv/main.js`, 'utf8'), st.uid], ['main', 0]);
  });

  test('the checksum ignores mtimes and the context\'s owners but follows content', async () => {
    const plan = async (c: string) => (await planCopyStep({ inst: inst('COPY app/*.js /srv/'), sourceRoot: c, fromContext: true, workdir: '/w', tmpDir: fresh() }));
    const a = await plan(ctx());
    const c2 = ctx();
    utimesSync(`${c2}/app/util.js`, 1, 1);
    chownSync(`${c2}/app/util.js`, 7, 7);
    const b = await plan(c2);
    assert.equal(a.checksum, b.checksum);
    assert.match(a.srcHash, /^multi:/);
    writeFileSync(`${c2}/app/util.js`, 'changed');
    assert.notEqual((await plan(c2)).checksum, a.checksum);
  });

  test('--chown resolves in the destination\'s /etc files; --from keeps owners', async () => {
    const c = ctx();
    const root = fresh();
    mkdirSync(`${root}/etc`);
    writeFileSync(`${root}/etc/passwd`, 'node:x:1000:1000::/home/node:/bin/sh\n');
    writeFileSync(`${root}/etc/group`, 'node:x:1000:\n');
    const p = await planCopyStep({ inst: inst('COPY --chown=node app/main.js rel.js'), sourceRoot: c, fromContext: true, workdir: '/home/node', tmpDir: fresh() });
    assert.equal(p.comment, `COPY --chown=node ${p.srcHash} in rel.js `);
    await p.run(root);
    assert.deepEqual([statSync(`${root}/home/node/rel.js`).uid, statSync(`${root}/home/node/rel.js`).gid], [1000, 1000]);
    const from = await planCopyStep({ inst: inst('COPY --from=build /app/main.js /kept.js'), sourceRoot: c, fromContext: false, workdir: '/', tmpDir: fresh() });
    await from.run(root);
    assert.equal(statSync(`${root}/kept.js`).uid, 1500);
  });

  test('several sources without a directory destination are refused', async () => {
    await assert.rejects(planCopyStep({ inst: inst('COPY app/*.js /one'), sourceRoot: ctx(), fromContext: true, workdir: '/', tmpDir: fresh() }),
      (e: Error & { status?: number }) => e.status === 400 && /must be a directory and end with a \//.test(e.message));
  });
});
