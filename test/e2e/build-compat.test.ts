// The classic builder's answers where a client would see dockerd differ (checked against dockerd's
// classic builder): context member names cleaned as inside a chroot (`../a`, `/a`), the Dockerfile
// parameter resolved inside the context (absolute, docker-py's generated name for a Dockerfile
// outside the context, or refused with dockerd's words as 400s), every stage up to the target built with an
// image ID per stage, and cachefrom's images as the only cache sources.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';

/** A tar made by Python's tarfile: names exactly as given (members: [name, text | null for a directory]). */
function pyTar(members: Array<[string, string | null]>): Buffer {
  const script = String.raw`
import io, json, sys, tarfile
b = io.BytesIO(); t = tarfile.open(fileobj=b, mode='w')
for name, data in json.load(sys.stdin):
    ti = tarfile.TarInfo(name)
    if data is None:
        ti.type = tarfile.DIRTYPE; ti.mode = 0o755; t.addfile(ti)
    else:
        raw = data.encode(); ti.size = len(raw); ti.mode = 0o644; t.addfile(ti, io.BytesIO(raw))
t.close(); sys.stdout.buffer.write(b.getvalue())
`;
  return execFileSync('python3', ['-c', script], { input: JSON.stringify(members) });
}

type Msg = { stream?: string; aux?: { ID: string }; error?: string };
const messages = (text: string): Msg[] =>
  text
    .split(/\r?\n/)
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Msg);
const streamOf = (msgs: Msg[]) => msgs.map((m) => m.stream ?? '').join('');

