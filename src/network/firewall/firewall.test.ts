import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  chainNames,
  foreignDnatPorts,
  jumpChanges,
  parseSave,
  renderChains,
  restoreScript,
  teardownScript,
  type FwState,
} from './firewall.ts';

const c = chainNames('ENGINE-abc123');
const state: FwState = {
  networks: [
    { bridge: 'eng0', subnet: '172.17.0.0/16', icc: true, masquerade: true, internal: false },
    { bridge: 'br-1', subnet: '172.18.0.0/16', icc: false, masquerade: true, internal: true },
  ],
  ports: [{ bridge: 'eng0', proto: 'tcp', hostIp: '0.0.0.0', hostPort: 8080, containerIp: '172.17.0.2', containerPort: 80 }],
};

describe('firewall rules', () => {
  test('with the userland proxy: DNAT from outside the bridge, masquerade, isolation, icc, internal', () => {
    const { filter, nat } = renderChains(c, state, { userlandProxy: true, allowDirectRouting: false });
    assert.ok(nat.includes('-A ENGINE-abc123 ! -i eng0 -p tcp -m tcp --dport 8080 -j DNAT --to-destination 172.17.0.2:80'));
    assert.ok(nat.includes('-A ENGINE-abc123 -i eng0 -j RETURN'));
    assert.ok(nat.includes('-A ENGINE-abc123-POST -s 172.17.0.0/16 ! -o eng0 -j MASQUERADE'));
    assert.ok(!nat.some((l) => l.includes('172.18.0.0/16') && l.includes('MASQUERADE')), 'no masquerade for an internal network');
    assert.ok(
      filter.includes('-A ENGINE-abc123 -d 172.17.0.2/32 ! -i eng0 -o eng0 -p tcp -m tcp --dport 80 -m conntrack --ctstate DNAT -j ACCEPT'),
    );
    assert.ok(filter.includes('-A ENGINE-abc123-FWD -i br-1 -o br-1 -j DROP'), 'icc=false');
    assert.ok(filter.includes('-A ENGINE-abc123-FWD -i eng0 ! -o eng0 -j ACCEPT'));
    assert.ok(!filter.includes('-A ENGINE-abc123-FWD -i br-1 ! -o br-1 -j ACCEPT'), 'internal: no egress');
    assert.ok(filter.includes('-A ENGINE-abc123-ISO1 -i br-1 ! -d 172.18.0.0/16 -j DROP'));
    assert.ok(filter.includes('-A ENGINE-abc123-ISO1 -i eng0 ! -o eng0 -j ENGINE-abc123-ISO2'));
    assert.ok(filter.includes('-A ENGINE-abc123-ISO2 -o br-1 -j DROP'));
    // The accept for published ports comes before the catch-all drop into the bridge.
    const accept = filter.findIndex((l) => l.includes('--dport 80'));
    const drop = filter.indexOf('-A ENGINE-abc123 ! -i eng0 -o eng0 -j DROP');
    assert.ok(accept >= 0 && drop > accept);
  });

  test('without the proxy: hairpin and loopback NAT; direct routing allowed drops the DNAT condition', () => {
    const { filter, nat } = renderChains(c, state, { userlandProxy: false, allowDirectRouting: true });
    assert.ok(nat.includes('-A ENGINE-abc123 -p tcp -m tcp --dport 8080 -j DNAT --to-destination 172.17.0.2:80'));
    assert.ok(nat.includes('-A ENGINE-abc123-POST -s 172.17.0.2/32 -d 172.17.0.2/32 -p tcp -m tcp --dport 80 -j MASQUERADE'));
    assert.ok(nat.includes('-A ENGINE-abc123-POST -o eng0 -m addrtype --src-type LOCAL -j MASQUERADE'));
    assert.ok(filter.includes('-A ENGINE-abc123 -d 172.17.0.2/32 ! -i eng0 -o eng0 -p tcp -m tcp --dport 80 -j ACCEPT'));
  });

  test('start-up jumps: added once, duplicates and a stale proxy variant removed, the user chain created once', () => {
    const saved = parseSave(
      [
        '*filter',
        ':FORWARD ACCEPT [0:0]',
        ':ENGINE-abc123-FWD - [0:0]',
        '-A FORWARD -j ENGINE-abc123-FWD',
        '-A FORWARD -j ENGINE-abc123-FWD',
        '-A FORWARD -j OTHER',
        'COMMIT',
        '*nat',
        ':OUTPUT ACCEPT [0:0]',
        '-A OUTPUT -m addrtype --dst-type LOCAL -j ENGINE-abc123',
        '-A OUTPUT -j ENGINE-zzz',
        'COMMIT',
        '',
      ].join('\n'),
    );
    const ch = jumpChanges(saved, c, { userlandProxy: true, allowDirectRouting: false });
    // Duplicates: every copy goes (a delete by text takes the first one), one comes back on top.
    assert.deepEqual(ch.filter, [
      ':ENGINE-abc123-USER - [0:0]',
      '-D FORWARD -j ENGINE-abc123-FWD',
      '-D FORWARD -j ENGINE-abc123-FWD',
      '-I FORWARD 1 -j ENGINE-abc123-FWD',
    ]);
    assert.deepEqual(ch.nat, [
      '-D OUTPUT -m addrtype --dst-type LOCAL -j ENGINE-abc123',
      '-A PREROUTING -m addrtype --dst-type LOCAL -j ENGINE-abc123',
      '-A OUTPUT ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -j ENGINE-abc123',
      '-A POSTROUTING -j ENGINE-abc123-POST',
      '-A PREROUTING -m addrtype --dst-type LOCAL -j ENGINE-abc123-MESH',
      '-A OUTPUT -m addrtype --dst-type LOCAL -j ENGINE-abc123-MESH',
    ]);
    // Declarations come first in the script, before any rule that jumps to them.
    const script = restoreScript(renderChains(c, state, { userlandProxy: true, allowDirectRouting: false }), ch).split('\n');
    assert.ok(script.indexOf(':ENGINE-abc123-USER - [0:0]') < script.indexOf('-A ENGINE-abc123-FWD -j ENGINE-abc123-USER'));
  });

  test("FORWARD's jump goes back on top of rules another firewall inserted above it", () => {
    const settings = { userlandProxy: true, allowDirectRouting: false };
    const save = (forward: string[]) =>
      parseSave(['*filter', ':OTHERFW - [0:0]', ':ENGINE-abc123-USER - [0:0]', ...forward, '-A OTHERFW -j DROP', 'COMMIT', ''].join('\n'));
    const below = jumpChanges(save(['-A FORWARD -j OTHERFW', '-A FORWARD -j ENGINE-abc123-FWD']), c, settings);
    assert.deepEqual(below.filter, ['-D FORWARD -j ENGINE-abc123-FWD', '-I FORWARD 1 -j ENGINE-abc123-FWD']);
    const onTop = jumpChanges(save(['-A FORWARD -j ENGINE-abc123-FWD', '-A FORWARD -j OTHERFW']), c, settings);
    assert.deepEqual(onTop.filter, [], 'first and once: left alone');
    const none = jumpChanges(save(['-A FORWARD -j OTHERFW']), c, settings);
    assert.deepEqual(none.filter, ['-I FORWARD 1 -j ENGINE-abc123-FWD']);
  });

  test('the routing mesh: DNAT per task (nth) in its own chain, SNAT to the node, accepted before isolation', () => {
    const withMesh: FwState = {
      ...state,
      mesh: {
        bridge: 'ov-ing',
        nodeIp: '10.0.0.3',
        targets: [
          { proto: 'tcp', published: 8080, target: 80, backends: ['10.0.0.5', '10.0.0.6'] },
          { proto: 'sctp', published: 30000, target: 9, backends: ['10.0.0.5'] },
        ],
      },
    };
    const { filter, nat } = renderChains(c, withMesh, { userlandProxy: true, allowDirectRouting: false });
    assert.deepEqual(
      nat.filter((l) => l.startsWith('-A ENGINE-abc123-MESH ')),
      [
        '-A ENGINE-abc123-MESH -p tcp -m tcp --dport 8080 -m statistic --mode nth --every 2 --packet 0 -j DNAT --to-destination 10.0.0.5:80',
        '-A ENGINE-abc123-MESH -p tcp -m tcp --dport 8080 -j DNAT --to-destination 10.0.0.6:80',
        '-A ENGINE-abc123-MESH -p sctp -m sctp --dport 30000 -j DNAT --to-destination 10.0.0.5:9',
      ],
    );
    assert.ok(nat.includes('-A ENGINE-abc123-POST -o ov-ing -m conntrack --ctstate DNAT -j SNAT --to-source 10.0.0.3'));
    const accept = filter.indexOf('-A ENGINE-abc123-FWD -o ov-ing -m conntrack --ctstate DNAT -j ACCEPT');
    assert.ok(filter.includes('-A ENGINE-abc123-FWD -i ov-ing -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT'));
    assert.ok(accept > filter.indexOf('-A ENGINE-abc123-FWD -j ENGINE-abc123-USER'), 'after the user chain');
    assert.ok(accept < filter.indexOf('-A ENGINE-abc123-FWD -j ENGINE-abc123-ISO1'), 'before isolation');
    // Without published ports (or in IPv6) the chain is declared and empty: its jumps stay valid.
    const none = renderChains(
      c,
      { ...state, mesh: { ...withMesh.mesh!, targets: [] } },
      { userlandProxy: true, allowDirectRouting: false },
    );
    assert.ok(none.nat.includes(':ENGINE-abc123-MESH - [0:0]'));
    assert.ok(!none.nat.some((l) => l.includes('ov-ing')) && !none.filter.some((l) => l.includes('ov-ing')));
    const v6 = renderChains(c, withMesh, { userlandProxy: true, allowDirectRouting: false }, 6);
    assert.ok(!v6.nat.some((l) => l.includes('MESH')) && !v6.filter.some((l) => l.includes('ov-ing')));
    assert.ok(!jumpChanges(parseSave(''), c, { userlandProxy: true, allowDirectRouting: false }, 6).nat.some((l) => l.includes('MESH')));
  });

  test('teardown removes our jumps and chains only', () => {
    const saved = parseSave(
      [
        '*filter',
        ':ENGINE-abc123 - [0:0]',
        ':ENGINE-abc123-FWD - [0:0]',
        ':ENGINE-other-FWD - [0:0]',
        '-A FORWARD -j ENGINE-other-FWD',
        '-A FORWARD -j ENGINE-abc123-FWD',
        '-A ENGINE-abc123-FWD -o x -j ENGINE-abc123',
        'COMMIT',
        '*nat',
        ':ENGINE-abc123-MESH - [0:0]',
        '-A PREROUTING -m addrtype --dst-type LOCAL -j ENGINE-abc123-MESH',
        'COMMIT',
        '',
      ].join('\n'),
    );
    const script = teardownScript(saved, c)!;
    assert.match(script, /^-D PREROUTING -m addrtype --dst-type LOCAL -j ENGINE-abc123-MESH$/m);
    assert.match(script, /^-X ENGINE-abc123-MESH$/m);
    assert.match(script, /^-D FORWARD -j ENGINE-abc123-FWD$/m);
    assert.match(script, /^-X ENGINE-abc123-FWD$/m);
    assert.match(script, /^-X ENGINE-abc123$/m);
    assert.doesNotMatch(script, /ENGINE-other/);
    assert.equal(teardownScript(parseSave('*filter\n:FORWARD ACCEPT [0:0]\nCOMMIT\n'), c), undefined);
    // An administrator's rules in the user chain survive a daemon's own teardown.
    const withUser = parseSave(
      [
        '*filter',
        ':ENGINE-abc123-USER - [0:0]',
        ':ENGINE-abc123-FWD - [0:0]',
        '-A FORWARD -j ENGINE-abc123-FWD',
        '-A ENGINE-abc123-FWD -j ENGINE-abc123-USER',
        '-A ENGINE-abc123-USER -s 10.0.0.0/8 -j DROP',
        'COMMIT',
        '',
      ].join('\n'),
    );
    assert.doesNotMatch(teardownScript(withUser, c)!, /-X ENGINE-abc123-USER/);
    assert.match(teardownScript(withUser, c, true)!, /^-X ENGINE-abc123-USER$/m);
  });

  test('IPv6 (ip6tables): only networks with an IPv6 subnet, ports whose host and container addresses are IPv6', () => {
    const dual: FwState = {
      networks: [
        { bridge: 'eng0', subnet: '172.17.0.0/16', subnet6: 'fd42:1::/64', icc: true, masquerade: true, internal: false },
        { bridge: 'br-4', subnet: '172.19.0.0/16', icc: true, masquerade: true, internal: false },
      ],
      ports: [
        { bridge: 'eng0', proto: 'tcp', hostIp: '0.0.0.0', hostPort: 8080, containerIp: '172.17.0.2', containerPort: 80 },
        { bridge: 'eng0', proto: 'tcp', hostIp: '::', hostPort: 8080, containerIp: 'fd42:1::2', containerPort: 80 },
        // The IPv6 side of a container without IPv6 is the proxy's: no DNAT to an IPv4 address.
        { bridge: 'br-4', proto: 'tcp', hostIp: '::', hostPort: 9090, containerIp: '172.19.0.2', containerPort: 90 },
        { bridge: 'eng0', proto: 'udp', hostIp: 'fd00::2', hostPort: 5353, containerIp: 'fd42:1::2', containerPort: 53 },
      ],
    };
    const v6 = renderChains(c, dual, { userlandProxy: true, allowDirectRouting: false }, 6);
    assert.ok(v6.nat.includes('-A ENGINE-abc123 ! -i eng0 -p tcp -m tcp --dport 8080 -j DNAT --to-destination [fd42:1::2]:80'));
    assert.ok(
      v6.nat.includes('-A ENGINE-abc123 -d fd00::2/128 ! -i eng0 -p udp -m udp --dport 5353 -j DNAT --to-destination [fd42:1::2]:53'),
    );
    assert.ok(!v6.nat.some((l) => l.includes('9090')), 'no IPv6 DNAT to an IPv4 container address');
    assert.ok(v6.nat.includes('-A ENGINE-abc123-POST -s fd42:1::/64 ! -o eng0 -j MASQUERADE'));
    assert.ok(
      v6.filter.includes(
        '-A ENGINE-abc123 -d fd42:1::2/128 ! -i eng0 -o eng0 -p tcp -m tcp --dport 80 -m conntrack --ctstate DNAT -j ACCEPT',
      ),
    );
    assert.ok(!v6.filter.some((l) => l.includes('br-4')), 'an IPv4-only network has no IPv6 rules');
    assert.ok(!v6.nat.some((l) => l.includes('172.')), 'no IPv4 address in an IPv6 table');
    const v4 = renderChains(c, dual, { userlandProxy: true, allowDirectRouting: false }, 4);
    assert.ok(!v4.nat.some((l) => l.includes('fd42') || l.includes('fd00')), 'no IPv6 address in an IPv4 table');
    assert.ok(v4.filter.some((l) => l.includes('br-4')));
    const jumps = jumpChanges(parseSave(''), c, { userlandProxy: true, allowDirectRouting: false }, 6);
    assert.ok(jumps.nat.includes('-A OUTPUT ! -d ::1/128 -m addrtype --dst-type LOCAL -j ENGINE-abc123'));
  });

  test("foreign DNAT ports: other chains' published ports, not our own", () => {
    const saved = parseSave(
      [
        '*nat',
        ':ENGINE-abc123 - [0:0]',
        ':ENGINE-dead00 - [0:0]',
        '-A ENGINE-abc123 ! -i eng0 -p tcp -m tcp --dport 32768 -j DNAT --to-destination 172.18.0.2:80',
        '-A ENGINE-dead00 -p tcp -m tcp --dport 32769 -j DNAT --to-destination 10.1.0.2:80',
        '-A ENGINE-dead00 -p udp -m udp --dport 5353 -j DNAT --to-destination 10.1.0.2:53',
        '-A ENGINE-dead00-POST -s 10.1.0.0/24 ! -o br0 -j MASQUERADE',
        'COMMIT',
      ].join('\n'),
    );
    assert.deepEqual([...foreignDnatPorts(saved, chainNames('ENGINE-abc123'))].sort(), ['tcp/32769', 'udp/5353']);
  });
});
