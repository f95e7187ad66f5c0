// A long-lived `ip -force -batch -` in the daemon's namespace: host-side link changes without a
// process per container. Each request's lines are followed by a barrier line that always fails
// ("Command failed -:<n>" on stderr marks it done); failures of the request's own lines arrive
// before it, numbered, with their messages.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { CommandError } from '../../util/helper-shell.ts';

// `/` is never a valid interface name, so this line fails, cheaply, every time.
const BARRIER = 'link show dev /';

interface Pending {
  first: number;
  barrier: number;
  errors: string[];
  resolve(): void;
  reject(err: Error): void;
}

export class IpServer {
  private child?: ChildProcessWithoutNullStreams;
  private line = 0;
  private pending: Pending[] = [];
  private stderr = '';
  private message: string[] = [];

  /** Runs the lines (in the host namespace); rejects with the first failing line's message. */
  run(lines: string[]): Promise<void> {
    if (lines.length === 0) return Promise.resolve();
    const child = this.ensure();
    return new Promise<void>((resolve, reject) => {
      const first = this.line + 1;
      this.line += lines.length + 1;
      this.pending.push({ first, barrier: this.line, errors: [], resolve, reject });
      this.hold(child, true);
      child.stdin.write(`${lines.join('\n')}\n${BARRIER}\n`);
    });
  }

  /** Keeps the event loop alive while answers are due, never while idle. */
  private hold(child: ChildProcessWithoutNullStreams, on: boolean): void {
    const handles = [child, child.stderr as unknown as { ref(): void; unref(): void }];
    for (const h of handles) on ? h.ref() : h.unref();
  }

  private ensure(): ChildProcessWithoutNullStreams {
    if (this.child && this.child.exitCode === null && !this.child.killed) return this.child;
    const child = spawn('ip', ['-force', '-batch', '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    this.line = 0;
    this.stderr = '';
    this.message = [];
    child.stdout.resume();
    // EPIPE when ip dies: its 'exit' below rejects what was pending, with the reason.
    child.stdin.on('error', () => undefined);
    child.stderr.on('data', (d: Buffer) => this.onStderr(d.toString()));
    const fail = (why: string) => {
      if (this.child === child) this.child = undefined;
      for (const p of this.pending.splice(0)) p.reject(new CommandError('ip -batch', why, null));
    };
    child.on('error', (e) => fail(e.message));
    child.on('exit', (code) => fail(`ip exited with status ${code}`));
    // Idle, it is no reason to keep the daemon alive.
    (child.stdin as unknown as { unref(): void }).unref();
    (child.stdout as unknown as { unref(): void }).unref();
    this.hold(child, false);
    return child;
  }

  private onStderr(text: string): void {
    this.stderr += text;
    let nl: number;
    while ((nl = this.stderr.indexOf('\n')) >= 0) {
      const line = this.stderr.slice(0, nl);
      this.stderr = this.stderr.slice(nl + 1);
      const m = /^Command failed -:(\d+)$/.exec(line);
      if (!m) {
        this.message.push(line);
        continue;
      }
      const n = Number(m[1]);
      const msg = this.message.join('\n');
      this.message = [];
      const p = this.pending[0];
      if (!p) continue;
      if (n === p.barrier) {
        this.pending.shift();
        if (this.pending.length === 0 && this.child) this.hold(this.child, false);
        if (p.errors.length) p.reject(new CommandError('ip -batch', p.errors.join('\n'), 1));
        else p.resolve();
      } else if (n >= p.first) {
        p.errors.push(msg);
      }
    }
  }

  close(): void {
    this.child?.stdin.end();
    this.child = undefined;
  }
}
