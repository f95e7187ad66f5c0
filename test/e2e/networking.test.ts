// Issue 5: real networking — the default bridge, user networks with embedded DNS, port publishing
// (DNAT and the userland proxy), isolation, internal networks, host/none modes, connect and
// disconnect, static addresses, daemon options, and clean-up after removal and after kill -9.
// The machine has no outside network: a second network namespace on the host plays the outside
// host (a client of published ports, and a server containers reach through NAT).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { aRecord, buildReply, parseQuery, RCODE_NXDOMAIN, TYPE_A } from '../../src/network/dns/dns-message.ts';
import { daemonTag } from '../../src/network/naming.ts';
import { daemonLinks, removeDaemonNetworking } from '../helpers/network-teardown.ts';
import { REPO_ROOT, run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { httpGet, OutsideHost, sh } from '../helpers/outside-host.ts';
import { until } from '../helpers/until.ts';

/** A per-daemon default bridge name: daemons of parallel test files must not share one. */
function testBridge(): string {
  return `engt${randomBytes(3).toString('hex')}`;
}

function ourRules(save: string, execRoot: string): string[] {
  const prefix = `ENGINE-${daemonTag(execRoot)}`;
  return save.split('\n').filter((l) => l.includes(prefix));
}

async function iptablesSave(): Promise<string> {
  return sh('iptables-save', []);
}

/** Host links enslaved to a bridge (the containers' veth ends). */
async function portsOf(bridge: string): Promise<string[]> {
  const out = await run('ip', ['-o', 'link', 'show', 'master', bridge]);
  return out.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(':')[1]!.trim().split('@')[0]!);
}

/** A stand-in upstream resolver on a host loopback address: answers A queries from a table. */
async function fakeResolver(address: string, table: Record<string, string>): Promise<UdpSocket> {
  const sock = createSocket('udp4');
  sock.on('message', (msg, rinfo) => {
    try {
      const q = parseQuery(msg);
      const ip = table[q.question.name.toLowerCase()];
      const reply =
        ip && q.question.type === TYPE_A
          ? buildReply(msg, q, 0, [
              aRecord(
                ip.split('.').reduce((a, o) => a * 256 + Number(o), 0),
                30,
              ),
            ])
          : buildReply(msg, q, RCODE_NXDOMAIN);
      sock.send(reply, rinfo.port, rinfo.address);
    } catch {
      // not a query
    }
  });
  await new Promise<void>((resolve) => sock.bind(53, address, () => resolve()));
  return sock;
}

async function inspect(d: TestDaemon, ref: string): Promise<any> {
  const r = await d.docker(['inspect', ref]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout)[0];
}

async function hostPort(d: TestDaemon, ref: string, spec: string): Promise<number> {
  const r = await d.docker(['port', ref, spec]);
  assert.equal(r.code, 0, r.stderr);
  return Number(r.stdout.split('\n')[0]!.split(':').pop());
}

const UDP_ECHO = "const s=require('dgram').createSocket('udp4');s.on('message',(m,r)=>s.send('pong '+m,r.port,r.address));s.bind(53)";

const HTTPD = ['sh', '-c', 'mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 80 -h /www'];

