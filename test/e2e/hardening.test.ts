// Issue 12: hostile input never wedges the daemon or reaches a record; dockerd's answers where
// clients depend on them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_JSON_BODY } from '../../src/api/http.ts';
import { MAX_ARRAY_ENTRIES, MAX_MAP_ENTRIES } from '../../src/oci/wire-schema.ts';
import { startDaemon, type HttpResult, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import type { HostileCase } from '../robustness/hostile-gen.ts';
import { sendCase } from '../robustness/hostile-run.ts';

describe('hostile request bodies', () => {
  let d: TestDaemon;
  before(async () => {
    // Stalls of the event loop are logged with the CPU time they took (util/loop-watch.ts).
    d = await startDaemon({ env: { ENGINE_DEBUG_LOOP_STALL_MS: '10' } });
    await loadBusybox(d);
  });
  after(async () => d?.cleanup());

  test('an Env of 100 000 entries is created in under a second while /_ping keeps answering', async () => {
    const env = Array.from({ length: 100_000 }, (_v, i) => `VARIABLE_${i}=value-${i}`);
    const started = Date.now();
    const create = d.request('POST', '/containers/create', { body: { Image: 'busybox', Env: env } });
    const pings: number[] = [];
    let done = false;
    void create.finally(() => (done = true));
    while (!done) {
      const t = Date.now();
      await d.request('GET', '/_ping');
      pings.push(Date.now() - t);
    }
    const r = await create;
    assert.equal(r.status, 201, r.text());
    // The figure itself (≤ 1 s on a quiet machine, was 90 s) is the benchmark's; here the test only
    // guards against the quadratic merge coming back, with room for a loaded test machine.
    assert.ok(Date.now() - started < 5000, `create took ${Date.now() - started} ms`);
    const inspect = (await d.request('GET', `/containers/${r.json().Id}/json`)).json();
    assert.equal(inspect.Config.Env.filter((e: string) => e.startsWith('VARIABLE_')).length, 100_000);
    assert.ok(Math.max(0, ...pings) < 1000, `slowest /_ping during the create: ${Math.max(...pings)} ms`);
  });

  test('the largest bodies accepted never hold /_ping up for long; larger ones are a 400 naming the limit', async (t) => {
    // Each at one of the limits: the most labels, the longest Env, one string filling the body.
    const bodies: Array<[string, Record<string, unknown>]> = [
      [
        'labels',
        { Image: 'busybox', Labels: Object.fromEntries(Array.from({ length: MAX_MAP_ENTRIES }, (_v, i) => [`l.key.${i}`, `v${i}`])) },
      ],
      ['env', { Image: 'busybox', Env: Array.from({ length: MAX_ARRAY_ENTRIES }, (_v, i) => `V${i}=${i}`) }],
      ['string', { Image: 'busybox', Labels: { big: 'x'.repeat(MAX_JSON_BODY - 1024) } }],
    ];
    /** The most CPU time one stall of the event loop took since the daemon's output had `mark` characters. */
    const cpuStall = (mark: number): number => {
      let most = 0;
      for (const m of d.output.slice(mark).matchAll(/event loop stalled.*?\bcpuMs=([\d.]+)/g)) most = Math.max(most, Number(m[1]));
      return most;
    };
    const cpu: Record<string, number> = {};
    /** Runs the request while /_ping is polled back to back; returns the response and the slowest ping. */
    const whilePinging = async (req: Promise<HttpResult>, name?: string): Promise<[HttpResult, number]> => {
      const mark = d.output.length;
      let done = false;
      void req.finally(() => (done = true)).catch(() => undefined);
      let worst = 0;
      while (!done) {
        const t = performance.now();
        assert.equal((await d.request('GET', '/_ping')).status, 200);
        worst = Math.max(worst, performance.now() - t);
      }
      const r = await req;
      await new Promise((res) => setTimeout(res, 50)); // the stall log line of the last turn
      if (name) cpu[name] = Math.max(cpu[name] ?? 0, cpuStall(mark));
      return [r, worst];
    };
    /** The slowest /_ping of back-to-back pings for ms with nothing else asked: the machine's own noise. */
    const idleWorst = async (ms: number): Promise<number> => {
      let worst = 0;
      for (const end = performance.now() + ms; performance.now() < end;) {
        const t = performance.now();
        await d.request('GET', '/_ping');
        worst = Math.max(worst, performance.now() - t);
      }
      return worst;
    };
    const worst: Record<string, number> = {};
    let noise = 0;
    /** One body's round: create, inspect, list, the events replay and remove, each while pinging. */
    const roundOf = async (name: string, body: Record<string, unknown>): Promise<void> => {
      noise = Math.max(noise, await idleWorst(1000));
      const payload = Buffer.from(JSON.stringify(body));
      assert.ok(payload.length <= MAX_JSON_BODY, `${name}: ${payload.length} bytes`);
      const since = Math.floor(Date.now() / 1000);
      const [c, createPing] = await whilePinging(
        d.request('POST', '/containers/create', { body: payload, headers: { 'Content-Type': 'application/json' } }),
        name,
      );
      assert.equal(c.status, 201, c.text().slice(0, 200));
      const id = c.json().Id;
      const [i, inspectPing] = await whilePinging(d.request('GET', `/containers/${id}/json`), name);
      assert.equal(i.status, 200);
      const [l, listPing] = await whilePinging(d.request('GET', '/containers/json?all=1'), name);
      assert.equal(l.status, 200);
      // The replay of its create event (attributes as large as the body).
      const [e, eventsPing] = await whilePinging(
        d.request('GET', `/events?since=${since}&until=${Math.floor(Date.now() / 1000) + 1}`),
        name,
      );
      assert.equal(e.status, 200);
      const created = e
        .text()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
        .find((ev) => ev.Action === 'create' && ev.Actor.ID === id);
      assert.deepEqual(created?.Actor.Attributes, { ...((body.Labels as object) ?? {}), image: 'busybox', name: i.json().Name.slice(1) });
      const [r, rmPing] = await whilePinging(d.request('DELETE', `/containers/${id}`), name);
      assert.equal(r.status, 204, r.text());
      worst[name] = Math.round(Math.max(createPing, inspectPing, listPing, eventsPing, rmPing));
    };
    for (const [name, body] of bodies) await roundOf(name, body);
    // The figure itself (goal 50 ms on a quiet machine) is bench/loop-stalls.ts's; here the test guards
    // against whole-second stalls coming back (before the bounds, one body held the loop ~2 s), with
    // room for a loaded CI machine, which deschedules the daemon whatever it does: 1 s on top of twice
    // the slowest idle /_ping (seen: 1 095 ms with 217 ms idle at load 15 on 2 cores).
    t.diagnostic(`slowest /_ping per body: ${JSON.stringify(worst)} ms, idle: ${Math.round(noise)} ms`);
    for (const [name, ms] of Object.entries(worst)) {
      assert.ok(
        ms <= 1000 + 2 * noise,
        `slowest /_ping during the ${name} body: ${ms} ms, idle: ${Math.round(noise)} ms (all: ${JSON.stringify(worst)})`,
      );
    }
    // The tight guard: the CPU time of the longest synchronous stretch, which the load on the machine
    // hardly moves (its wall time it does: the daemon waits for a core). Seen at load 18–30 on 2
    // cores: ≤ 32 ms for these requests; before the sliced JSON and reused texts, up to 74 ms.
    // A body over the bound gets one more round and keeps the lower of the two: a regression
    // repeats, while a lone outlier does not (one clean-clone run saw 91 ms for the string body
    // where ~40 other runs saw 17–37: two busy vCPUs sharing a core slow a thread's own CPU time).
    for (const [name, body] of bodies) {
      if ((cpu[name] ?? 0) <= 75) continue;
      const first = cpu[name] ?? 0;
      delete cpu[name];
      await roundOf(name, body);
      t.diagnostic(`${name}: ${first} ms of CPU in one stall, ${cpu[name]} ms on the second round`);
      cpu[name] = Math.min(first, cpu[name] ?? 0);
    }
    t.diagnostic(`most CPU in one stall per body: ${JSON.stringify(cpu)} ms`);
    for (const [name, ms] of Object.entries(cpu)) {
      assert.ok(ms <= 75, `a stall of the event loop during the ${name} body took ${ms} ms of CPU (all: ${JSON.stringify(cpu)})`);
    }

    const over: Array<[Record<string, unknown> | Buffer, RegExp]> = [
      [
        { Image: 'busybox', Labels: Object.fromEntries(Array.from({ length: MAX_MAP_ENTRIES + 1 }, (_v, i) => [`k${i}`, ''])) },
        /Labels: too many entries/,
      ],
      [{ Image: 'busybox', Env: Array.from({ length: MAX_ARRAY_ENTRIES + 1 }, (_v, i) => `V${i}=`) }, /Env: too many entries/],
      [
        { Image: 'busybox', HostConfig: { Binds: Array.from({ length: MAX_ARRAY_ENTRIES + 1 }, () => '/a:/b') } },
        /Binds: too many entries/,
      ],
      [Buffer.from(JSON.stringify({ Image: 'busybox', Labels: { big: 'x'.repeat(MAX_JSON_BODY) } })), /request body is too large/],
    ];
    const before = (await d.request('GET', '/containers/json?all=1')).json().length;
    for (const [body, message] of over) {
      const r = await d.request('POST', '/containers/create', { body, headers: { 'Content-Type': 'application/json' } });
      assert.equal(r.status, 400, r.text().slice(0, 200));
      assert.match(r.json().message, message);
    }
    assert.equal((await d.request('GET', '/containers/json?all=1')).json().length, before, 'nothing refused was created');
  });

  test('a malformed update is a 400 naming the field and never reaches the record', async () => {
    const c = await d.request('POST', '/containers/create?name=upd', { body: { Image: 'busybox', Cmd: ['sleep', '60'] } });
    assert.equal(c.status, 201);
    // Sent as text: deeply nested JSON is exactly what a hostile client writes by hand.
    const deep = `{"CpusetCpus":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    for (const [body, field] of [
      [deep, 'CpusetCpus'],
      [{ Memory: 'lots' }, 'Memory'],
      [{ RestartPolicy: { Name: 7 } }, 'RestartPolicy.Name'],
      [{ BlkioWeight: 70000 }, 'BlkioWeight'],
    ] as const) {
      const r = await d.request('POST', '/containers/upd/update', { body, headers: { 'Content-Type': 'application/json' } });
      assert.equal(r.status, 400, `${field}: ${r.text().slice(0, 200)}`);
      assert.match(r.json().message, new RegExp(field.replace('.', '\\.')));
    }
    const ok = await d.request('POST', '/containers/upd/update', {
      body: { Memory: 64 * 1024 * 1024, RestartPolicy: { Name: 'on-failure', MaximumRetryCount: 2 } },
    });
    assert.equal(ok.status, 200, ok.text());
    const hc = (await d.request('GET', '/containers/upd/json')).json().HostConfig;
    assert.equal(hc.Memory, 64 * 1024 * 1024);
    assert.ok(!Array.isArray(hc.CpusetCpus), 'the nested array never reached the record');
    assert.deepEqual(hc.RestartPolicy, { Name: 'on-failure', MaximumRetryCount: 2 });
    const rm = await d.docker(['rm', '-f', 'upd']);
    assert.equal(rm.code, 0, rm.stderr);
  });
});

describe('HTTP-level errors and disconnects', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon();
  });
  after(async () => d?.cleanup());

  const raw = (text: string, halfClose = false): HostileCase => ({ name: 'raw', bytes: Buffer.from(text, 'latin1'), halfClose });

  test('requests the parser refuses get a status with a JSON message; CONNECT is answered', async () => {
    const cases: Array<[string, HostileCase, number, RegExp]> = [
      [
        'bad chunk framing',
        raw('POST /containers/create HTTP/1.1\r\nHost: e\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n'),
        400,
        /chunked/,
      ],
      [
        'Content-Length with Transfer-Encoding',
        raw('POST /containers/create HTTP/1.1\r\nHost: e\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'),
        400,
        /Transfer-Encoding/,
      ],
      ['unknown HTTP version', raw('GET /_ping HTTP/7.3\r\nHost: e\r\n\r\n'), 400, /HTTP version/],
      ['bad method token', raw('G(T /_ping HTTP/1.1\r\nHost: e\r\n\r\n'), 400, /method/],
      ['oversized headers', raw(`GET /_ping HTTP/1.1\r\nHost: e\r\nX-Big: ${'a'.repeat(1100 * 1024)}\r\n\r\n`), 431, /header/],
      [
        'truncated body, half-closed',
        raw('POST /volumes/create HTTP/1.1\r\nHost: e\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"Name":', true),
        400,
        /closed before the end of the request body/,
      ],
      ['negative Content-Length', raw('POST /volumes/create HTTP/1.1\r\nHost: e\r\nContent-Length: -5\r\n\r\n{}'), 400, /Content-Length/],
      ['CONNECT', raw('CONNECT engine:443 HTTP/1.1\r\nHost: engine:443\r\n\r\n'), 404, /page not found/],
      [
        'broken %-escape in a path',
        raw('GET /containers/%zz/json HTTP/1.1\r\nHost: e\r\nConnection: close\r\n\r\n'),
        400,
        /invalid URL escape/,
      ],
    ];
    for (const [what, c, status, message] of cases) {
      const o = await sendCase(d.socket, c, 10_000);
      assert.equal(o.status, status, `${what}: ${JSON.stringify(o)}`);
      assert.match(o.contentType ?? '', /application\/json/, what);
      assert.match(JSON.parse(o.body).message, message, what);
    }
    // The volume of the truncated body was never created.
    assert.deepEqual((await d.request('GET', '/volumes')).json().Volumes, []);
  });

  test('a client that disconnects mid-request is a debug line, not a 500 with a stack trace', async () => {
    const before = d.output.length;
    for (let i = 0; i < 5; i++) {
      await sendCase(
        d.socket,
        {
          ...raw(
            'POST /containers/create HTTP/1.1\r\nHost: e\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"Image":"bus',
          ),
          abortAfterMs: 5,
        },
        5000,
      );
      await sendCase(d.socket, { ...raw('GET /containers/json?all=1 HTTP/1.1\r\nHost: e\r\n\r\n'), abortAfterMs: 0 }, 5000);
    }
    assert.equal((await d.request('GET', '/_ping')).status, 200);
    const logged = d.output.slice(before);
    assert.doesNotMatch(logged, /handler error|request failed|"status":500|\bstack\b/i, logged);
  });
});

describe('dockerd answers clients depend on', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
    const r = await d.docker(['run', '-d', '--name', 'box', 'busybox', 'sleep', '3600']);
    assert.equal(r.code, 0, r.stderr);
  });
  after(async () => d?.cleanup());

  const execStart = async (execTty: boolean, startTty: boolean) => {
    const e = await d.request('POST', '/containers/box/exec', { body: { Cmd: ['echo', 'hi'], AttachStdout: true, Tty: execTty } });
    assert.equal(e.status, 201, e.text());
    return d.request('POST', `/exec/${e.json().Id}/start`, { body: { Detach: false, Tty: startTty } });
  };

  test('exec start multiplexes unless the start request says Tty:true, whatever the exec was created with', async () => {
    const framed = await execStart(true, false);
    assert.equal(framed.status, 200);
    // stdout frame: stream 1, three zero bytes, big-endian length, then the TTY's "hi\r\n".
    assert.deepEqual(framed.body, Buffer.concat([Buffer.from([1, 0, 0, 0, 0, 0, 0, 4]), Buffer.from('hi\r\n')]));
    const rawTty = await execStart(true, true);
    assert.deepEqual(rawTty.body, Buffer.from('hi\r\n'));
    const rawPlain = await execStart(false, true);
    assert.deepEqual(rawPlain.body, Buffer.from('hi\n'));
  });

  test('exec of a file that is not executable exits 126; a missing binary 127', async () => {
    const notExec = await d.docker(['exec', 'box', '/etc/passwd']);
    assert.equal(notExec.code, 126, notExec.stderr);
    assert.match(notExec.stdout + notExec.stderr, /permission denied/);
    const missing = await d.docker(['exec', 'box', '/no/such/binary']);
    assert.equal(missing.code, 127, missing.stderr);
  });

  test('HostConfig.Links: checked at create as dockerd does, shown by inspect as registered names', async () => {
    const create = (hc: Record<string, unknown>) => d.request('POST', '/containers/create', { body: { Image: 'busybox', HostConfig: hc } });
    for (const [hc, message] of [
      [{ Links: ['nosuch:x'] }, /^could not get container for nosuch: No such container: nosuch$/],
      [{ Links: ['box:a:b'] }, /^bad format for links: box:a:b$/],
      [{ Links: [''] }, /^empty string specified for links$/],
      [{ Links: ['box'], NetworkMode: 'host' }, /host type networking can't be used with links/],
      [{ Links: ['box'], NetworkMode: 'container:box' }, /container type network can't be used with links/],
    ] as const) {
      const r = await create(hc);
      assert.equal(r.status, 400, `${JSON.stringify(hc)}: ${r.text()}`);
      assert.match(r.json().message, message);
    }
    const c = await d.request('POST', '/containers/create?name=linker', {
      body: { Image: 'busybox', HostConfig: { Links: ['box:data', '/box:/linker/other', 'box'] } },
    });
    assert.equal(c.status, 201, c.text());
    const hc = (await d.request('GET', '/containers/linker/json')).json().HostConfig;
    assert.deepEqual(hc.Links, ['/box:/linker/data', '/box:/linker/other', '/box:/linker/box']);
    const plain = await create({});
    assert.equal((await d.request('GET', `/containers/${plain.json().Id}/json`)).json().HostConfig.Links, null);
    for (const id of ['linker', plain.json().Id]) assert.equal((await d.request('DELETE', `/containers/${id}`)).status, 204);
  });

  test('DELETE /containers/{parent}/{alias}?link=1 removes a legacy link, and only it', async () => {
    assert.equal((await d.docker(['run', '-d', '--name', 'web', '--link', 'box:data', 'busybox', 'sleep', '3600'])).code, 0);
    assert.equal((await d.request('DELETE', '/containers/web/data')).status, 404, 'without link=1 it names no container');
    const rm = await d.docker(['rm', '--link', 'web/data']);
    assert.equal(rm.code, 0, rm.stderr);
    const web = (await d.request('GET', '/containers/web/json')).json();
    assert.ok(!(web.HostConfig.Links ?? []).some((l: string) => /data/.test(l)), JSON.stringify(web.HostConfig.Links));
    assert.equal(web.State.Running, true);
    assert.equal((await d.request('GET', '/containers/box/json')).json().State.Running, true);
    const again = await d.request('DELETE', '/containers/web/data?link=1');
    assert.equal(again.status, 404);
    assert.match(again.json().message, /No such container: web\/data/);
    assert.equal((await d.request('DELETE', '/containers/web?link=1')).status, 409);
  });

  test('volume prune before API 1.42 removes named unused volumes too; VolumesDeleted is always a list', async () => {
    for (const name of ['named-a', 'named-b'])
      assert.equal((await d.request('POST', '/volumes/create', { body: { Name: name } })).status, 201);
    const modern = await d.request('POST', '/v1.51/volumes/prune');
    assert.deepEqual(modern.json(), { VolumesDeleted: [], SpaceReclaimed: 0 });
    const old = await d.request('POST', '/v1.41/volumes/prune');
    assert.equal(old.status, 200);
    assert.deepEqual(old.json().VolumesDeleted.sort(), ['named-a', 'named-b']);
    assert.deepEqual((await d.request('GET', '/volumes')).json().Volumes, []);
  });

  test('user networks: names with spaces, link aliases through the network DNS, Aliases with the short ID before 1.45', async () => {
    const net = 'test 01';
    const created = await d.docker(['network', 'create', net]);
    assert.equal(created.code, 0, created.stderr);
    const other = await d.docker(['run', '-d', '--name', 'other', '--network', net, 'busybox', 'sleep', '3600']);
    assert.equal(other.code, 0, other.stderr);
    const ip = (await d.request('GET', '/containers/other/json')).json().NetworkSettings.Networks[net].IPAddress as string;
    assert.match(ip, /^\d+\.\d+\.\d+\.\d+$/);
    // The alias resolves for the linking container only, to the linked container's address.
    const linked = await d.docker(['run', '--rm', '--network', net, '--link', 'other:al', 'busybox', 'nslookup', 'al']);
    assert.equal(linked.code, 0, linked.stdout + linked.stderr);
    assert.match(linked.stdout, new RegExp(`Address: ${ip.replace(/\./g, '\\.')}\\b`));
    const unlinked = await d.docker(['run', '--rm', '--network', net, 'busybox', 'nslookup', 'al']);
    assert.notEqual(unlinked.code, 0, unlinked.stdout);
    const id = (await d.request('GET', '/containers/other/json')).json().Id as string;
    const old = (await d.request('GET', '/v1.44/containers/other/json')).json().NetworkSettings.Networks[net].Aliases as string[];
    assert.ok(old.includes(id.slice(0, 12)), JSON.stringify(old));
    const current = (await d.request('GET', '/v1.45/containers/other/json')).json().NetworkSettings.Networks[net].Aliases as
      string[] | null;
    assert.ok(!(current ?? []).includes(id.slice(0, 12)), JSON.stringify(current));
    assert.equal((await d.docker(['rm', '-f', 'other'])).code, 0);
    assert.equal((await d.docker(['network', 'rm', net])).code, 0);
  });
});
