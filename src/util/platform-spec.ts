// The `platform` parameter (`?platform=` on create and pull): read as containerd's platforms.Parse
// reads it, with its refusals in its own words ("\"x\": unknown operating system or architecture:
// invalid argument"), so a client sees what dockerd answers; and the match dockerd applies between
// a wanted platform and an image's (os and architecture equal, an older ARM variant runs on a newer).
import { readFileSync } from 'node:fs';

export interface PlatformSpec {
  os: string;
  architecture: string;
  variant?: string;
}

/** A refusal of a platform specifier, in containerd's words (the caller makes it a 400). */
export class PlatformSpecError extends Error {
  constructor(message: string) {
    super(`${message}: invalid argument`);
    this.name = 'PlatformSpecError';
  }
}

const KNOWN_OS = new Set([
  'aix',
  'android',
  'darwin',
  'dragonfly',
  'freebsd',
  'hurd',
  'illumos',
  'ios',
  'js',
  'linux',
  'nacl',
  'netbsd',
  'openbsd',
  'plan9',
  'solaris',
  'windows',
  'zos',
]);
const KNOWN_ARCH = new Set([
  '386',
  'amd64',
  'amd64p32',
  'arm',
  'armbe',
  'arm64',
  'arm64be',
  'ppc64',
  'ppc64le',
  'loong64',
  'mips',
  'mipsle',
  'mips64',
  'mips64le',
  'mips64p32',
  'mips64p32le',
  'ppc',
  'riscv',
  'riscv64',
  's390',
  's390x',
  'sparc',
  'sparc64',
  'wasm',
]);

const OS_RE = /^([A-Za-z0-9_-]+)(?:\(([A-Za-z0-9_.%-]*)((?:\+[A-Za-z0-9_.%-]+)*)\))?$/;
const OS_RE_TEXT = String.raw`^([A-Za-z0-9_-]+)(?:\(([A-Za-z0-9_.%-]*)((?:\+[A-Za-z0-9_.%-]+)*)\))?$`;
const SPECIFIER_RE = /^[A-Za-z0-9_.-]+$/;
const SPECIFIER_RE_TEXT = '^[A-Za-z0-9_.-]+$';

/** Go's %q for the texts these messages quote (JSON's quoting, which agrees for printable text). */
const q = (s: string) => JSON.stringify(s);

/** containerd's normalizeArch. */
export function normalizeArch(arch: string, variant: string): [string, string] {
  arch = arch.toLowerCase();
  variant = variant.toLowerCase();
  switch (arch) {
    case 'i386':
      return ['386', ''];
    case 'x86_64':
    case 'x86-64':
    case 'amd64':
      return ['amd64', variant === 'v1' ? '' : variant];
    case 'aarch64':
    case 'arm64':
      if (variant === '8' || variant === 'v8' || variant === 'v8.0') variant = '';
      else if (variant === '9' || variant === '9.0' || variant === 'v9.0') variant = 'v9';
      return ['arm64', variant];
    case 'armhf':
      return ['arm', 'v7'];
    case 'armel':
      return ['arm', 'v6'];
    case 'arm':
      if (variant === '' || variant === '7') variant = 'v7';
      else if (variant === '5' || variant === '6' || variant === '8') variant = `v${variant}`;
      return ['arm', variant];
  }
  return [arch, variant];
}

