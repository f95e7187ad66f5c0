// Host tools (iptables*, ip, modprobe, mkfs.*, …) are found wherever Debian installs them, whatever
// PATH the daemon was started with: a plain user's login PATH (/etc/login.defs ENV_PATH, and
// rootless mode is started from one) has no /usr/sbin or /sbin, where most of them live.

/** The standard system directories, in the order of Debian's root PATH. */
export const SYSTEM_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'] as const;

/** `path` with every standard system directory it lacks appended (the caller's own order kept first). */
export function withSystemDirs(path: string | undefined): string {
  const dirs = (path ?? '').split(':').filter(Boolean);
  const have = new Set(dirs.map((d) => d.replace(/\/+$/, '') || '/'));
  for (const dir of SYSTEM_DIRS) if (!have.has(dir)) dirs.push(dir);
  return dirs.join(':');
}

/** Extends this process's PATH, so that every child it spawns (and their children) finds the tools. */
export function extendProcessPath(env: NodeJS.ProcessEnv = process.env): void {
  env.PATH = withSystemDirs(env.PATH);
}
