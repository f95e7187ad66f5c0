// The host side of a run: the namespaces it joins or gets, its network namespace with interfaces
// and /etc files, /dev/shm for shared IPC, the namespace's /sys for remapped containers, bind
// sources created as dockerd creates them; and their release after the run or a failed start.
import { existsSync } from 'node:fs';
import { chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { DaemonConfig } from '../../../config/daemon-config.ts';
import { conflict, invalidParameter } from '../../../errors.ts';
import type { IdentityMap } from '../../../oci/userns.ts';
import { writeEtcFiles } from '../../../network/sandbox/etc-files.ts';
import { createNetns, netnsPath, removeNetns } from '../../../network/host/netns.ts';
import type { RunNetworking, SandboxInfo } from '../../../network/container-contract.ts';
import type { Logger } from '../../../util/log.ts';
import type { ContainerVolumes } from '../../volumes/contract.ts';
import { mountShm, shmPath, unmountShm } from '../fs/ipc-shm.ts';
import { unmountFuseRoot } from '../fs/fuse-rootfs.ts';
import { mountNetnsSysfs, sysfsPath, unmountNetnsSysfs } from '../fs/netns-sysfs.ts';
import { resolveMounts } from '../create/mount-plan.ts';
import type { ContainerRecord } from '../record.ts';

/** The namespaces a run joins, by path ('host' for the host's); absent: a new one. */
export type RunNamespaces = { networkPath?: string; ipcPath?: string; pidPath?: string; utsPath?: string };

export interface RunHostDeps {
  config: () => DaemonConfig;
  log: Logger;
  execRoot: string;
  containersDir: string;
  shmSize: number;
  /** Container networking (bridge and user networks, ports, DNS); without it: loopback only. */
  networks?: RunNetworking;
  volumes?: Pick<ContainerVolumes, 'detach'>;
}

export class RunHostSide {
  constructor(private readonly d: RunHostDeps) {}

  /** As dockerd: a -v bind whose host path is missing gets it created (a directory); --mount
   * type=bind sources must exist (checked at create). */
  async createBindSources(rec: ContainerRecord, remap: IdentityMap | undefined): Promise<void> {
    for (const m of resolveMounts({ ...rec.HostConfig, Mounts: [], Tmpfs: {} }, this.d.volumes !== undefined)) {
      if (m.type === 'bind' && !existsSync(m.source)) {
        await mkdir(m.source, { recursive: true, mode: 0o755 });
        // dockerd gives a created bind source to the container's (remapped) root.
        if (remap) await chown(m.source, remap.rootUid, remap.rootGid);
      }
    }
  }

  /**
   * The host directory bound at /dev/shm for IpcMode shareable (its tmpfs is mounted here) or
   * container:<id> (the donor's, which must be shareable and running); undefined otherwise.
   */
  async shmFor(rec: ContainerRecord, find: (ref: string) => ContainerRecord): Promise<string | undefined> {
    const mode = rec.HostConfig.IpcMode || this.d.config()['default-ipc-mode'];
    if (mode === 'shareable') {
      const path = shmPath(join(this.d.containersDir, rec.Id));
      await mountShm(path, rec.HostConfig.ShmSize || this.d.shmSize);
      return path;
    }
    if (mode.startsWith('container:')) {
      const donor = find(mode.slice('container:'.length));
      if (!donor.State.Running) throw conflict(`cannot join IPC of a non running container: ${donor.Id}`);
      if ((donor.HostConfig.IpcMode || 'private') !== 'shareable') {
        throw invalidParameter(`container ${donor.Id}: non-shareable IPC (hint: use IpcMode:shareable for the donor container)`);
      }
      return shmPath(join(this.d.containersDir, donor.Id));
    }
    return undefined;
  }

  /**
   * The namespaces of a run, as paths (checked now: a namespace shared with a container that is not
   * running is refused before anything is made); `ownNetwork` when the daemon makes the container's
   * network namespace (bound at netnsPath, so its path is known before it exists).
   */
  namespacesFor(rec: ContainerRecord, find: (ref: string) => ContainerRecord): { namespaces: RunNamespaces; ownNetwork: boolean } {
    const hc = rec.HostConfig;
    const ns: RunNamespaces = {};
    const mode = hc.NetworkMode ?? 'bridge';
    let ownNetwork = false;
    if (mode === 'host') ns.networkPath = 'host';
    else if (mode.startsWith('container:')) {
      const other = find(mode.slice('container:'.length));
      if (!other.State.Running)
        throw conflict(`cannot join network namespace of a non running container: container ${other.Id} is ${other.State.Status}`);
      ns.networkPath = other.Internal.netnsPath ?? `/proc/${other.State.Pid}/ns/net`;
    } else {
      ns.networkPath = netnsPath(this.d.execRoot, rec.Id);
      ownNetwork = true;
    }
    for (const [field, key] of [
      ['IpcMode', 'ipcPath'],
      ['PidMode', 'pidPath'],
      ['UTSMode', 'utsPath'],
    ] as const) {
      const v = hc[field];
      if (v === 'host') ns[key] = 'host';
      else if (v?.startsWith('container:')) {
        const other = find(v.slice('container:'.length));
        if (!other.State.Running)
          throw conflict(`cannot join namespace of a non running container: container ${other.Id} is ${other.State.Status}`);
        ns[key] = `/proc/${other.State.Pid}/ns/${key === 'ipcPath' ? 'ipc' : key === 'pidPath' ? 'pid' : 'uts'}`;
      }
    }
    return { namespaces: ns, ownNetwork };
  }

  /**
   * The network side of a run: the container's own namespace when the daemon makes it (bound under
   * exec-root/netns, so it outlives the task and a daemon restart; with the networks service its
   * interfaces, addresses and published ports too), its /etc files (which name its addresses) and,
   * remapped, the namespace's /sys.
   */
  async prepareNetwork(
    rec: ContainerRecord,
    dir: string,
    namespaces: RunNamespaces,
    ownNetwork: boolean,
    remap: IdentityMap | undefined,
  ): Promise<void> {
    let sandbox: SandboxInfo | undefined;
    if (ownNetwork && this.d.networks) {
      sandbox = await this.d.networks.setupSandbox(rec);
      rec.Internal.netnsPath = sandbox.netnsPath;
    } else if (ownNetwork) {
      rec.Internal.netnsPath = await createNetns(this.d.execRoot, rec.Id);
    }
    await writeEtcFiles({
      dir,
      hostname: rec.Config.Hostname ?? rec.Id.slice(0, 12),
      domainname: rec.Config.Domainname ?? '',
      extraHosts: this.d.networks
        ? this.d.networks.extraHosts(rec)
        : (rec.HostConfig.ExtraHosts ?? []).map((h) => {
            const i = h.lastIndexOf(':');
            return `${h.slice(i + 1)} ${h.slice(0, i)}`;
          }),
      addresses: sandbox?.addresses ?? [],
      dns: sandbox?.dns ?? {
        servers: rec.HostConfig.Dns?.length ? rec.HostConfig.Dns : this.d.config().dns,
        options: rec.HostConfig.DnsOptions?.length ? rec.HostConfig.DnsOptions : this.d.config()['dns-opts'],
        search: rec.HostConfig.DnsSearch?.length ? rec.HostConfig.DnsSearch : this.d.config()['dns-search'],
      },
      hostNetwork: namespaces.networkPath === 'host',
    });
    if (remap && namespaces.networkPath && namespaces.networkPath !== 'host') await mountNetnsSysfs(namespaces.networkPath, sysfsPath(dir));
  }

  /** What a failed start made on the host, undone (its error is the one reported; what cannot be undone is logged). */
  async undoStart(rec: ContainerRecord, dir: string): Promise<void> {
    const id = rec.Id;
    await unmountShm(shmPath(dir));
    await unmountNetnsSysfs(sysfsPath(dir));
    await unmountFuseRoot(dir);
    if (this.d.networks)
      await this.d.networks.teardownSandbox(id).catch((u) => this.d.log.debug(`undoing a start: sandbox: ${(u as Error).message}`, { id }));
    await this.d.volumes?.detach(rec).catch((u) => this.d.log.debug(`undoing a start: volumes: ${(u as Error).message}`, { id }));
    await this.dropNetns(rec);
  }

  /** The record's own network namespace, removed (after its run). */
  async dropNetns(rec: ContainerRecord): Promise<void> {
    if (rec.Internal.netnsPath) {
      if (existsSync(rec.Internal.netnsPath)) await removeNetns(rec.Internal.netnsPath);
      delete rec.Internal.netnsPath;
    }
  }

  /** The sandbox, namespace and mounts of a run (after its task is gone). */
  async release(id: string): Promise<void> {
    // The sandbox goes with the task: addresses, ports, veths, namespace.
    if (this.d.networks) await this.d.networks.teardownSandbox(id);
    const ns = netnsPath(this.d.execRoot, id);
    if (existsSync(ns)) await removeNetns(ns);
    await unmountShm(shmPath(join(this.d.containersDir, id)));
    await unmountNetnsSysfs(sysfsPath(join(this.d.containersDir, id)));
    await unmountFuseRoot(join(this.d.containersDir, id));
  }
}
