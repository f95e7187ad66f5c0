// The OCI spec of a run: the daemon's defaults for every spec (seccomp profile file read once,
// capabilities, ulimits, cgroups), the user resolved in the image, and the spec built for a start
// or for `docker update`'s resources. Requests were verified before they get here (verify.ts).
import { readFileSync } from 'node:fs';
import { applyCdiProcessEdits, type CdiInjection } from '../../../oci/cdi.ts';
import type { DaemonConfig } from '../../../config/daemon-config.ts';
import { invalidParameter } from '../../../errors.ts';
import { cgroupVersion, type CgroupDriver } from '../../../oci/cgroups.ts';
import { readOwnCapabilities } from '../../../oci/caps.ts';
import { hostNetSysctls } from '../../../oci/sysctls.ts';
import { parseSeccompProfile, type DockerSeccompProfile } from '../../../oci/seccomp.ts';
import { buildSpec, type DaemonSpecDefaults } from '../../../oci/spec.ts';
import { listHostDevices, resolveDeviceMappings } from '../../../oci/devices.ts';
import { resolveUser } from '../../../oci/user.ts';
import type { IdentityMap } from '../../../oci/userns.ts';
import { withMounted } from '../../../supervisor/mounts.ts';
import type { RunNetworking } from '../../../network/container-contract.ts';
import type { HostConfig } from '../../../types/container-api.ts';
import type { Logger } from '../../../util/log.ts';
import { resolveInitPath } from '../../init-binary.ts';
import { inheritedBinds, resolveMounts } from '../create/mount-plan.ts';
import type { ContainerRecord } from '../record.ts';

export type RunSpec = ReturnType<typeof buildSpec>;
type SpecInput = Parameters<typeof buildSpec>[0];
type RootMounts = Parameters<typeof withMounted>[0];

export interface RunSpecDeps {
  config: () => DaemonConfig;
  log: Logger;
  tmpDir: string;
  cgroupDriver: CgroupDriver;
  shmSize: number;
  /** For the legacy links' environment. */
  networks?: Pick<RunNetworking, 'linkEnvironment'>;
  /** Whether named volumes are served (mount planning differs without). */
  volumes: boolean;
  noCgroups?: boolean;
}

/** What a start adds to the record: the files, namespaces and mounts made for this run. */
export interface StartSpecParts {
  files: SpecInput['files'];
  namespaces: SpecInput['namespaces'];
  rootMounts: RootMounts;
  volumeMounts: SpecInput['mounts'];
  remap: IdentityMap | undefined;
  cdi: CdiInjection | undefined;
}

export class RunSpecs {
  private readonly daemonCaps = readOwnCapabilities();
  private readonly netSysctls = hostNetSysctls();
  private seccompCache?: { path: string; profile: DockerSeccompProfile };

  constructor(private readonly d: RunSpecDeps) {
    this.defaults(); // validates the daemon's defaults (seccomp profile file) at start-up
  }

