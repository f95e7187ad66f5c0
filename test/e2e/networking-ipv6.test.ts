// Issue 5, IPv6: the default bridge with --ipv6 / --fixed-cidr-v6 / --bip6 / --default-gateway-v6,
// user networks with EnableIPv6 (ULA subnets from the daemon's pool or given ones), static
// addresses, AAAA names, published ports over IPv6 (proxy and ip6tables DNAT), masquerade,
// isolation, --ip6tables=false, and clean-up of the ip6tables chains.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { daemonTag } from '../../src/network/naming.ts';
import { daemonLinks, removeDaemonNetworking } from '../helpers/network-teardown.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { OutsideHost, sh } from '../helpers/outside-host.ts';
import { until } from '../helpers/until.ts';

const HTTPD = ['sh', '-c', 'mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 80 -h /www'];

/** One random group of an IPv6 address, in canonical text (no leading zeros). */
function hex4(): string {
  return randomBytes(2).readUInt16BE(0).toString(16);
}

/** A random ULA /64 prefix "fdXX:g:g:n" (canonical text). */
function ulaPrefix(n: number): string {
  return `fd${(0x10 + (randomBytes(1)[0]! % 0xf0)).toString(16)}:${hex4()}:${hex4()}:${n}`;
}

async function ours6(execRoot: string): Promise<string[]> {
  const prefix = `ENGINE-${daemonTag(execRoot)}`;
  return (await sh('ip6tables-save', [])).split('\n').filter((l) => l.includes(prefix));
}

async function inspect(d: TestDaemon, ref: string, what = 'inspect'): Promise<any> {
  const r = await d.docker(what === 'inspect' ? ['inspect', ref] : ['network', 'inspect', ref]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout)[0];
}

