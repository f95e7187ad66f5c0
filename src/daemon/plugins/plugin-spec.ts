// The OCI spec of a managed plugin's container, as dockerd makes it: the rootfs used in place, the
// socket directory bound at /run/docker/plugins, the config's mounts, devices, capabilities and
// host namespaces, the plugin's settings (args, env, mounts, devices) applied. Pure.
import { EngineError } from '../../errors.ts';
import { DEFAULT_CAPABILITIES } from '../../oci/caps.ts';
import { cgroupsPath, type CgroupDriver } from '../../oci/cgroups.ts';
import { DEFAULT_DEVICE_RULES, PRIVILEGED_DEVICE_RULES, resolveDevice } from '../../oci/devices.ts';
import { baseMounts, shmTmpfs } from '../../oci/mounts.ts';
import type { OciMount } from '../../oci/spec-types.ts';
import { DEFAULT_MASKED_PATHS, DEFAULT_PATH_ENV, DEFAULT_READONLY_PATHS } from '../../oci/spec.ts';
import { PLUGIN_SOCKET_DIR_IN_CONTAINER } from './config.ts';
import type { PluginRecord } from './store.ts';

/** Where the plugin's parts are on the host, and the daemon's cgroup driver. */
export interface PluginSpecPaths {
  /** `<exec-root>/plugins/<id>`, bound at /run/docker/plugins. */
  socketDir: string;
  rootfs: string;
  propagatedMount: string;
  cgroupDriver: CgroupDriver;
}

/** The OCI spec of the plugin's container, from its config and current settings. */
export function pluginSpec(rec: PluginRecord, at: PluginSpecPaths): Record<string, unknown> {
  const c = rec.Config;
  const s = rec.Settings;
  const caps = [...new Set([...DEFAULT_CAPABILITIES, ...(c.Linux.Capabilities ?? [])])];
  const mounts: OciMount[] = [
    ...baseMounts().filter((m) => m.destination !== '/sys/fs/cgroup'),
    shmTmpfs(64 << 20),
    { destination: PLUGIN_SOCKET_DIR_IN_CONTAINER, type: 'bind', source: at.socketDir, options: ['rbind', 'rw'] },
  ];
  if (c.PropagatedMount)
    mounts.push({
      destination: c.PropagatedMount,
      type: 'bind',
      source: at.propagatedMount,
      options: ['rbind', 'rshared'],
    });
  for (const m of s.Mounts) {
    if (!m.Source && m.Type === 'bind') continue; // a bind mount nobody gave a source: nothing to mount
    mounts.push({
      destination: m.Destination,
      type: m.Type || 'bind',
      source: m.Source || m.Type || 'none',
      options: m.Options?.length ? m.Options : m.Type === 'bind' || !m.Type ? ['rbind', 'rw'] : [],
    });
  }
  const devices = s.Devices.filter((d) => d.Path).map((d) => resolveDevice(d.Path!));
  const namespaces = [{ type: 'mount' }, { type: 'uts' }];
  if (!c.PidHost) namespaces.push({ type: 'pid' });
  if (!c.IpcHost) namespaces.push({ type: 'ipc' });
  if (c.Network.Type !== 'host') namespaces.push({ type: 'network' });
  const args = [...(c.Entrypoint ?? []), ...s.Args];
  if (!args.length) throw new EngineError('INVALID_PARAMETER', `plugin ${rec.Name} has no Entrypoint to run`);
  return {
    ociVersion: '1.0.2',
    process: {
      terminal: false,
      user: { uid: c.User.UID ?? 0, gid: c.User.GID ?? 0 },
      args,
      env: [`PATH=${DEFAULT_PATH_ENV}`, ...s.Env],
      cwd: c.WorkDir || '/',
      capabilities: { bounding: caps, effective: caps, permitted: caps },
      noNewPrivileges: false,
    },
    root: { path: at.rootfs, readonly: false },
    hostname: rec.Id.slice(0, 12),
    mounts,
    linux: {
      namespaces,
      cgroupsPath: cgroupsPath(at.cgroupDriver, at.cgroupDriver === 'systemd' ? undefined : '/engine/plugins', rec.Id),
      resources: {
        devices: c.Linux.AllowAllDevices
          ? [...PRIVILEGED_DEVICE_RULES]
          : [
              ...DEFAULT_DEVICE_RULES,
              ...devices.map((d) => ({ allow: true, type: d.type, major: d.major, minor: d.minor, access: 'rwm' })),
            ],
      },
      devices: devices.map(({ path, type, major, minor, fileMode, uid, gid }) => ({ path, type, major, minor, fileMode, uid, gid })),
      maskedPaths: [...DEFAULT_MASKED_PATHS],
      readonlyPaths: [...DEFAULT_READONLY_PATHS],
    },
  };
}