describe('networking: default bridge, user networks, ports, DNS', () => {
  let d: TestDaemon;
  let outside: OutsideHost;
  let resolver: UdpSocket;
  const bridge = testBridge();
  const resolverIp = `127.0.${Math.floor(Math.random() * 200) + 20}.53`;

  before(async () => {
    d = await startDaemon({ env: { ENGINE_DEFAULT_BRIDGE: bridge } });
    await loadBusybox(d);
    outside = await OutsideHost.create();
    await outside.serve(9000);
    resolver = await fakeResolver(resolverIp, { 'outside.example.test': outside.ip });
  });
  after(async () => {
    resolver?.close();
    await outside?.destroy();
    if (d) {
      await d.cleanup();
      await removeDaemonNetworking(d.execRoot);
    }
  });

  test("the predefined networks exist, show dockerd's shape, and cannot be removed", async () => {
    const ls = await d.docker(['network', 'ls', '--format', '{{.Name}} {{.Driver}} {{.Scope}}']);
    assert.equal(ls.code, 0, ls.stderr);
    assert.deepEqual(ls.stdout.trim().split('\n').sort(), ['bridge bridge local', 'host host local', 'none null local']);
    const net = (await d.request('GET', '/networks/bridge')).json();
    assert.match(net.Id, /^[0-9a-f]{64}$/);
    assert.equal(net.Driver, 'bridge');
    assert.equal(net.Options['com.engine.network.bridge.name'], bridge);
    assert.equal(net.Options['com.engine.network.bridge.default_bridge'], 'true');
    const [cfg] = net.IPAM.Config;
    assert.match(cfg.Subnet, /^\d+\.\d+\.\d+\.\d+\/\d+$/);
    // The bridge exists on the host with the gateway address.
    const addrs = await sh('ip', ['-4', '-o', 'addr', 'show', 'dev', bridge]);
    assert.match(addrs, new RegExp(`inet ${cfg.Gateway.replace(/\./g, '\\.')}/${cfg.Subnet.split('/')[1]}`));
    for (const name of ['bridge', 'host', 'none']) {
      const rm = await d.request('DELETE', `/networks/${name}`);
      assert.equal(rm.status, 403);
      assert.equal(rm.json().message, `${name} is a pre-defined network and cannot be removed`);
    }
    const create = await d.request('POST', '/networks/create', { body: { Name: 'host' } });
    assert.equal(create.status, 403);
  });

  test('a container on the default bridge gets an address, a route, /etc/hosts and NetworkSettings', async () => {
    const net = (await d.request('GET', '/networks/bridge')).json();
    const run1 = await d.docker(['run', '-d', '--name', 'b1', 'busybox', 'sleep', '300']);
    assert.equal(run1.code, 0, run1.stderr);
    const info = await inspect(d, 'b1');
    const ep = info.NetworkSettings.Networks.bridge;
    assert.equal(ep.NetworkID, net.Id, 'NetworkID is the network ID, not a name');
    assert.match(ep.EndpointID, /^[0-9a-f]{64}$/);
    assert.equal(ep.Gateway, net.IPAM.Config[0].Gateway);
    assert.equal(ep.IPPrefixLen, Number(net.IPAM.Config[0].Subnet.split('/')[1]));
    assert.equal(info.NetworkSettings.IPAddress, ep.IPAddress);
    assert.equal(info.NetworkSettings.MacAddress, ep.MacAddress);
    assert.equal(ep.DNSNames, null, 'no name resolution on the default bridge');
    assert.match(info.NetworkSettings.SandboxKey, /\/netns\/[0-9a-f]{64}$/);
    const inside = await d.docker(['exec', 'b1', 'sh', '-c', 'ip -4 -o addr show eth0; ip route; cat /etc/hosts']);
    assert.equal(inside.code, 0, inside.stderr);
    assert.match(inside.stdout, new RegExp(`inet ${ep.IPAddress.replace(/\./g, '\\.')}/${ep.IPPrefixLen}`));
    assert.match(inside.stdout, new RegExp(`default via ${ep.Gateway.replace(/\./g, '\\.')} dev eth0`));
    assert.match(inside.stdout, new RegExp(`^${ep.IPAddress.replace(/\./g, '\\.')}\\t${info.Config.Hostname}$`, 'm'));
    // The host reaches the container and the container the bridge's gateway.
    const ping = await d.docker(['exec', 'b1', 'ping', '-c', '1', '-W', '2', ep.Gateway]);
    assert.equal(ping.code, 0, ping.stdout + ping.stderr);
    // The network lists it; the list entry carries the networks too.
    const nInspect = (await d.request('GET', '/networks/bridge')).json();
    assert.equal(nInspect.Containers[info.Id].IPv4Address, `${ep.IPAddress}/${ep.IPPrefixLen}`);
    const list = (await d.request('GET', '/containers/json')).json().find((c: any) => c.Id === info.Id);
    assert.equal(list.NetworkSettings.Networks.bridge.IPAddress, ep.IPAddress);
    // ps --filter network=bridge, by name and by ID.
    for (const v of ['bridge', net.Id]) {
      const ps = await d.docker(['ps', '-q', '--no-trunc', '--filter', `network=${v}`]);
      assert.match(ps.stdout, new RegExp(info.Id));
    }
    const veth = await portsOf(net.Options['com.engine.network.bridge.name']);
    assert.equal(veth.length >= 1, true);
    assert.equal((await d.docker(['rm', '-f', 'b1'])).code, 0);
    await until('the veth to go', async () => ((await portsOf(bridge)).some((v) => veth.includes(v)) ? undefined : true));
  });

  test('a stopped container keeps its network configuration but no addresses', async () => {
    const r = await d.docker(['run', '--name', 'b2', 'busybox', 'true']);
    assert.equal(r.code, 0, r.stderr);
    const ep = (await inspect(d, 'b2')).NetworkSettings.Networks.bridge;
    assert.match(ep.NetworkID, /^[0-9a-f]{64}$/);
    assert.equal(ep.IPAddress, '');
    assert.equal(ep.EndpointID, '');
    await d.docker(['rm', 'b2']);
  });

  test('published ports: reachable from the host (proxy and DNAT) and from the outside namespace', async () => {
    const r = await d.docker([
      'run',
      '-d',
      '--name',
      'web',
      '--hostname',
      'webhost',
      '-p',
      '80',
      '-p',
      '127.0.0.1::80',
      'busybox',
      ...HTTPD,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const info = await inspect(d, 'web');
    const bindings = info.NetworkSettings.Ports['80/tcp'];
    // As dockerd on a host with IPv6: the address-less binding is published on 0.0.0.0 and ::.
    assert.deepEqual(
      bindings.map((b: any) => b.HostIp),
      ['0.0.0.0', '::', '127.0.0.1'],
    );
    const any = bindings.find((b: any) => b.HostIp === '0.0.0.0');
    const local = bindings.find((b: any) => b.HostIp === '127.0.0.1');
    assert.equal(bindings[1].HostPort, any.HostPort, 'the same port on both families');
    const port = Number(any.HostPort);
    assert.ok(port >= 1024, `ephemeral port ${port}`);
    // Loopback goes through the userland proxy, the host's own other address through DNAT (OUTPUT).
    const viaLoopback = await until('the proxy to answer', async () =>
      (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(3000) })).text(),
    );
    assert.equal(viaLoopback.trim(), 'webhost');
    assert.equal((await (await fetch(`http://127.0.0.1:${local.HostPort}/`)).text()).trim(), 'webhost');
    assert.equal((await (await fetch(`http://${outside.hostIp}:${port}/`)).text()).trim(), 'webhost');
    // From the outside: DNAT in PREROUTING.
    assert.equal((await outside.get(outside.hostIp, port))?.trim(), 'webhost');
    // A port published on 127.0.0.1 only is not reachable from outside.
    assert.equal(await outside.get(outside.hostIp, Number(local.HostPort)), undefined);
    // The container's own address is not reachable from outside (only through DNAT).
    assert.equal(await outside.get(info.NetworkSettings.IPAddress, 80), undefined);
    // docker ps shows the mapping; docker port too.
    const ps = await d.docker(['ps', '--filter', 'name=web', '--format', '{{.Ports}}']);
    assert.match(ps.stdout, new RegExp(`0\\.0\\.0\\.0:${port}->80/tcp`));
    assert.match(ps.stdout, new RegExp(`\\[::\\]:${port}->80/tcp`));
    // The IPv6 side of an IPv4-only container is the proxy's (dual-stack listener).
    assert.equal((await (await fetch(`http://[::1]:${port}/`)).text()).trim(), 'webhost');
    assert.equal(await hostPort(d, 'web', '80/tcp'), port);
    const rules = ourRules(await iptablesSave(), d.execRoot);
    assert.equal(
      rules.filter((l) => l.includes(`--dport ${port} -j DNAT --to-destination ${info.NetworkSettings.IPAddress}:80`)).length,
      1,
      rules.join('\n'),
    );
    // Removal takes the rules and the listener with it.
    assert.equal((await d.docker(['rm', '-f', 'web'])).code, 0);
    assert.equal(
      ourRules(await iptablesSave(), d.execRoot).some((l) => l.includes('DNAT')),
      false,
    );
    await assert.rejects(fetch(`http://127.0.0.1:${port}/`));
  });

  test('a fixed host port in use is a clear error at start, UDP ports and -P work', async () => {
    const port = 20000 + Math.floor(Math.random() * 10000);
    const a = await d.docker(['run', '-d', '--name', 'p1', '-p', `${port}:80`, 'busybox', ...HTTPD]);
    assert.equal(a.code, 0, a.stderr);
    const b = await d.docker(['run', '-d', '--name', 'p2', '-p', `${port}:80`, 'busybox', ...HTTPD]);
    assert.notEqual(b.code, 0);
    assert.match(b.stderr, new RegExp(`Bind for 0\\.0\\.0\\.0:${port} failed: port is already allocated`));
    const p2 = await inspect(d, 'p2');
    assert.equal(p2.State.Running, false);
    await until("the failed start's veth to go", async () => ((await portsOf(bridge)).length === 1 ? true : undefined), 5000);
    // UDP: an echo server (the host's node, run in the container through a read-only bind of /;
    // busybox has no UDP server), reached through the proxy and, from outside, through DNAT.
    const u = await d.docker([
      'run',
      '-d',
      '--name',
      'u1',
      '-p',
      '53/udp',
      '--expose',
      '7000',
      '-P',
      '-v',
      '/:/host:ro',
      'busybox',
      'chroot',
      '/host',
      join(REPO_ROOT, 'bin/node'),
      '-e',
      UDP_ECHO,
    ]);
    assert.equal(u.code, 0, u.stderr);
    const uinfo = await inspect(d, 'u1');
    const uport = Number(uinfo.NetworkSettings.Ports['53/udp'][0].HostPort);
    assert.ok(Number(uinfo.NetworkSettings.Ports['7000/tcp'][0].HostPort) > 0, '-P publishes exposed ports');
    const answer = await until(
      'a UDP answer',
      () =>
        new Promise<string | undefined>((resolve) => {
          const s = createSocket('udp4');
          const t = setTimeout(() => {
            s.close();
            resolve(undefined);
          }, 1000);
          s.on('message', (m) => {
            clearTimeout(t);
            s.close();
            resolve(m.toString());
          });
          s.send('ping', uport, '127.0.0.1');
        }),
    );
    assert.equal(answer, 'pong ping');
    assert.equal(await outside.udp(outside.hostIp, uport, 'outside'), 'pong outside');
    await d.docker(['rm', '-f', 'p1', 'p2', 'u1']);
  });

  test('containers reach the outside through NAT (masqueraded to the host address)', async () => {
    const r = await d.docker(['run', '--rm', 'busybox', 'sh', '-c', httpGet(outside.ip, 9000)]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), outside.hostIp);
  });

  test('user network: names, aliases, short IDs and <name>.<network> resolve; other names are forwarded', async () => {
    const c = await d.docker(['network', 'create', '--label', 'purpose=test', 'app']);
    assert.equal(c.code, 0, c.stderr);
    const netId = c.stdout.trim();
    assert.match(netId, /^[0-9a-f]{64}$/);
    const dup = await d.request('POST', '/networks/create', { body: { Name: 'app' } });
    assert.equal(dup.status, 409);
    assert.equal(dup.json().message, 'network with name app already exists');
    const db = await d.docker(['run', '-d', '--name', 'db', '--network', 'app', '--network-alias', 'database', 'busybox', 'sleep', '300']);
    assert.equal(db.code, 0, db.stderr);
    const dbInfo = await inspect(d, 'db');
    const ep = dbInfo.NetworkSettings.Networks.app;
    assert.equal(ep.NetworkID, netId);
    assert.deepEqual(ep.Aliases, ['database']);
    assert.deepEqual(ep.DNSNames, ['db', 'database', dbInfo.Id.slice(0, 12)]);
    assert.equal(dbInfo.NetworkSettings.IPAddress, '', 'top-level fields are for the default bridge only');
    const script = [
      'for n in db database ' + dbInfo.Id.slice(0, 12) + ' db.app; do nslookup $n | grep -A1 "^Name:" | tail -1; done',
      'ping -c 1 -W 2 db >/dev/null && echo ping-ok',
      'nslookup outside.example.test | grep -A1 "^Name:" | tail -1',
      httpGet('outside.example.test', 9000),
      'echo',
      'cat /etc/resolv.conf',
    ].join('; ');
    const r = await d.docker(['run', '--rm', '--network', 'app', '--dns', resolverIp, 'busybox', 'sh', '-c', script]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    for (let i = 0; i < 4; i++) assert.equal(lines[i], `Address: ${ep.IPAddress}`, r.stdout);
    assert.equal(lines[4], 'ping-ok');
    assert.equal(lines[5], `Address: ${outside.ip}`);
    assert.equal(lines[6], outside.hostIp);
    const gateway = (await d.request('GET', '/networks/app')).json().IPAM.Config[0].Gateway;
    assert.match(r.stdout, new RegExp(`nameserver ${gateway.replace(/\./g, '\\.')}`));
    // The network inspect lists the container; filters find the network.
    const n = (await d.request('GET', '/networks/app')).json();
    assert.equal(n.Containers[dbInfo.Id].Name, 'db');
    assert.deepEqual(n.Labels, { purpose: 'test' });
    const byLabel = await d.docker(['network', 'ls', '-q', '--no-trunc', '--filter', 'label=purpose=test']);
    assert.equal(byLabel.stdout.trim(), netId);
    const custom = await d.docker(['network', 'ls', '--format', '{{.Name}}', '--filter', 'type=custom']);
    assert.equal(custom.stdout.trim(), 'app');
  });

  test('containers on different user networks cannot reach each other; an internal network has no egress', async () => {
    assert.equal((await d.docker(['network', 'create', 'other'])).code, 0);
    const dbIp = (await inspect(d, 'db')).NetworkSettings.Networks.app.IPAddress;
    const cross = await d.docker(['run', '--rm', '--network', 'other', 'busybox', 'ping', '-c', '1', '-W', '2', dbIp]);
    assert.notEqual(cross.code, 0, 'other → app must be dropped');
    // Names of another network do not resolve either, not even asking that network's resolver.
    const name = await d.docker(['run', '--rm', '--network', 'other', 'busybox', 'nslookup', 'db']);
    assert.notEqual(name.code, 0);
    const appDns = (await d.request('GET', '/networks/app')).json().IPAM.Config[0].Gateway;
    const sneaky = await d.docker(['run', '--rm', '--network', 'other', 'busybox', 'nslookup', 'db', appDns]);
    assert.doesNotMatch(sneaky.stdout, new RegExp(dbIp.replace(/\./g, '\\.')));
    const mk = await d.docker(['network', 'create', '--internal', 'sealed']);
    assert.equal(mk.code, 0, mk.stderr);
    assert.equal((await d.docker(['run', '-d', '--name', 'in1', '--network', 'sealed', 'busybox', 'sleep', '300'])).code, 0);
    const inner = await d.docker([
      'run',
      '--rm',
      '--network',
      'sealed',
      'busybox',
      'sh',
      '-c',
      `ping -c 1 -W 2 in1 >/dev/null && echo inside-ok; [ -z "$(${httpGet(outside.ip, 9000)})" ] && echo no-egress; ip route`,
    ]);
    assert.match(inner.stdout, /inside-ok/);
    assert.match(inner.stdout, /no-egress/);
    assert.doesNotMatch(inner.stdout, /default via/, 'no default route on an internal network');
    await d.docker(['rm', '-f', 'in1']);
    assert.equal((await d.docker(['network', 'rm', 'sealed', 'other'])).code, 0);
  });

  test('connect and disconnect a running container; static addresses', async () => {
    const mk = await d.docker(['network', 'create', '--subnet', '10.231.77.0/24', '--gateway', '10.231.77.254', 'fixed']);
    assert.equal(mk.code, 0, mk.stderr);
    const bad = await d.docker(['run', '--rm', '--network', 'app', '--ip', '10.1.2.3', 'busybox', 'true']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /user specified IP address is supported only when connecting to networks with user configured subnets/);
    const outOfRange = await d.docker(['create', '--network', 'fixed', '--ip', '10.9.9.9', 'busybox', 'true']);
    assert.match(outOfRange.stderr, /no configured subnet or ip-range contain the IP address 10\.9\.9\.9/);
    const s = await d.docker(['run', '-d', '--name', 'st', '--network', 'fixed', '--ip', '10.231.77.50', 'busybox', 'sleep', '300']);
    assert.equal(s.code, 0, s.stderr);
    const st = await inspect(d, 'st');
    assert.equal(st.NetworkSettings.Networks.fixed.IPAddress, '10.231.77.50');
    assert.equal(st.NetworkSettings.Networks.fixed.Gateway, '10.231.77.254');
    assert.deepEqual(st.NetworkSettings.Networks.fixed.IPAMConfig, { IPv4Address: '10.231.77.50' });
    const taken = await d.docker(['run', '--rm', '--network', 'fixed', '--ip', '10.231.77.50', 'busybox', 'true']);
    assert.notEqual(taken.code, 0);
    assert.match(taken.stderr, /Address already in use/);
    // connect the running container to "app" with an alias: a second interface, and the name resolves there.
    const con = await d.docker(['network', 'connect', '--alias', 'stat', 'app', 'st']);
    assert.equal(con.code, 0, con.stderr);
    const after1 = await inspect(d, 'st');
    const appIp = after1.NetworkSettings.Networks.app.IPAddress;
    assert.match(appIp, /^\d+\.\d+\.\d+\.\d+$/);
    const ifs = await d.docker(['exec', 'st', 'ip', '-4', '-o', 'addr']);
    assert.match(ifs.stdout, /eth0 +inet 10\.231\.77\.50\/24/);
    assert.match(ifs.stdout, new RegExp(`eth1 +inet ${appIp.replace(/\./g, '\\.')}/`));
    const look = await d.docker(['exec', 'db', 'nslookup', 'stat']);
    assert.match(look.stdout, new RegExp(`Address: ${appIp.replace(/\./g, '\\.')}`));
    // The container's /etc/hosts gains its new address (and loses it again on disconnect, below).
    const hostLine = new RegExp(`^${appIp.replace(/\./g, '\\.')}\\t${st.Config.Hostname}$`, 'm');
    assert.match((await d.docker(['exec', 'st', 'cat', '/etc/hosts'])).stdout, hostLine);
    const again = await d.docker(['network', 'connect', 'app', 'st']);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /endpoint with name st already exists in network app/);
    const dis = await d.docker(['network', 'disconnect', 'app', 'st']);
    assert.equal(dis.code, 0, dis.stderr);
    assert.equal((await inspect(d, 'st')).NetworkSettings.Networks.app, undefined);
    const ifs2 = await d.docker(['exec', 'st', 'ip', '-o', 'link']);
    assert.doesNotMatch(ifs2.stdout, /eth1/);
    const hostsAfter = (await d.docker(['exec', 'st', 'cat', '/etc/hosts'])).stdout;
    assert.doesNotMatch(hostsAfter, hostLine);
    assert.match(hostsAfter, /^10\.231\.77\.50\t/m, 'the remaining address stays');
    // A network with an active endpoint cannot go; a stopped container can be connected.
    const busy = await d.request('DELETE', '/networks/fixed');
    assert.equal(busy.status, 403);
    assert.match(busy.json().message, /has active endpoints/);
    assert.equal((await d.docker(['create', '--name', 'cold', 'busybox', 'true'])).code, 0);
    assert.equal((await d.docker(['network', 'connect', 'fixed', 'cold'])).code, 0);
    assert.deepEqual(Object.keys((await inspect(d, 'cold')).NetworkSettings.Networks).sort(), ['bridge', 'fixed']);
    await d.docker(['rm', '-f', 'st', 'cold']);
    assert.equal((await d.docker(['network', 'rm', 'fixed'])).code, 0);
  });

  test('host and none modes', async () => {
    const host = await d.docker(['run', '--rm', '--network', 'host', 'busybox', 'ip', '-o', 'link']);
    assert.equal(host.code, 0, host.stderr);
    assert.match(host.stdout, new RegExp(`: ${outside.hostIf}[@:]`), "the host's interfaces are visible");
    const none = await d.docker(['run', '--rm', '--network', 'none', 'busybox', 'ip', '-o', 'link']);
    assert.equal(none.code, 0, none.stderr);
    assert.deepEqual(
      none.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(':')[1]!.trim()),
      ['lo'],
    );
    assert.equal((await d.docker(['create', '--name', 'hn', '--network', 'host', 'busybox', 'true'])).code, 0);
    const hostNet = (await d.request('GET', '/networks/host')).json();
    assert.equal((await inspect(d, 'hn')).NetworkSettings.Networks.host.NetworkID, hostNet.Id);
    const con = await d.docker(['network', 'connect', 'app', 'hn']);
    assert.match(con.stderr, /container sharing network namespace with another container or host cannot be connected to any other network/);
    await d.docker(['rm', 'hn']);
    // As dockerd: the network may not exist yet at create; the start says it does not.
    const missing = await d.docker(['run', '--name', 'lost', '--network', 'no-such-net', 'busybox', 'true']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /network no-such-net not found/);
    await d.docker(['rm', '-f', 'lost']);
  });

  test('--link on the default bridge writes the linked container into /etc/hosts and the environment', async () => {
    assert.equal(
      (await d.docker(['run', '-d', '--name', 'lk', '--expose', '5432', '-e', 'DB_USER=app', 'busybox', 'sleep', '300'])).code,
      0,
    );
    const target = await inspect(d, 'lk');
    const ip = target.NetworkSettings.IPAddress as string;
    const r = await d.docker([
      'run',
      '--rm',
      '--name',
      'linker',
      '--link',
      'lk:dbalias',
      '-e',
      'DBALIAS_ENV_DB_USER=overridden',
      'busybox',
      'sh',
      '-c',
      'cat /etc/hosts; ping -c 1 -W 2 dbalias >/dev/null && echo ping-ok; env',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^${ip.replace(/\./g, '\\.')}\\tdbalias ${target.Id.slice(0, 12)} lk$`, 'm'));
    assert.match(r.stdout, /ping-ok/);
    // dockerd's legacy link variables; the container's own Env wins over them.
    const env = new Set(r.stdout.split('\n'));
    for (const v of [
      `DBALIAS_PORT=tcp://${ip}:5432`,
      `DBALIAS_PORT_5432_TCP=tcp://${ip}:5432`,
      `DBALIAS_PORT_5432_TCP_ADDR=${ip}`,
      'DBALIAS_PORT_5432_TCP_PORT=5432',
      'DBALIAS_PORT_5432_TCP_PROTO=tcp',
      'DBALIAS_NAME=/linker/dbalias',
      'DBALIAS_ENV_DB_USER=overridden',
    ]) {
      assert.ok(env.has(v), `${v} in:\n${r.stdout}`);
    }
    assert.ok(![...env].some((l) => l.startsWith('DBALIAS_ENV_PATH=')), 'PATH and HOME are not passed on');
    const dead = await d.docker(['run', '--rm', '--link', 'nobody:x', 'busybox', 'true']);
    assert.notEqual(dead.code, 0);
    await d.docker(['rm', '-f', 'lk']);
  });

  test('--add-host with host-gateway resolves to the default bridge address', async () => {
    const gw = (await d.request('GET', '/networks/bridge')).json().IPAM.Config[0].Gateway;
    const r = await d.docker([
      'run',
      '--rm',
      '--add-host',
      'gw.test:host-gateway',
      '--add-host',
      'fixed.test:10.0.0.9',
      'busybox',
      'cat',
      '/etc/hosts',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^${gw.replace(/\./g, '\\.')}\\tgw\\.test$`, 'm'));
    assert.match(r.stdout, /^10\.0\.0\.9\tfixed\.test$/m);
  });

  test('removal leaves no veths, addresses or rules; prune removes unused networks', async () => {
    await d.docker(['rm', '-f', 'db']);
    const appBridge = `br-${(await d.request('GET', '/networks/app')).json().Id.slice(0, 12)}`;
    await until(
      'the veths to go',
      async () => ((await portsOf(appBridge)).length + (await portsOf(bridge)).length === 0 ? true : undefined),
      5000,
    );
    assert.equal((await d.docker(['network', 'create', 'spare'])).code, 0);
    // An IPv6 network brings the daemon's ip6tables chains; the last one's removal takes them away.
    assert.equal((await d.docker(['network', 'create', '--ipv6', 'spare6'])).code, 0);
    const v6Prefix = `ENGINE-${daemonTag(d.execRoot)}`;
    assert.ok((await sh('ip6tables-save', [])).includes(`:${v6Prefix}-FWD`), 'ip6tables chains while an IPv6 network exists');
    const prune = await d.request('POST', '/networks/prune');
    assert.equal(prune.status, 200);
    assert.deepEqual(prune.json().NetworksDeleted.sort(), ['app', 'spare', 'spare6']);
    assert.ok(!(await sh('ip6tables-save', [])).includes(v6Prefix), 'no ip6tables chain after the last IPv6 network');
    assert.equal((await run('ip', ['link', 'show', appBridge])).code, 1, "the network's bridge is gone");
    const rules = ourRules(await iptablesSave(), d.execRoot);
    assert.equal(
      rules.some((l) => l.includes(appBridge) || l.includes('DNAT')),
      false,
      rules.join('\n'),
    );
    assert.deepEqual(daemonLinks(d.execRoot), [bridge]);
    const empty = await d.request('POST', '/networks/prune');
    assert.equal(empty.json().NetworksDeleted, null);
  });
});

describe('networking: daemon options', () => {
  let d: TestDaemon;
  const bridge = testBridge();
  const a = 10 + Math.floor(Math.random() * 200);

  before(async () => {
    d = await startDaemon({
      env: { ENGINE_DEFAULT_BRIDGE: bridge },
      args: [
        '--icc=false',
        '--bip',
        `10.232.${a}.1/24`,
        '--fixed-cidr',
        `10.232.${a}.128/25`,
        '--mtu',
        '1400',
        '--default-gateway',
        `10.232.${a}.254`,
        '--default-address-pool',
        `base=10.233.${a}.0/24,size=28`,
        '--default-network-opt',
        'bridge=com.engine.network.driver.mtu=1300',
      ],
    });
    await loadBusybox(d);
  });
  after(async () => {
    if (d) {
      await d.cleanup();
      await removeDaemonNetworking(d.execRoot);
    }
  });

  test('--bip, --fixed-cidr, --mtu and --default-gateway shape the default bridge', async () => {
    const net = (await d.request('GET', '/networks/bridge')).json();
    assert.deepEqual(net.IPAM.Config, [
      {
        Subnet: `10.232.${a}.0/24`,
        IPRange: `10.232.${a}.128/25`,
        Gateway: `10.232.${a}.1`,
        AuxiliaryAddresses: { DefaultGatewayIPv4: `10.232.${a}.254` },
      },
    ]);
    assert.equal(net.Options['com.engine.network.driver.mtu'], '1400');
    assert.equal(net.Options['com.engine.network.bridge.enable_icc'], 'false');
    const r = await d.docker(['run', '--rm', 'busybox', 'sh', '-c', 'ip route; ip -o -4 addr show eth0; cat /sys/class/net/eth0/mtu']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`default via 10\\.232\\.${a}\\.254 dev eth0`));
    const m = new RegExp(`inet 10\\.232\\.${a}\\.(\\d+)/24`).exec(r.stdout);
    assert.ok(m && Number(m[1]) >= 128, `address from the fixed CIDR: ${r.stdout}`);
    assert.match(r.stdout, /\n1400\n$/);
  });

  test('--icc=false: containers on the default bridge cannot talk to each other', async () => {
    assert.equal((await d.docker(['run', '-d', '--name', 'i1', 'busybox', 'sleep', '300'])).code, 0);
    const ip = (await inspect(d, 'i1')).NetworkSettings.IPAddress;
    const r = await d.docker(['run', '--rm', 'busybox', 'ping', '-c', '1', '-W', '2', ip]);
    assert.notEqual(r.code, 0, 'icc=false must drop container-to-container traffic');
    const gw = await d.docker(['exec', 'i1', 'ping', '-c', '1', '-W', '2', `10.232.${a}.1`]);
    assert.equal(gw.code, 0, 'the gateway stays reachable');
    const rules = ourRules(await iptablesSave(), d.execRoot);
    assert.ok(rules.includes(`-A ENGINE-${daemonTag(d.execRoot)}-FWD -i ${bridge} -o ${bridge} -j DROP`), rules.join('\n'));
    await d.docker(['rm', '-f', 'i1']);
  });

  test('default-address-pools and default-network-opts apply to new networks', async () => {
    assert.equal((await d.docker(['network', 'create', 'n1'])).code, 0);
    assert.equal((await d.docker(['network', 'create', 'n2'])).code, 0);
    const n1 = (await d.request('GET', '/networks/n1')).json();
    const n2 = (await d.request('GET', '/networks/n2')).json();
    assert.equal(n1.IPAM.Config[0].Subnet, `10.233.${a}.0/28`);
    assert.equal(n2.IPAM.Config[0].Subnet, `10.233.${a}.16/28`);
    assert.equal(n1.Options['com.engine.network.driver.mtu'], '1300');
    const r = await d.docker(['run', '--rm', '--network', 'n1', 'busybox', 'cat', '/sys/class/net/eth0/mtu']);
    assert.equal(r.stdout.trim(), '1300');
    const bad = await d.request('POST', '/networks/create', {
      body: { Name: 'bad', IPAM: { Config: [{ Subnet: '10.1.2.3/16', Gateway: '10.2.0.1' }] } },
    });
    assert.equal(bad.status, 400);
    assert.equal(
      bad.json().message,
      "invalid network config:\n* invalid subnet 10.1.2.3/16: it should be 10.1.0.0/16\n* invalid gateway 10.2.0.1: parent subnet 10.1.0.0/16 doesn't contain this address",
    );
    const overlap = await d.request('POST', '/networks/create', {
      body: { Name: 'ov', IPAM: { Config: [{ Subnet: `10.233.${a}.0/24` }] } },
    });
    assert.equal(overlap.status, 403);
    await d.docker(['network', 'rm', 'n1', 'n2']);
  });
});

describe('networking: crash and restart', () => {
  let d: TestDaemon;
  const bridge = testBridge();

  before(async () => {
    d = await startDaemon({ env: { ENGINE_DEFAULT_BRIDGE: bridge }, args: ['--live-restore'] });
    await loadBusybox(d);
  });
  after(async () => {
    if (d) {
      await d.cleanup();
      await removeDaemonNetworking(d.execRoot);
    }
  });

  test('after kill -9 and a restart, running containers keep addresses and ports, and rules are not duplicated', async () => {
    assert.equal((await d.docker(['network', 'create', 'keep'])).code, 0);
    const r = await d.docker(['run', '-d', '--name', 'k1', '--network', 'keep', '-p', '80', 'busybox', ...HTTPD]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await d.docker(['run', '-d', '--name', 'k2', '--network', 'keep', 'busybox', 'sleep', '300'])).code, 0);
    const before1 = await inspect(d, 'k1');
    const ip = before1.NetworkSettings.Networks.keep.IPAddress;
    const port = Number(before1.NetworkSettings.Ports['80/tcp'][0].HostPort);
    const rulesBefore = ourRules(await iptablesSave(), d.execRoot).sort();
    await d.kill9();
    await d.restart();
    const after1 = await inspect(d, 'k1');
    assert.equal(after1.State.Running, true);
    assert.equal(after1.NetworkSettings.Networks.keep.IPAddress, ip);
    assert.equal(after1.NetworkSettings.Ports['80/tcp'][0].HostPort, String(port));
    assert.deepEqual(ourRules(await iptablesSave(), d.execRoot).sort(), rulesBefore, 'same rules, once');
    const body = await until('the published port after the restart', async () =>
      (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(3000) })).text(),
    );
    assert.equal(body.trim(), before1.Config.Hostname);
    // Names still resolve (the embedded DNS came back) and a new container gets a fresh address.
    const dns = await d.docker(['exec', 'k2', 'nslookup', 'k1']);
    assert.match(dns.stdout, new RegExp(`Address: ${ip.replace(/\./g, '\\.')}`));
    const k3 = await d.docker(['run', '--rm', '--network', 'keep', 'busybox', 'ip', '-4', '-o', 'addr', 'show', 'eth0']);
    assert.doesNotMatch(k3.stdout, new RegExp(`inet ${ip.replace(/\./g, '\\.')}/`));
    // A second restart without changes writes the same rules again.
    await d.stop();
    await d.restart();
    assert.deepEqual(ourRules(await iptablesSave(), d.execRoot).sort(), rulesBefore);
  });

  test('removing everything and stopping the daemon leaves nothing on the host', async () => {
    const keepBridge = `br-${(await d.request('GET', '/networks/keep')).json().Id.slice(0, 12)}`;
    assert.equal((await d.docker(['rm', '-f', 'k1', 'k2'])).code, 0);
    assert.deepEqual(await portsOf(keepBridge), []);
    assert.equal(
      ourRules(await iptablesSave(), d.execRoot).some((l) => l.includes('DNAT')),
      false,
    );
    assert.equal((await d.docker(['network', 'rm', 'keep'])).code, 0);
    assert.equal((await run('ip', ['link', 'show', keepBridge])).code, 1);
    assert.equal(await d.stop(), 0);
    assert.deepEqual(daemonLinks(d.execRoot), []);
    assert.deepEqual(ourRules(await iptablesSave(), d.execRoot), []);
    assert.equal((await run('ip', ['link', 'show', bridge])).code, 1);
  });
});

describe('networking: proxy, NAT and bridge options', () => {
  let outside: OutsideHost;
  before(async () => {
    outside = await OutsideHost.create();
    await outside.serve(9000);
  });
  after(async () => outside?.destroy());

  test('--userland-proxy-path, --ip, --ip-masq=false, --host-gateway-ip', async () => {
    const d = await startDaemon({
      env: { ENGINE_DEFAULT_BRIDGE: testBridge() },
      args: ['--userland-proxy-path', '/usr/sbin/docker-proxy', '--ip', '127.0.0.1', '--ip-masq=false', '--host-gateway-ip', '10.9.8.7'],
    });
    try {
      await loadBusybox(d);
      const r = await d.docker(['run', '-d', '--name', 'px', '-p', '80', 'busybox', ...HTTPD]);
      assert.equal(r.code, 0, r.stderr);
      const info = await inspect(d, 'px');
      const [binding] = info.NetworkSettings.Ports['80/tcp'];
      assert.equal(binding.HostIp, '127.0.0.1', '--ip is the default host address');
      const port = Number(binding.HostPort);
      const proxies = (await sh('ps', ['-eo', 'args']))
        .split('\n')
        .filter((l) => l.startsWith('/usr/sbin/docker-proxy') && l.includes(`-host-port ${port} `));
      assert.equal(proxies.length, 1, 'one external proxy for the binding');
      const body = await until('the external proxy', async () =>
        (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(3000) })).text(),
      );
      assert.equal(body.trim(), info.Config.Hostname);
      assert.equal(await outside.get(outside.hostIp, port), undefined, 'bound to 127.0.0.1 only');
      // No masquerading: the outside sees the container's own address.
      const nat = await d.docker([
        'run',
        '--rm',
        '--add-host',
        'gw:host-gateway',
        'busybox',
        'sh',
        '-c',
        `grep gw /etc/hosts; ip -4 -o addr show eth0; ${httpGet(outside.ip, 9000)}`,
      ]);
      assert.equal(nat.code, 0, nat.stderr);
      assert.match(nat.stdout, /^10\.9\.8\.7\tgw$/m);
      const own = /inet (\d+\.\d+\.\d+\.\d+)\//.exec(nat.stdout)![1];
      assert.equal(nat.stdout.trim().split('\n').pop(), own);
      assert.equal((await d.docker(['rm', '-f', 'px'])).code, 0);
      const left = (await sh('ps', ['-eo', 'args'])).split('\n').filter((l) => l.includes(`-host-port ${port} `));
      assert.deepEqual(left, [], 'the proxy stopped with the container');
    } finally {
      await d.cleanup();
      await removeDaemonNetworking(d.execRoot);
    }
  });

  test('--bridge (existing), --userland-proxy=false, --allow-direct-routing', async () => {
    const pre = testBridge();
    const k = 10 + Math.floor(Math.random() * 200);
    await sh('ip', ['link', 'add', pre, 'type', 'bridge']);
    await sh('ip', ['addr', 'add', `10.234.${k}.1/24`, 'dev', pre]);
    await sh('ip', ['link', 'set', pre, 'up']);
    const d = await startDaemon({ args: ['--bridge', pre, '--userland-proxy=false', '--allow-direct-routing'] });
    try {
      await loadBusybox(d);
      const net = (await d.request('GET', '/networks/bridge')).json();
      assert.deepEqual(net.IPAM.Config, [{ Subnet: `10.234.${k}.0/24`, Gateway: `10.234.${k}.1` }]);
      assert.equal((await d.docker(['run', '-d', '--name', 'dr', '-p', '80', 'busybox', ...HTTPD])).code, 0);
      const info = await inspect(d, 'dr');
      assert.equal(info.NetworkSettings.Bridge, pre);
      assert.equal(info.NetworkSettings.Gateway, `10.234.${k}.1`);
      const port = Number(info.NetworkSettings.Ports['80/tcp'][0].HostPort);
      // No proxy: loopback reaches the container through DNAT in OUTPUT (route_localnet).
      const body = await until('DNAT from loopback', async () =>
        (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(3000) })).text(),
      );
      assert.equal(body.trim(), info.Config.Hostname);
      assert.equal((await outside.get(outside.hostIp, port))?.trim(), info.Config.Hostname);
      // Direct routing allowed: the published port answers on the container's address from outside
      // (the outside routes back through the host); an unpublished one stays closed.
      await sh('nsenter', [`--net=${outside.nsPath}`, 'ip', 'route', 'add', `10.234.${k}.0/24`, 'via', outside.hostIp]);
      assert.equal((await outside.get(info.NetworkSettings.IPAddress, 80))?.trim(), info.Config.Hostname);
      await d.docker(['exec', '-d', 'dr', 'httpd', '-p', '81', '-h', '/www']);
      assert.equal(await outside.get(info.NetworkSettings.IPAddress, 81), undefined);
      // The port is still held on the host (a clash is refused) although nothing proxies it.
      const clash = await d.docker(['run', '-d', '--name', 'clash', '-p', `${port}:80`, 'busybox', 'true']);
      assert.notEqual(clash.code, 0);
      await d.docker(['rm', '-f', 'dr', 'clash']);
      assert.equal(await d.stop(), 0);
      assert.equal((await run('ip', ['link', 'show', pre])).code, 0, 'an existing --bridge is never deleted');
    } finally {
      await d.cleanup();
      await removeDaemonNetworking(d.execRoot);
      await run('ip', ['link', 'del', pre]);
    }
  });

  test('--iptables=false and -b none: no rules, no default bridge; user networks and the proxy still work', async () => {
    const d = await startDaemon({ args: ['--iptables=false', '-b', 'none'] });
    try {
      await loadBusybox(d);
      assert.deepEqual(ourRules(await iptablesSave(), d.execRoot), []);
      const ls = await d.docker(['network', 'ls', '--format', '{{.Name}}']);
      assert.deepEqual(ls.stdout.trim().split('\n').sort(), ['host', 'none']);
      const lo = await d.docker(['run', '--rm', 'busybox', 'ip', '-o', 'link']);
      assert.deepEqual(
        lo.stdout
          .trim()
          .split('\n')
          .map((l) => l.split(':')[1]!.trim()),
        ['lo'],
        'bridge mode without a bridge: loopback only',
      );
      assert.equal((await d.docker(['network', 'create', 'plain'])).code, 0);
      assert.equal((await d.docker(['run', '-d', '--name', 'srv', '--network', 'plain', '-p', '80', 'busybox', ...HTTPD])).code, 0);
      const port = await hostPort(d, 'srv', '80/tcp');
      assert.equal(
        (
          await until('the proxy', async () => (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(3000) })).text())
        ).trim().length > 0,
        true,
      );
      // Names resolve; the host reaches the container's address. (Container-to-container traffic is
      // bridged through the host's FORWARD chain when br_netfilter is loaded: with --iptables=false
      // its policy is the administrator's, and an earlier daemon on this host may have set DROP.)
      const srv = await inspect(d, 'srv');
      const srvIp = srv.NetworkSettings.Networks.plain.IPAddress as string;
      const look = await d.docker(['run', '--rm', '--network', 'plain', 'busybox', 'nslookup', 'srv']);
      assert.match(look.stdout, new RegExp(`Address: ${srvIp.replace(/\./g, '\\.')}$`, 'm'), look.stdout + look.stderr);
      assert.equal((await (await fetch(`http://${srvIp}/`)).text()).trim(), srv.Config.Hostname);
      assert.deepEqual(ourRules(await iptablesSave(), d.execRoot), []);
      await d.docker(['rm', '-f', 'srv']);
    } finally {
      await d.cleanup();
      await removeDaemonNetworking(d.execRoot);
    }
  });
});
