// Namespace mode strings of HostConfig (NetworkMode, IpcMode, PidMode, UTSMode, CgroupnsMode).

/** "container:<ref>" → ref (undefined for any other mode). */
export function containerRef(mode: string | undefined): string | undefined {
  if (!mode?.startsWith('container:')) return undefined;
  return mode.slice('container:'.length);
}

export function validIpcMode(mode: string): boolean {
  return ['', 'none', 'private', 'shareable', 'host'].includes(mode) || !!containerRef(mode);
}

export function validPidMode(mode: string): boolean {
  return mode === '' || mode === 'host' || !!containerRef(mode);
}

export function validUtsMode(mode: string): boolean {
  return mode === '' || mode === 'host';
}

export function validCgroupnsMode(mode: string): boolean {
  return mode === '' || mode === 'host' || mode === 'private';
}
