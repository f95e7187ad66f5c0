// The OCI layer's public surface: build a container's runtime spec and the host facts it needs.

export {
  buildSpec,
  buildEnv,
  cgroupnsMode,
  DEFAULT_MASKED_PATHS,
  DEFAULT_READONLY_PATHS,
  DEFAULT_PATH_ENV,
  INIT_PATH_IN_CONTAINER,
  OCI_VERSION,
} from './spec.ts';
export type { DaemonSpecDefaults, SpecInput } from './spec.ts';
export { serializeSpec } from './spec-types.ts';
export type { LinuxSeccomp, OciSpec } from './spec-types.ts';
export { ALL_CAPABILITIES, DEFAULT_CAPABILITIES, normalizeCapabilities, readOwnCapabilities, resolveCapabilities } from './caps.ts';
export {
  cgroupDriverDefault,
  cgroupsPath,
  cgroupVersion,
  defaultCgroupParent,
  detectCgroupLayout,
  isSystemdRunning,
  resolveCgroupDriver,
} from './cgroups.ts';
export type { CgroupDriver, CgroupLayout } from './cgroups.ts';
export { deviceNumbers, listHostDevices, resolveDevice, resolveDeviceMappings } from './devices.ts';
export type { ResolvedDevice } from './devices.ts';
export { tmpfsMountOptions } from './mounts.ts';
export type { ResolvedMount } from './mounts.ts';
export { checkUlimits, mergeUlimits, readDaemonHardLimits } from './rlimits.ts';
export { parseSeccompProfile, seccompFromProfile } from './seccomp.ts';
export type { DockerSeccompProfile } from './seccomp.ts';
export { defaultSeccompDocument, defaultSeccompProfile } from './seccomp-default.ts';
export { parseSecurityOpt } from './security-opt.ts';
export { parseSignal } from './signals.ts';
export { resolveUser, scopedPath } from './user.ts';
export { parseBind, validateCreateBody } from './validate-create.ts';
export type { ParsedBind, ValidateOptions } from './validate-create.ts';