async function ok(d: TestDaemon, args: string[]): Promise<string> {
  const r = await d.docker(args);
  assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

describe('networking over IPv6', () => {
  let d: TestDaemon;
  let outside: OutsideHost;
  const bridge = `engs${randomBytes(3).toString('hex')}`;
  const fixed = `${ulaPrefix(1)}::/64`;
  const fixedPrefix = fixed.replace(/::\/64$/, '');

  before(async () => {
    d = await startDaemon({ args: ['--ipv6', '--fixed-cidr-v6', fixed], env: { ENGINE_DEFAULT_BRIDGE: bridge } });
    await loadBusybox(d);
    outside = await OutsideHost.create();
    await outside.serve(9000);
  });
  after(async () => {
    await outside?.destroy();
    if (d) await d.cleanup();
  });

  test('default bridge: --fixed-cidr-v6 subnet, MAC-derived container address, IPv6 route and gateway', async () => {
    const net = await inspect(d, 'bridge', 'network');
    assert.equal(net.EnableIPv6, true);
    const v6 = net.IPAM.Config.find((c: any) => c.Subnet.includes(':'));
    assert.deepEqual(v6, { Subnet: fixed, Gateway: `${fixedPrefix}::1` });
    assert.match(await sh('ip', ['-6', 'addr', 'show', 'dev', bridge]), new RegExp(`inet6 ${fixedPrefix}::1/64 scope global`));
    await ok(d, ['run', '-d', '--name', 'b1', 'busybox', 'sleep', '300']);
    const info = await inspect(d, 'b1');
    const ep = info.NetworkSettings.Networks.bridge;
    // dockerd's form on the default bridge: the prefix with the MAC as host part.
    const mac: string = ep.MacAddress;
    const [m0, m1, m2, m3, m4, m5] = mac.split(':').map((x) => parseInt(x, 16)) as [number, number, number, number, number, number];
    const expected = `${fixedPrefix}:0:${((m0 << 8) | m1).toString(16)}:${((m2 << 8) | m3).toString(16)}:${((m4 << 8) | m5).toString(16)}`;
    assert.equal(ep.GlobalIPv6Address, expected);
    assert.equal(ep.GlobalIPv6PrefixLen, 64);
    assert.equal(ep.IPv6Gateway, `${fixedPrefix}::1`);
    assert.equal(info.NetworkSettings.GlobalIPv6Address, expected, 'the legacy top-level fields mirror the default bridge');
    assert.equal(info.NetworkSettings.IPv6Gateway, `${fixedPrefix}::1`);
    const inside = await ok(d, ['exec', 'b1', 'sh', '-c', 'ip -6 addr show dev eth0; ip -6 route']);
    assert.match(inside, new RegExp(`inet6 ${expected}/64 scope global`));
    assert.match(inside, new RegExp(`default via ${fixedPrefix}::1 dev eth0`));
    assert.doesNotMatch(inside, /tentative.*\n.*global|global.*tentative/, 'no duplicate address detection delay');
    // The host reaches the container over IPv6, and the container its gateway.
    await sh('busybox', ['ping', '-6', '-c1', '-W2', expected]);
    await ok(d, ['exec', 'b1', 'ping', '-6', '-c1', '-W2', `${fixedPrefix}::1`]);
    // /etc/hosts carries both addresses of the container.
    assert.match(await ok(d, ['exec', 'b1', 'cat', '/etc/hosts']), new RegExp(`^${expected}\\s`, 'm'));
    await ok(d, ['rm', '-f', 'b1']);
  });

  test("user network with EnableIPv6: a /64 of the daemon's ULA pool, AAAA names, reachability", async () => {
    await ok(d, ['network', 'create', '--ipv6', 'v6net']);
    const net = await inspect(d, 'v6net', 'network');
    assert.equal(net.EnableIPv6, true);
    assert.equal(net.IPAM.Config.length, 2, JSON.stringify(net.IPAM.Config));
    const v6 = net.IPAM.Config[1];
    assert.match(v6.Subnet, /^fd[0-9a-f]{2}:[0-9a-f]{1,4}:[0-9a-f]{1,4}::\/64$/, 'a /64 of a ULA /48');
    assert.equal(v6.Gateway, v6.Subnet.replace('/64', '1'));
    // A second network gets the next /64 of the same /48.
    await ok(d, ['network', 'create', '--ipv6', 'v6other']);
    const other = (await inspect(d, 'v6other', 'network')).IPAM.Config[1].Subnet as string;
    assert.notEqual(other, v6.Subnet);
    assert.equal(other.split(':').slice(0, 3).join(':'), v6.Subnet.split(':').slice(0, 3).join(':'));

    await ok(d, ['run', '-d', '--name', 'db6', '--network', 'v6net', '--network-alias', 'store', 'busybox', 'sleep', '300']);
    const dbAddr = (await inspect(d, 'db6')).NetworkSettings.Networks.v6net.GlobalIPv6Address as string;
    assert.equal(dbAddr, v6.Subnet.replace('/64', '2'));
    const netView = await inspect(d, 'v6net', 'network');
    const entry = Object.values(netView.Containers as Record<string, any>)[0];
    assert.equal(entry.IPv6Address, `${dbAddr}/64`);
    // Names and aliases resolve to the IPv6 address (AAAA) from the daemon's DNS, and answer.
    const out = await ok(d, [
      'run',
      '--rm',
      '--network',
      'v6net',
      'busybox',
      'sh',
      '-c',
      'nslookup -type=AAAA db6; nslookup -type=AAAA store; ping -6 -c1 -W2 db6',
    ]);
    assert.equal(out.split('\n').filter((l) => l.trim() === `Address: ${dbAddr}`).length, 2, out);
    assert.match(out, /1 packets received/);
    // Different networks are isolated over IPv6 too.
    const across = await d.docker(['run', '--rm', '--network', 'v6other', 'busybox', 'ping', '-6', '-c1', '-W1', dbAddr]);
    assert.notEqual(across.code, 0, 'v6other must not reach v6net');
    // Egress: the outside host sees the host's address (masquerade), not the container's ULA.
    const seen = await ok(d, [
      'run',
      '--rm',
      '--network',
      'v6net',
      'busybox',
      'sh',
      '-c',
      `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${outside.ip6} 9000 | tail -n 1`,
    ]);
    assert.equal(seen.trim(), outside.hostIp6);
    await ok(d, ['rm', '-f', 'db6']);
    await ok(d, ['network', 'rm', 'v6other']);
  });

  test('given IPv6 subnet, static --ip6, and the errors for bad IPv6 requests', async () => {
    const subnet = `${ulaPrefix(2)}::/64`;
    const prefix = subnet.replace(/::\/64$/, '');
    await ok(d, ['network', 'create', '--ipv6', '--subnet', subnet, '--subnet', '10.231.7.0/24', 'given6']);
    const net = await inspect(d, 'given6', 'network');
    // dockerd lists IPv4 entries first, whatever the request's order (the CLI's order is random).
    assert.deepEqual(net.IPAM.Config, [
      { Subnet: '10.231.7.0/24', Gateway: '10.231.7.1' },
      { Subnet: subnet, Gateway: `${prefix}::1` },
    ]);
    const v6First = await d.request('POST', '/networks/create', {
      body: { Name: 'order6', EnableIPv6: true, IPAM: { Config: [{ Subnet: `${ulaPrefix(3)}::/64` }, { Subnet: '10.231.8.0/24' }] } },
    });
    assert.equal(v6First.status, 201, v6First.text());
    assert.deepEqual(
      (await inspect(d, 'order6', 'network')).IPAM.Config.map((c: any) => c.Subnet.includes(':')),
      [false, true],
    );
    await ok(d, ['network', 'rm', 'order6']);
    await ok(d, ['run', '-d', '--name', 's6', '--network', 'given6', '--ip6', `${prefix}::99`, 'busybox', 'sleep', '300']);
    const ep = (await inspect(d, 's6')).NetworkSettings.Networks.given6;
    assert.equal(ep.GlobalIPv6Address, `${prefix}::99`);
    assert.deepEqual(ep.IPAMConfig, { IPv6Address: `${prefix}::99` });
    assert.match(await ok(d, ['exec', 's6', 'ip', '-6', 'addr', 'show', 'eth0']), new RegExp(`inet6 ${prefix}::99/64`));
    const taken = await d.docker(['run', '--rm', '--network', 'given6', '--ip6', `${prefix}::99`, 'busybox', 'true']);
    assert.match(taken.stderr, /Address already in use/);
    const outsideSubnet = await d.docker(['run', '--rm', '--network', 'given6', '--ip6', 'fd01::5', 'busybox', 'true']);
    assert.match(outsideSubnet.stderr, /no configured subnet or ip-range contain the IP address fd01::5/);
    const onDefault = await d.docker(['run', '--rm', '--ip6', `${fixedPrefix}::5`, 'busybox', 'true']);
    assert.match(onDefault.stderr, /user specified IP address is supported on user defined networks only/);
    const noV6 = await d.request('POST', '/networks/create', { body: { Name: 'nov6', IPAM: { Config: [{ Subnet: 'fd02::/64' }] } } });
    // As dockerd (validateIpamConfig): without EnableIPv6 the IPv6 subnet is kept, unused; the network is IPv4 only.
    assert.equal(noV6.status, 201, noV6.text());
    const nov6 = (await d.request('GET', '/networks/nov6')).json();
    assert.equal(nov6.EnableIPv6, false);
    assert.ok(
      nov6.IPAM.Config.some((c: { Subnet?: string }) => c.Subnet === 'fd02::/64'),
      JSON.stringify(nov6.IPAM),
    );
    await ok(d, ['network', 'rm', 'nov6']);
    const hostBits = await d.request('POST', '/networks/create', {
      body: { Name: 'hb', EnableIPv6: true, IPAM: { Config: [{ Subnet: `${prefix}:0:0:1:0/64` }] } },
    });
    assert.equal(hostBits.status, 400);
    assert.match(hostBits.json().message, /it should be/);
    const overlap = await d.request('POST', '/networks/create', {
      body: { Name: 'ov', EnableIPv6: true, IPAM: { Config: [{ Subnet: `${prefix}::/80` }] } },
    });
    assert.equal(overlap.status, 403);
    assert.match(overlap.json().message, /Pool overlaps/);
    const two = await d.request('POST', '/networks/create', {
      body: { Name: 'two', EnableIPv6: true, IPAM: { Config: [{ Subnet: 'fd03::/64' }, { Subnet: 'fd04::/64' }] } },
    });
    assert.equal(two.status, 403, "one subnet per family, as dockerd's bridge driver");
    assert.equal(two.json().message, "bridge driver doesn't support multiple subnets");
    await ok(d, ['rm', '-f', 's6']);
    await ok(d, ['network', 'rm', 'given6']);
  });

  test('published ports over IPv6: [::1] through the proxy, the outside through ip6tables DNAT', async () => {
    await ok(d, ['run', '-d', '--name', 'web6', '--hostname', 'web6host', '--network', 'v6net', '-p', '80', 'busybox', ...HTTPD]);
    const info = await inspect(d, 'web6');
    const bindings = info.NetworkSettings.Ports['80/tcp'];
    assert.deepEqual(
      bindings.map((b: any) => b.HostIp),
      ['0.0.0.0', '::'],
    );
    const port = Number(bindings[0].HostPort);
    assert.equal(Number(bindings[1].HostPort), port);
    assert.equal(
      await until('the proxy to answer over IPv6', async () =>
        (await fetch(`http://[::1]:${port}/`, { signal: AbortSignal.timeout(3000) })).text(),
      ).then((t) => t.trim()),
      'web6host',
    );
    const addr6 = info.NetworkSettings.Networks.v6net.GlobalIPv6Address as string;
    const rules = await ours6(d.execRoot);
    assert.equal(rules.filter((l) => l.includes(`--dport ${port} -j DNAT --to-destination [${addr6}]:80`)).length, 1, rules.join('\n'));
    assert.equal((await outside.get(outside.hostIp6, port))?.trim(), 'web6host', 'DNAT from the outside over IPv6');
    assert.equal((await outside.get(outside.hostIp, port))?.trim(), 'web6host', 'and over IPv4');
    // The container's own IPv6 address is not reachable from outside (only through DNAT).
    assert.equal(await outside.get(addr6, 80), undefined);
    const ps = await ok(d, ['port', 'web6', '80/tcp']);
    assert.deepEqual(ps.trim().split('\n'), [`0.0.0.0:${port}`, `[::]:${port}`]);
    await ok(d, ['rm', '-f', 'web6']);
    const after = await ours6(d.execRoot);
    assert.ok(!after.some((l) => l.includes(`--dport ${port} `)), 'the DNAT rule goes with the container');
  });

  test('a crash-restart neither duplicates nor loses IPv6 rules; network removal and a graceful stop remove them', async () => {
    // Rules are the same after kill -9 and a restart.
    const before = await ours6(d.execRoot);
    assert.ok(
      before.some((l) => l.includes('MASQUERADE') && l.includes(fixed)),
      before.join('\n'),
    );
    await d.kill9();
    await d.restart();
    const again = await until('the daemon to rewrite its chains', async () => {
      const now = await ours6(d.execRoot);
      return now.length === before.length ? now : undefined;
    });
    assert.deepEqual([...again].sort(), [...before].sort());
    const net = await inspect(d, 'v6net', 'network');
    assert.equal(net.IPAM.Config.length, 2, 'the network keeps its IPv6 subnet across the restart');
    await ok(d, ['network', 'rm', 'v6net']);
    assert.ok(!(await ours6(d.execRoot)).some((l) => l.includes('br-')), 'no rule of a removed network is left');
    await d.stop();
    assert.deepEqual(await ours6(d.execRoot), [], 'a graceful stop removes the IPv6 chains');
    assert.deepEqual(daemonLinks(d.execRoot), []);
  });
});

describe('IPv6 daemon options: --bip6, --default-gateway-v6, --ip6tables=false', () => {
  let d: TestDaemon;
  const prefix = ulaPrefix(5);

  before(async () => {
    d = await startDaemon({
      args: [
        '--ipv6',
        '--bip6',
        `${prefix}::a/64`,
        '--fixed-cidr-v6',
        `${prefix}::100:0/112`,
        '--default-gateway-v6',
        `${prefix}::fe`,
        '--ip6tables=false',
      ],
      env: { ENGINE_DEFAULT_BRIDGE: `engb${randomBytes(3).toString('hex')}` },
    });
    await loadBusybox(d);
  });
  after(async () => {
    if (d) {
      await d.cleanup();
      await removeDaemonNetworking(d.execRoot);
    }
  });

  test('the bridge address from --bip6, allocation in --fixed-cidr-v6, the default route via --default-gateway-v6', async () => {
    const net = await inspect(d, 'bridge', 'network');
    const v6 = net.IPAM.Config.find((c: any) => c.Subnet.includes(':'));
    assert.deepEqual(v6, {
      Subnet: `${prefix}::/64`,
      IPRange: `${prefix}::100:0/112`,
      Gateway: `${prefix}::a`,
      AuxiliaryAddresses: { DefaultGatewayIPv6: `${prefix}::fe` },
    });
    const out = await ok(d, ['run', '--rm', 'busybox', 'sh', '-c', 'ip -6 addr show dev eth0 scope global; ip -6 route show default']);
    // A /112 range has no room for the MAC: addresses are handed out in turn from the range.
    assert.match(out, new RegExp(`inet6 ${prefix}::100:1/64`));
    assert.match(out, new RegExp(`default via ${prefix}::fe dev eth0`));
  });

  test('--ip6tables=false: IPv6 networks work without any ip6tables rule', async () => {
    await ok(d, ['network', 'create', '--ipv6', 'quiet6']);
    await ok(d, ['run', '-d', '--name', 'q1', '--network', 'quiet6', 'busybox', 'sleep', '300']);
    const ep = (await inspect(d, 'q1')).NetworkSettings.Networks.quiet6;
    const addr = ep.GlobalIPv6Address as string;
    // Host and container reach each other (no FORWARD chain on that path: the host's FORWARD
    // policy, which an administrator owns once ip6tables is off, does not matter).
    await sh('busybox', ['ping', '-6', '-c1', '-W2', addr]);
    assert.match(await ok(d, ['exec', 'q1', 'ping', '-6', '-c1', '-W2', ep.IPv6Gateway]), /1 packets received/);
    assert.match(
      await ok(d, ['run', '--rm', '--network', 'quiet6', 'busybox', 'nslookup', '-type=AAAA', 'q1']),
      new RegExp(`Address: ${addr}`),
    );
    assert.deepEqual(await ours6(d.execRoot), []);
    const start = await d.request('GET', '/info');
    assert.ok(
      !(start.json().Warnings ?? []).some((w: string) => /ip6tables|ipv6|bip6|cidr-v6/i.test(w)),
      'the IPv6 options are built: no "not built yet" warning',
    );
    await ok(d, ['rm', '-f', 'q1']);
  });
});