/** containerd's platforms.Parse; `hostArch` stands for runtime.GOARCH. Throws PlatformSpecError. */
export function parsePlatformSpec(specifier: string, hostArch = 'amd64'): PlatformSpec {
  if (specifier.includes('*')) throw new PlatformSpecError(`${q(specifier)}: wildcards not yet supported`);
  // At most 4 parts, as Go's SplitN: a long specifier is not split further.
  const all = specifier.split('/');
  const parts = all.length > 4 ? [...all.slice(0, 3), all.slice(3).join('/')] : all;
  const osMatch = OS_RE.exec(parts[0]!);
  if (!osMatch) {
    throw new PlatformSpecError(
      `${q(parts[0]!)} is an invalid OS component of ${q(specifier)}: OSAndVersion specifier component must match ${q(OS_RE_TEXT)}`,
    );
  }
  for (const part of parts.slice(1)) {
    if (!SPECIFIER_RE.test(part)) {
      throw new PlatformSpecError(
        `${q(part)} is an invalid component of ${q(specifier)}: platform specifier component must match ${q(SPECIFIER_RE_TEXT)}`,
      );
    }
  }
  let os = osMatch[1]!.toLowerCase();
  if (os === 'macos') os = 'darwin';
  const out = (architecture: string, variant: string): PlatformSpec => ({ os, architecture, ...(variant ? { variant } : {}) });
  switch (parts.length) {
    case 1: {
      if (KNOWN_OS.has(os)) return out(hostArch, '');
      let [arch, variant] = normalizeArch(parts[0]!, '');
      if (arch === 'arm' && variant === 'v7') variant = '';
      if (KNOWN_ARCH.has(arch)) {
        os = 'linux';
        return out(arch, variant);
      }
      throw new PlatformSpecError(`${q(specifier)}: unknown operating system or architecture`);
    }
    case 2: {
      let [arch, variant] = normalizeArch(parts[1]!, '');
      if (arch === 'arm' && variant === 'v7') variant = '';
      return out(arch, variant);
    }
    case 3: {
      let [arch, variant] = normalizeArch(parts[1]!, parts[2]!);
      if (arch === 'arm64' && variant === '') variant = 'v8';
      return out(arch, variant);
    }
  }
  throw new PlatformSpecError(`${q(specifier)}: cannot parse platform specifier`);
}

/** containerd's platforms.FormatAll (without OS version and features, which images here lack). */
export function formatPlatformSpec(p: PlatformSpec): string {
  return [p.os || 'unknown', p.architecture, p.variant].filter(Boolean).join('/');
}

/**
 * Whether an image of platform `have` satisfies a request for `want` (dockerd's
 * OnlyPlatformWithFallback): same OS and architecture; an image of an older variant runs on a
 * newer one (arm v5 and v6 on v7, amd64 v2 on v3; arm/v7 and older on arm64/v8).
 */
export function platformSatisfies(want: PlatformSpec, have: PlatformSpec): boolean {
  const [wa, wv] = normalizeArch(want.architecture, want.variant ?? '');
  const [ha, hv] = normalizeArch(have.architecture, have.variant ?? '');
  if ((have.os || 'linux').toLowerCase() !== want.os.toLowerCase()) return false;
  if (wa === ha) {
    if (!wv || !hv || wv === hv) return true;
    return (wa === 'arm' || wa === 'amd64') && hv < wv; // arm v5 < v6 < v7 < v8, amd64 v1 < v2 < v3 < v4
  }
  return wa === 'arm64' && ha === 'arm' && (wv === '' || wv === 'v8');
}

// The x86-64 microarchitecture levels (v2, v3, v4) by the CPU flags Linux lists in /proc/cpuinfo,
// as dockerd detects them with cpuid (go-archvariant); the OS-support bits follow the flags.
const AMD64_LEVELS: [string, string[]][] = [
  ['v4', ['avx512f', 'avx512dq', 'avx512cd', 'avx512bw', 'avx512vl']],
  ['v3', ['fma', 'movbe', 'xsave', 'avx', 'f16c', 'bmi1', 'avx2', 'bmi2', 'abm']],
  ['v2', ['pni', 'ssse3', 'cx16', 'sse4_1', 'sse4_2', 'popcnt', 'lahf_lm']],
];

/** The amd64 level of a CPU with these flags: each level needs its own flags and the lower ones'. */
export function amd64Variant(flags: ReadonlySet<string>): string {
  let level = 'v1';
  for (let i = AMD64_LEVELS.length - 1; i >= 0; i--) {
    const [name, need] = AMD64_LEVELS[i]!;
    if (!need.every((f) => flags.has(f))) break;
    level = name;
  }
  return level;
}

let host: PlatformSpec | undefined;

/** dockerd's maximumSpec(): this host's platform, with the amd64 level as its variant. */
export function hostPlatform(cpuinfo: () => string = () => readFileSync('/proc/cpuinfo', 'utf8')): PlatformSpec {
  if (host) return host;
  const arch = process.arch === 'x64' ? 'amd64' : process.arch === 'ia32' ? '386' : process.arch;
  let variant = '';
  if (arch === 'amd64') {
    try {
      const line = /^flags\s*:(.*)$/m.exec(cpuinfo())?.[1] ?? '';
      variant = amd64Variant(new Set(line.trim().split(/\s+/)));
    } catch {
      variant = 'v1'; // no /proc/cpuinfo to read: the baseline level
    }
  }
  host = { os: 'linux', architecture: arch, ...(variant ? { variant } : {}) };
  return host;
}
