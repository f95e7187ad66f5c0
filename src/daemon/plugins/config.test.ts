// The plugin config rules: parsing with dockerd's defaults and 400s for bad configs, the privileges
// a config asks for (and the exact-match check of a pull), initial settings, `plugin set` against
// what the config marks settable, and capabilities → plugin-protocol interfaces.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applySettings, checkPrivileges, computePrivileges, implementsOf, initialSettings, parsePluginConfig } from './config.ts';

const base = {
  Description: 'd',
  Entrypoint: ['/p'],
  Interface: { Types: ['docker.volumedriver/1.0', { Prefix: 'docker', Capability: 'authz', Version: '1.0' }], Socket: 'p.sock' },
};
const status = (e: unknown) => (e as { status?: number }).status;

describe('plugin config', () => {
  test('parses with defaults; interface types in both forms come out as strings', () => {
    const c = parsePluginConfig(base);
    assert.deepEqual(c.Interface.Types, ['docker.volumedriver/1.0', 'docker.authz/1.0']);
    assert.equal(c.Network.Type, '');
    assert.equal(c.PropagatedMount, '');
    assert.deepEqual(c.Args, { Name: '', Description: '', Settable: null, Value: null });
    assert.deepEqual(implementsOf(c), ['VolumeDriver', 'authz']);
  });

  test('keys in any case, as Go reads config.json; canonical names out, unknown keys dropped', () => {
    const c = parsePluginConfig({
      description: 'sshFS plugin',
      entrypoint: ['/docker-volume-sshfs'],
      env: [{ name: 'DEBUG', settable: ['value'], value: '0' }],
      interface: { socket: 'sshfs.sock', types: ['docker.volumedriver/1.0'] },
      linux: { capabilities: ['CAP_SYS_ADMIN'], devices: [{ path: '/dev/fuse' }] },
      mounts: [{ source: '/var/lib/docker/plugins/', destination: '/mnt/state', type: 'bind', options: ['rbind'] }],
      network: { type: 'host' },
      propagatedMount: '/mnt/volumes',
      Bogus: 1,
    });
    assert.equal(c.Description, 'sshFS plugin');
    assert.deepEqual(c.Entrypoint, ['/docker-volume-sshfs']);
    assert.deepEqual(c.Interface, { Types: ['docker.volumedriver/1.0'], Socket: 'sshfs.sock' });
    assert.deepEqual(c.Linux.Capabilities, ['CAP_SYS_ADMIN']);
    assert.equal(c.Linux.Devices?.[0]?.Path, '/dev/fuse');
    assert.equal(c.Mounts?.[0]?.Destination, '/mnt/state');
    assert.equal(c.Network.Type, 'host');
    assert.equal(c.PropagatedMount, '/mnt/volumes');
    assert.equal(c.Env?.[0]?.Value, '0');
    assert.equal('Bogus' in c, false);
  });

  test('bad configs are 400s naming the field', () => {
    const bad: Array<[unknown, RegExp]> = [
      [[], /not a JSON object/],
      [{ ...base, Interface: { Types: [], Socket: 'p.sock' } }, /Interface.Types is empty/],
      [{ ...base, Interface: { Types: ['volumedriver'], Socket: 'p.sock' } }, /prefix.capability\/version/],
      [{ ...base, Interface: { Types: ['docker.authz/1.0'], Socket: '../x.sock' } }, /Socket must be a file name/],
      [{ ...base, Mounts: [{ Destination: 'rel' }] }, /Mounts\[0\] needs an absolute Destination/],
      [{ ...base, Entrypoint: 'x' }, /Go struct field PluginConfig\.Entrypoint of type \[\]string/],
      [{ ...base, PropagatedMount: 'data' }, /PropagatedMount must be an absolute path/],
    ];
    for (const [raw, msg] of bad)
      assert.throws(
        () => parsePluginConfig(raw),
        (e: Error) => status(e) === 400 && msg.test(e.message),
        String(msg),
      );
  });

  test('privileges in dockerd order; a pull must accept exactly them', () => {
    const c = parsePluginConfig({
      ...base,
      Network: { Type: 'host' },
      PidHost: true,
      Mounts: [
        { Name: 'state', Source: '/var/lib/x', Destination: '/state', Settable: ['source'] },
        { Destination: '/tmp', Type: 'tmpfs' },
      ],
      Linux: { Capabilities: ['CAP_SYS_ADMIN'], Devices: [{ Name: 'fuse', Path: '/dev/fuse' }] },
    });
    const p = computePrivileges(c);
    assert.deepEqual(
      p.map((x) => [x.Name, x.Value]),
      [
        ['network', ['host']],
        ['host pid namespace', ['true']],
        ['mount', ['/var/lib/x']],
        ['device', ['/dev/fuse']],
        ['capabilities', ['CAP_SYS_ADMIN']],
      ],
    );
    assert.doesNotThrow(() => checkPrivileges(p, [...p].reverse()));
    assert.throws(() => checkPrivileges(p, p.slice(1)), /incorrect privileges/);
    assert.throws(() => checkPrivileges(p, [...p.slice(1), { Name: 'network', Value: ['bridge'] }]), /incorrect privileges/);
    assert.throws(
      () => checkPrivileges(p, { x: 1 }),
      (e: Error) => status(e) === 400,
    );
    assert.deepEqual(computePrivileges(parsePluginConfig({ ...base, Network: { Type: 'bridge' } })), []);
    assert.doesNotThrow(() => checkPrivileges([], null));
  });

  test('settings start from the config and change only where it allows', () => {
    const c = parsePluginConfig({
      ...base,
      Env: [
        { Name: 'DEBUG', Settable: ['value'], Value: '0' },
        { Name: 'FIXED', Value: 'x' },
        { Name: 'UNSET', Settable: ['value'] },
      ],
      Args: { Name: 'args', Settable: ['value'], Value: ['-v'] },
      Mounts: [{ Name: 'state', Source: '/var/lib/x', Destination: '/state', Settable: ['source'] }],
      Linux: { Devices: [{ Name: 'dev', Path: '/dev/null', Settable: ['path'] }] },
    });
    const s0 = initialSettings(c);
    assert.deepEqual(s0.Env, ['DEBUG=0', 'FIXED=x']);
    assert.deepEqual(s0.Args, ['-v']);
    const s1 = applySettings(c, s0, ['DEBUG=1', 'UNSET=y', 'args=-a -b', 'state.source=/srv', 'dev=/dev/zero']);
    assert.deepEqual(s1.Env, ['DEBUG=1', 'FIXED=x', 'UNSET=y']);
    assert.deepEqual(s1.Args, ['-a', '-b']);
    assert.equal(s1.Mounts[0]!.Source, '/srv');
    assert.equal(s1.Devices[0]!.Path, '/dev/zero');
    assert.equal(s0.Mounts[0]!.Source, '/var/lib/x', 'the old settings are not changed in place');
    assert.throws(() => applySettings(c, s0, ['FIXED=y']), /"FIXED" is not settable/);
    assert.throws(() => applySettings(c, s0, ['DEBUG.source=y']), /"DEBUG.source" is not settable/);
    assert.throws(() => applySettings(c, s0, ['NOPE=1']), /setting "NOPE" not found in the plugin configuration/);
    assert.throws(
      () => applySettings(c, s0, ['novalue']),
      (e: Error) => status(e) === 400,
    );
  });
});