describe('classic builder: dockerd compatibility', () => {
  let d: TestDaemon;
  const post = (query: string, tar: Buffer) =>
    d.request('POST', `/build?${query}`, { body: tar, headers: { 'Content-Type': 'application/x-tar' }, timeoutMs: 120_000 });
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
  });

  test('context members named ../ or absolute land inside the context (cleaned) and the build runs', async () => {
    const tmpBefore = await readdir(tmpdir());
    const r = await post(
      't=dotdot:1',
      pyTar([
        ['../Dockerfile', 'FROM busybox\nCOPY . /ctx/\n'],
        ['../../up/a.txt', 'from-dotdot\n'],
        ['/abs/b.txt', 'from-abs\n'],
        ['x/../../c.txt', 'from-inner\n'],
      ]),
    );
    assert.equal(r.status, 200, r.text());
    assert.doesNotMatch(r.text(), /"error"/, r.text());
    const ls = await d.docker(['run', '--rm', 'dotdot:1', 'sh', '-c', 'cd /ctx && find . -type f | sort && cat up/a.txt abs/b.txt c.txt']);
    assert.equal(ls.stdout, './Dockerfile\n./abs/b.txt\n./c.txt\n./up/a.txt\nfrom-dotdot\nfrom-abs\nfrom-inner\n', ls.stderr);
    // Nothing was written beside the daemon's temporary context directory.
    const made = (await readdir(tmpdir())).filter((n) => !tmpBefore.includes(n) && /^(up|abs|c\.txt|Dockerfile)$/.test(n));
    assert.deepEqual(made, []);
  });

  test("the dockerfile parameter: absolute in the context, the lowercase fallback; outside, a directory, missing: dockerd's words, as 400s", async () => {
    const tar = pyTar([
      ['sub', null],
      ['sub/Dockerfile', 'FROM busybox\nLABEL where=sub\n'],
      ['Dockerfile', 'FROM busybox\nLABEL where=root\n'],
    ]);
    const abs = await post('t=absdf:1', tar);
    assert.equal(abs.status, 200, abs.text());
    const labels = JSON.parse((await d.docker(['image', 'inspect', '--format', '{{json .Config.Labels}}', 'absdf:1'])).stdout);
    assert.deepEqual(labels, { where: 'root' });
    const sub = await post('t=absdf:2&dockerfile=%2Fsub%2FDockerfile', tar);
    assert.equal(sub.status, 200, sub.text());
    assert.equal((await d.docker(['image', 'inspect', '--format', '{{.Config.Labels.where}}', 'absdf:2'])).stdout.trim(), 'sub');

    const out = await post('dockerfile=..%2FDockerfile', tar);
    assert.equal(out.status, 400, out.text());
    assert.equal(out.json().message, 'forbidden path outside the build context: ../Dockerfile ()');
    const dir = await post('dockerfile=sub', tar);
    assert.equal(dir.status, 400, dir.text());
    assert.match(dir.json().message, /^unexpected error reading Dockerfile: read \/.+\/sub: is a directory$/);
    const missing = await post('dockerfile=nope', tar);
    assert.equal(missing.status, 400, missing.text());
    assert.equal(missing.json().message, 'Cannot locate specified Dockerfile: nope');
    const empty = await post('', pyTar([['Dockerfile', '']]));
    assert.equal(empty.status, 400, empty.text());
    assert.equal(empty.json().message, 'the Dockerfile (Dockerfile) cannot be empty');
    const lower = await post('t=lowerdf:1', pyTar([['dockerfile', 'FROM busybox\nLABEL where=lower\n']]));
    assert.equal(lower.status, 200, lower.text());
    assert.equal((await d.docker(['image', 'inspect', '--format', '{{.Config.Labels.where}}', 'lowerdf:1'])).stdout.trim(), 'lower');
  });

  test('docker-py: a Dockerfile outside the context (sent under a generated name)', async () => {
    const top = await mkdtemp(join(tmpdir(), 'build-pydf-'));
    try {
      const ctxDir = join(top, 'ctx');
      await run('mkdir', [ctxDir]);
      await writeFile(join(ctxDir, 'data.txt'), 'context-data\n');
      await writeFile(join(top, 'Outside.Dockerfile'), 'FROM busybox\nCOPY data.txt /data.txt\nCMD ["cat", "/data.txt"]\n');
      const script = String.raw`
import docker, os, sys
c = docker.DockerClient(base_url=os.environ['DOCKER_HOST'], version='1.41')
img, _ = c.images.build(path=sys.argv[1], dockerfile=sys.argv[2], tag='pyout:1', rm=True)
print(c.containers.run('pyout:1', remove=True).decode(), end='')
`;
      const r = await run('python3', ['-c', script, ctxDir, join(top, 'Outside.Dockerfile')], {
        env: { ...process.env, DOCKER_HOST: d.host },
        timeoutMs: 120_000,
      });
      assert.equal(r.code, 0, r.stderr + r.stdout);
      assert.equal(r.stdout, 'context-data\n');
    } finally {
      await rm(top, { recursive: true, force: true });
    }
  });

  test('multi-stage: every stage up to the target runs, each announces its image ID; quiet sends the last only', async () => {
    const df =
      'FROM busybox AS a\nRUN echo a > /a\nFROM busybox AS unused\nRUN echo unused-ran\nFROM a AS final\nLABEL b=2\nFROM busybox AS after\nRUN echo after-ran\n';
    const r = await post('target=final&t=stages:1', pyTar([['Dockerfile', df]]));
    assert.equal(r.status, 200, r.text());
    const msgs = messages(r.text());
    const text = streamOf(msgs);
    assert.match(text, /Step 1\/6 : FROM busybox AS a\n/);
    assert.match(text, /unused-ran/);
    assert.doesNotMatch(text, /after-ran/);
    // dockerd writes a step's line and its newline as two messages.
    assert.deepEqual(msgs.slice(0, 2), [{ stream: 'Step 1/6 : FROM busybox AS a' }, { stream: '\n' }]);
    const ids = msgs.filter((m) => m.aux).map((m) => m.aux!.ID);
    assert.equal(ids.length, 3, text);
    assert.equal(new Set(ids).size, 3);
    const id = JSON.parse((await d.docker(['image', 'inspect', 'stages:1'])).stdout)[0].Id;
    assert.equal(ids.at(-1), id);
    // Each aux comes right after its stage's last step.
    const order = msgs.map((m) => (m.aux ? 'aux' : /^Step \d+\/\d+ : FROM/.test(m.stream ?? '') ? 'from' : null)).filter(Boolean);
    assert.deepEqual(order, ['from', 'aux', 'from', 'aux', 'from', 'aux']);
    assert.match(text, new RegExp(`Successfully built ${id.slice(7, 19)}\\n`));

    const quiet = await post('target=final&q=1', pyTar([['Dockerfile', df]]));
    assert.deepEqual(messages(quiet.text()), [{ stream: `${id}\n` }]);
  });

  test('ONBUILD in a multi-stage build: triggers run in each stage, one image line after them, one image ID per stage', async () => {
    const parent = await post('t=onb:1', pyTar([['Dockerfile', 'FROM busybox\nONBUILD RUN echo trig1 > /t1\nONBUILD LABEL trig=2\n']]));
    assert.equal(parent.status, 200, parent.text());
    const r = await post('t=onb:2', pyTar([['Dockerfile', 'FROM onb:1 AS a\nRUN cat /t1\nFROM onb:1\nRUN echo b\n']]));
    assert.equal(r.status, 200, r.text());
    const msgs = messages(r.text());
    const text = streamOf(msgs);
    assert.match(
      text,
      /^Step 1\/4 : FROM onb:1 AS a\n# Executing 2 build triggers\n ---> Running in ([0-9a-f]{12})\nRemoving intermediate container \1\n ---> [0-9a-f]{12}\nStep 2\/4 : RUN cat \/t1\n/,
      text,
    );
    // The second stage's triggers hit the cache: their lines, then the stage's one image line.
    assert.match(
      text,
      /Step 3\/4 : FROM onb:1\n# Executing 2 build triggers\n ---> Using cache\n ---> Using cache\n ---> [0-9a-f]{12}\nStep 4\/4 : RUN echo b\n/,
      text,
    );
    assert.equal(msgs.filter((m) => m.aux).length, 2, text);
    const labels = JSON.parse((await d.docker(['image', 'inspect', '--format', '{{json .Config.Labels}}', 'onb:2'])).stdout);
    assert.deepEqual(labels, { trig: '2' });
  });

  test('cachefrom: the named images are the only cache sources; the source itself is the result at its last step', async () => {
    const df = 'FROM busybox\nRUN echo one > /one\nLABEL l=1\n';
    const first = await post('t=cf:1', pyTar([['Dockerfile', df]]));
    assert.equal(first.status, 200, first.text());
    const cfId = JSON.parse((await d.docker(['image', 'inspect', 'cf:1'])).stdout)[0].Id;
    const q = (refs: string[]) => `cachefrom=${encodeURIComponent(JSON.stringify(refs))}`;
    // A missing cachefrom image: the local cache is not used either.
    const none = await post(q(['nope:1']), pyTar([['Dockerfile', df]]));
    assert.equal(none.status, 200, none.text());
    const noneText = streamOf(messages(none.text()));
    assert.match(noneText, /Step 2\/3 : RUN echo one > \/one\n ---> Running in /, noneText);
    assert.notEqual(
      messages(none.text())
        .filter((m) => m.aux)
        .at(-1)!.aux!.ID,
      cfId,
    );
    // The local cache cleared, cf:1 as source: every step hits, the result is cf:1 itself.
    const pruned = await d.request('POST', '/build/prune?all=1');
    assert.equal(pruned.status, 200, pruned.text());
    const again = await post(`${q(['cf:1'])}&t=cf:2`, pyTar([['Dockerfile', df]]));
    assert.equal(again.status, 200, again.text());
    const againText = streamOf(messages(again.text()));
    assert.doesNotMatch(againText, /Running in/, againText);
    assert.equal((againText.match(/ ---> Using cache\n/g) ?? []).length, 2, againText);
    assert.equal(JSON.parse((await d.docker(['image', 'inspect', 'cf:2'])).stdout)[0].Id, cfId);
  });
});
