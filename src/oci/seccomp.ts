// Seccomp profiles in Docker's JSON format (the one `--security-opt seccomp=<file>` and the daemon's
// --seccomp-profile take) → the OCI spec's linux.seccomp. Rules may be conditional on capabilities,
// architecture and kernel version (`includes` / `excludes`); they are resolved here for one container.

import { release } from 'node:os';
import { invalidParameter } from '../errors.ts';
import type { LinuxSeccomp, OciSeccompArg, OciSeccompSyscall } from './spec-types.ts';
import { goUnmarshalError } from '../util/go-json.ts';

export interface SeccompFilter {
  caps?: string[];
  arches?: string[];
  minKernel?: string;
}

export interface DockerSeccompRule {
  name?: string;
  names?: string[];
  action: string;
  errnoRet?: number;
  args?: OciSeccompArg[] | null;
  includes?: SeccompFilter;
  excludes?: SeccompFilter;
  comment?: string;
}

export interface DockerSeccompProfile {
  defaultAction: string;
  defaultErrnoRet?: number;
  architectures?: string[];
  archMap?: { architecture: string; subArchitectures?: string[] }[] | null;
  syscalls?: DockerSeccompRule[] | null;
  flags?: string[];
  listenerPath?: string;
  listenerMetadata?: string;
}

/** Go's GOARCH name for this process (the names `includes.arches` uses). */
export function goArch(nodeArch: string = process.arch): string {
  const map: Record<string, string> = {
    x64: 'amd64',
    ia32: '386',
    arm64: 'arm64',
    arm: 'arm',
    s390x: 's390x',
    ppc64: 'ppc64le',
    riscv64: 'riscv64',
    loong64: 'loong64',
    mips: 'mips',
    mipsel: 'mipsle',
  };
  return map[nodeArch] ?? nodeArch;
}

/** libseccomp's native architecture constant for a GOARCH name. */
export function nativeSeccompArch(arch: string = goArch()): string {
  const map: Record<string, string> = {
    amd64: 'SCMP_ARCH_X86_64',
    '386': 'SCMP_ARCH_X86',
    arm64: 'SCMP_ARCH_AARCH64',
    arm: 'SCMP_ARCH_ARM',
    s390x: 'SCMP_ARCH_S390X',
    ppc64le: 'SCMP_ARCH_PPC64LE',
    riscv64: 'SCMP_ARCH_RISCV64',
    loong64: 'SCMP_ARCH_LOONGARCH64',
    mips: 'SCMP_ARCH_MIPS',
    mipsle: 'SCMP_ARCH_MIPSEL',
  };
  return map[arch] ?? `SCMP_ARCH_${arch.toUpperCase()}`;
}

/** Compares "major.minor[.patch…]" kernel versions numerically (suffixes like "-generic" ignored). */
export function compareKernel(a: string, b: string): number {
  const parts = (v: string) => (/^(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(v) ?? []).slice(1).map((x) => Number(x ?? 0));
  const pa = parts(a);
  const pb = parts(b);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export interface SeccompContext {
  /** The container's capabilities (the bounding set), with CAP_ prefix. */
  capabilities: readonly string[];
  /** GOARCH of the host; default: this process's. */
  arch?: string;
  /** Host kernel release; default: os.release(). */
  kernel?: string;
}

function applies(rule: DockerSeccompRule, ctx: Required<SeccompContext>): boolean {
  const inc = rule.includes;
  if (inc) {
    if (inc.arches?.length && !inc.arches.includes(ctx.arch)) return false;
    if (inc.caps?.length && !inc.caps.every((c) => ctx.capabilities.includes(c))) return false;
    if (inc.minKernel && compareKernel(ctx.kernel, inc.minKernel) < 0) return false;
  }
  const exc = rule.excludes;
  if (exc) {
    if (exc.arches?.length && exc.arches.includes(ctx.arch)) return false;
    if (exc.caps?.length && exc.caps.some((c) => ctx.capabilities.includes(c))) return false;
    if (exc.minKernel && compareKernel(ctx.kernel, exc.minKernel) >= 0) return false;
  }
  return true;
}

/** Resolves a Docker-format profile for one container into linux.seccomp. */
export function seccompFromProfile(profile: DockerSeccompProfile, context: SeccompContext): LinuxSeccomp {
  if (!profile || typeof profile !== 'object' || typeof profile.defaultAction !== 'string') {
    throw invalidParameter('Decoding seccomp profile failed: defaultAction is missing');
  }
  const ctx: Required<SeccompContext> = { arch: goArch(), kernel: release(), ...context } as Required<SeccompContext>;
  const out: LinuxSeccomp = { defaultAction: profile.defaultAction };
  if (profile.defaultErrnoRet !== undefined) out.defaultErrnoRet = profile.defaultErrnoRet;

  if (profile.archMap?.length) {
    if (profile.architectures?.length) {
      throw invalidParameter(
        "Decoding seccomp profile failed: both 'architectures' and 'archMap' are specified in the seccomp profile, use either 'architectures' or 'archMap'",
      );
    }
    const native = nativeSeccompArch(ctx.arch);
    const entry = profile.archMap.find((a) => a.architecture === native);
    if (entry) out.architectures = [entry.architecture, ...(entry.subArchitectures ?? [])];
  } else if (profile.architectures?.length) {
    out.architectures = [...profile.architectures];
  }
  if (profile.flags?.length) out.flags = [...profile.flags];
  if (profile.listenerPath) out.listenerPath = profile.listenerPath;
  if (profile.listenerMetadata) out.listenerMetadata = profile.listenerMetadata;

  const syscalls: OciSeccompSyscall[] = [];
  for (const rule of profile.syscalls ?? []) {
    if (rule.name && rule.names?.length) {
      throw invalidParameter("Decoding seccomp profile failed: 'name' and 'names' were specified in the seccomp profile, use 'names'");
    }
    if (!applies(rule, ctx)) continue;
    const names = rule.names?.length ? [...rule.names] : rule.name ? [rule.name] : [];
    if (names.length === 0) continue;
    const s: OciSeccompSyscall = { names, action: rule.action };
    if (rule.errnoRet !== undefined) s.errnoRet = rule.errnoRet;
    if (rule.args?.length) s.args = rule.args.map((a) => ({ ...a }));
    syscalls.push(s);
  }
  out.syscalls = syscalls;
  return out;
}

/** Parses profile JSON text (SecurityOpt `seccomp=<json>`); errors name the problem like dockerd. */
export function parseSeccompProfile(text: string): DockerSeccompProfile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    // Go's json.Unmarshal words, as dockerd's profile loader answers.
    throw invalidParameter(`Decoding seccomp profile failed: ${goUnmarshalError(text) ?? (err as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalidParameter('Decoding seccomp profile failed: profile is not a JSON object');
  }
  const p = parsed as DockerSeccompProfile;
  if (typeof p.defaultAction !== 'string') throw invalidParameter('Decoding seccomp profile failed: defaultAction is missing');
  if (p.syscalls != null && !Array.isArray(p.syscalls))
    throw invalidParameter('Decoding seccomp profile failed: syscalls must be an array');
  return p;
}
