// Cluster requests adapted to the client's API version as dockerd's swarm router does it before
// the backend sees them: a service spec loses the fields its version did not have (dockerd's
// adjustForAPIVersion), swarm init its newer options, and templating of secrets and configs needs
// 1.37. Specs are the decoded ones (cluster-body-schemas.ts: canonical names) and change in place.
import { invalidParameter } from '../../errors.ts';
import { versionLessThan } from '../../util/api-version.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const objAt = (o: Obj, k: string): Obj | undefined => (isObj(o[k]) ? (o[k] as Obj) : undefined);

/** A service spec for create or update, with what `version` did not know taken out. */
export function adjustServiceForVersion(spec: Obj, version: string): void {
  const lt = (v: string) => versionLessThan(version, v);
  const tt = objAt(spec, 'TaskTemplate') ?? {};
  const cs = objAt(tt, 'ContainerSpec');
  const mounts = Array.isArray(cs?.Mounts) ? (cs.Mounts as unknown[]).filter(isObj) : [];
  if (lt('1.46')) {
    // Tmpfs mount options arrived in 1.46.
    for (const m of mounts) {
      const t = objAt(m, 'TmpfsOptions');
      if (t) delete t.Options;
    }
  }
  if (lt('1.40')) {
    if (cs) {
      delete cs.Sysctls;
      const cred = objAt(objAt(cs, 'Privileges') ?? {}, 'CredentialSpec');
      if (cred) delete cred.Config;
      for (const c of Array.isArray(cs.Configs) ? (cs.Configs as unknown[]).filter(isObj) : []) delete c.Runtime;
    }
    const placement = objAt(tt, 'Placement');
    if (placement) delete placement.MaxReplicas;
  }
  if (lt('1.41')) {
    if (cs) {
      delete cs.CapabilityAdd;
      delete cs.CapabilityDrop;
      delete cs.Ulimits;
    }
    const limits = objAt(objAt(tt, 'Resources') ?? {}, 'Limits');
    if (limits) delete limits.Pids;
    // Jobs arrived in 1.41: a job mode from an older client is no mode at all.
    const mode = objAt(spec, 'Mode');
    if (mode) {
      delete mode.ReplicatedJob;
      delete mode.GlobalJob;
    }
  }
  if (lt('1.44') && cs) {
    const priv = objAt(cs, 'Privileges');
    if (priv) {
      delete priv.Seccomp;
      delete priv.AppArmor;
      delete priv.NoNewPrivileges;
    }
    const hc = objAt(cs, 'Healthcheck');
    if (hc) delete hc.StartInterval;
  }
  if (lt('1.46') && cs) delete cs.OomScoreAdj;
}

/** POST /swarm/init: DefaultAddrPool and SubnetSize from 1.39, DataPathPort from 1.40. */
export function adjustInitForVersion(req: Obj, version: string): void {
  if (versionLessThan(version, '1.39')) {
    delete req.DefaultAddrPool;
    delete req.SubnetSize;
  }
  if (versionLessThan(version, '1.40')) delete req.DataPathPort;
}

/** Secret and config create: templating needs API 1.37. */
export function checkTemplatingVersion(kind: 'secrets' | 'configs', spec: Obj, version: string): void {
  if (spec.Templating !== undefined && versionLessThan(version, '1.37'))
    throw invalidParameter(
      `${kind === 'secrets' ? 'secret' : 'config'} templating is not supported on the specified API version: ${version}`,
    );
}