  /** --seccomp-profile <file>, read once (as dockerd, at start-up: a bad file refuses to start). */
  private seccompFile(path: string): DockerSeccompProfile {
    if (this.seccompCache?.path === path) return this.seccompCache.profile;
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw invalidParameter(`opening seccomp profile (${path}) failed: ${(err as Error).message}`);
    }
    const profile = parseSeccompProfile(text);
    this.seccompCache = { path, profile };
    return profile;
  }

  defaults(): DaemonSpecDefaults {
    const cfg = this.d.config();
    const profile = cfg['seccomp-profile'];
    return {
      seccompProfile:
        profile === 'builtin' || profile === '' ? 'builtin' : profile === 'unconfined' ? 'unconfined' : this.seccompFile(profile),
      noNewPrivileges: cfg['no-new-privileges'],
      defaultUlimits: Object.values(cfg['default-ulimits']),
      defaultShmSize: this.d.shmSize,
      cgroupParent: cfg['cgroup-parent'] ?? '',
      cgroupDriver: this.d.cgroupDriver,
      cgroupVersion: cgroupVersion(),
      defaultCgroupnsMode: cfg['default-cgroupns-mode'],
      defaultIpcMode: cfg['default-ipc-mode'],
      initPath: resolveInitPath(cfg['init-path']),
      init: cfg.init,
      availableCapabilities: this.daemonCaps,
      netSysctls: this.netSysctls,
      ...(this.d.noCgroups ? { noCgroups: true } : {}),
    };
  }

  /** The process's user: numeric specs as they are, names looked up in the image's passwd/group. */
  private async user(rec: ContainerRecord, rootMounts: RootMounts): Promise<{ uid: number; gid: number; additionalGids: number[] }> {
    const spec = rec.Config.User ?? '';
    const groupAdd = rec.HostConfig.GroupAdd ?? [];
    const numeric = /^\d+(:\d+)?$/.test(spec);
    if ((spec === '' || numeric) && groupAdd.every((g) => /^\d+$/.test(g))) {
      const [u = '0', g] = spec.split(':');
      return {
        uid: Number(u),
        gid: g !== undefined ? Number(g) : spec === '' ? 0 : Number(u) === 0 ? 0 : Number(u),
        additionalGids: groupAdd.map(Number),
      };
    }
    return withMounted(rootMounts, this.d.tmpDir, async (root) => resolveUser(root, spec, groupAdd));
  }

  /** The spec of a start (its warnings logged), with the CDI edits applied. */
  async forStart(rec: ContainerRecord, p: StartSpecParts): Promise<RunSpec> {
    const user = await this.user(rec, p.rootMounts);
    const ownMounts = resolveMounts(rec.HostConfig, this.d.volumes);
    const warnings: string[] = [];
    const spec = buildSpec(
      {
        id: rec.Id,
        config: rec.Config,
        hostConfig: specHostConfig(rec.HostConfig),
        args: [rec.Path, ...rec.Args],
        user,
        daemon: this.defaults(),
        files: p.files,
        namespaces: p.namespaces,
        mounts: [...ownMounts, ...inheritedBinds(rec.Mounts, ownMounts), ...p.volumeMounts, ...(p.cdi?.mounts ?? [])],
        devices: [...resolveDeviceMappings(rec.HostConfig.Devices), ...(p.cdi?.devices ?? [])],
        ...(rec.HostConfig.Links?.length && this.d.networks ? { linkEnv: this.d.networks.linkEnvironment(rec) } : {}),
        ...(rec.HostConfig.Privileged ? { hostDevices: listHostDevices() } : {}),
        ...(p.remap ? { userns: { uidMappings: p.remap.uids, gidMappings: p.remap.gids } } : {}),
      },
      warnings,
    );
    for (const w of warnings) this.d.log.warn(w, { id: rec.Id });
    if (p.cdi) applyCdiProcessEdits(spec, p.cdi);
    return spec;
  }

  /** The spec `update` takes the resources of (user, files and mounts do not matter there). */
  forResources(rec: ContainerRecord, hostConfig: HostConfig): RunSpec {
    return buildSpec({
      id: rec.Id,
      config: rec.Config,
      hostConfig,
      args: [rec.Path, ...rec.Args],
      user: { uid: 0, gid: 0, additionalGids: [] },
      daemon: this.defaults(),
      files: {},
      mounts: [],
    });
  }
}

/**
 * The HostConfig as the spec builder should see it at start: PidsLimit 0 or negative means "no
 * limit" in the API (as dockerd, no pids entry at all; crun rejects the -1 runc accepts).
 */
function specHostConfig(hc: HostConfig): HostConfig {
  if (hc.PidsLimit === undefined || hc.PidsLimit > 0) return hc;
  const { PidsLimit: _unset, ...rest } = hc;
  return rest;
}
