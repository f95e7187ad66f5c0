// Short helper commands (mkfifo, mount, umount, unshare, iptables-restore …) run by a few
// long-lived /bin/sh processes instead of being spawned by Node. A spawn forks the whole daemon:
// ~9 ms of its CPU each (measured with a realistic heap), on every container start and removal.
// A line written to a shell costs the daemon ~0.1 ms; the shell, a small process, does the fork.
//
// Each job is one line of script: the command with its arguments single-quoted, stdin from a
// here-document or /dev/null, then a sentinel line (carrying the exit status) on stdout and on
// stderr. Jobs run one at a time per shell, so the output up to the sentinels is the job's.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { withSystemDirs } from './host-path.ts';

export class CommandError extends Error {
  constructor(
    readonly command: string,
    readonly stderr: string,
    readonly code: number | null,
  ) {
    super(`${command}: ${stderr.trim() || `exit status ${code}`}`);
  }
}

export interface RunOptions {
  /** Text for the command's stdin (a final newline is added when missing). */
  input?: string;
  /** The command is killed (with its shell) after this long; default one minute. */
  timeoutMs?: number;
}

interface Job {
  cmd: string;
  args: string[];
  opts: RunOptions;
  resolve(stdout: string): void;
  reject(err: Error): void;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/** A word the shell passes on unchanged. */
export function shellQuote(word: string): string {
  if (word.includes('\0')) throw new Error('a command argument cannot contain a NUL byte');
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** An idle shell must not keep the process alive: neither the child nor its pipes. */
function setRef(child: ChildProcess, on: boolean): void {
  for (const h of [child, child.stdin, child.stdout, child.stderr] as Array<{ ref?(): void; unref?(): void } | null>) {
    if (on) h?.ref?.();
    else h?.unref?.();
  }
}

class Shell {
  private child: ChildProcess | null = null;
  private readonly token = `__engine_${randomBytes(8).toString('hex')}`;
  private out = '';
  private err = '';
  private job: Job | null = null;
  private timer: NodeJS.Timeout | null = null;
  private result: { stdout?: string; code?: number; stderr?: string } = {};

  constructor(private readonly next: () => Job | undefined) {}

  get idle(): boolean {
    return this.job === null;
  }

  run(job: Job): void {
    this.job = job;
    this.result = {};
    let child: ChildProcess;
    try {
      child = this.child ?? this.spawnShell();
    } catch (err) {
      this.finish(new CommandError(job.cmd, (err as Error).message, null));
      return;
    }
    setRef(child, true);
    const line = [job.cmd, ...job.args].map(shellQuote).join(' ');
    const input = job.opts.input ?? '';
    const stdin = input ? ` <<'${this.token}_in'\n${input}${input.endsWith('\n') ? '' : '\n'}${this.token}_in` : ' </dev/null';
    const t = this.token;
    const script = `${line}${stdin}\n__s=$?; printf '\\n%s %s\\n' ${t} "$__s"; printf '\\n%s\\n' ${t} >&2\n`;
    this.timer = setTimeout(
      () => this.kill(`timed out after ${job.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms`),
      job.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    );
    child.stdin!.write(script);
  }

  close(): void {
    this.child?.stdin?.end();
    this.child = null;
  }

  private spawnShell(): ChildProcess {
    // Its own process group, so a command that hangs can be killed together with its shell.
    // Commands go by name (iptables-restore, mount…): found in the sbin directories whatever PATH
    // the daemon (or a test) was started with.
    const env = { ...process.env, PATH: withSystemDirs(process.env.PATH) };
    const child = spawn('/bin/sh', [], { stdio: ['pipe', 'pipe', 'pipe'], cwd: '/', detached: true, env });
    child.stdout!.setEncoding('utf8');
    child.stderr!.setEncoding('utf8');
    // Output of a shell that was killed and replaced is no longer anyone's.
    child.stdout!.on('data', (d: string) => this.child === child && this.onStdout(d));
    child.stderr!.on('data', (d: string) => this.child === child && this.onStderr(d));
    child.stdin!.on('error', () => undefined); // reported by 'exit'
    child.on('error', (err) => this.onExit(child, err.message));
    child.on('exit', (code, signal) => this.onExit(child, signal ? `killed by ${signal}` : `exit status ${code}`));
    this.child = child;
    this.out = this.err = '';
    return child;
  }

  private onStdout(d: string): void {
    this.out += d;
    const at = this.out.indexOf(`\n${this.token} `);
    const end = at < 0 ? -1 : this.out.indexOf('\n', at + 1);
    if (end < 0) return;
    this.result.stdout = this.out.slice(0, at);
    this.result.code = Number(this.out.slice(at + this.token.length + 2, end));
    this.out = this.out.slice(end + 1);
    this.settle();
  }

  private onStderr(d: string): void {
    this.err += d;
    const mark = `\n${this.token}\n`;
    const at = this.err.indexOf(mark);
    if (at < 0) return;
    this.result.stderr = this.err.slice(0, at);
    this.err = this.err.slice(at + mark.length);
    this.settle();
  }

  private settle(): void {
    const { stdout, stderr, code } = this.result;
    if (stdout === undefined || stderr === undefined || !this.job) return;
    const job = this.job;
    this.finish(code === 0 ? null : new CommandError(`${job.cmd} ${job.args.join(' ')}`, stderr, code ?? null), stdout);
  }

  private finish(err: Error | null, stdout = ''): void {
    const job = this.job!;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.job = null;
    if (err) job.reject(err);
    else job.resolve(stdout);
    const next = this.next();
    if (next) this.run(next);
    else if (this.child) setRef(this.child, false);
  }

  private kill(why: string): void {
    const child = this.child;
    if (!child?.pid) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
    this.onExit(child, why);
  }

  private onExit(child: ChildProcess, why: string): void {
    if (this.child !== child) return;
    this.child = null;
    if (this.job) this.finish(new CommandError(this.job.cmd, `helper shell: ${why}`, null));
  }
}

/** A few shells sharing one queue; each starts at its first job and stays (unref'd) for the next. */
export class HelperShells {
  private readonly queue: Job[] = [];
  private readonly shells: Shell[];

  constructor(size = 2) {
    this.shells = Array.from({ length: size }, () => new Shell(() => this.queue.shift()));
  }

  /** Runs `cmd` with `args`; resolves with its stdout, rejects with a CommandError carrying its stderr. */
  run(cmd: string, args: string[], opts: RunOptions = {}): Promise<string> {
    return new Promise((resolve, reject) => {
      const job: Job = { cmd, args, opts, resolve, reject };
      const shell = this.shells.find((s) => s.idle);
      if (shell) shell.run(job);
      else this.queue.push(job);
    });
  }

  close(): void {
    for (const s of this.shells) s.close();
  }
}

let shared: HelperShells | undefined;

/** The daemon's helper shells (started on first use). */
export function runCommand(cmd: string, args: string[], opts: RunOptions = {}): Promise<string> {
  shared ??= new HelperShells();
  return shared.run(cmd, args, opts);
}
