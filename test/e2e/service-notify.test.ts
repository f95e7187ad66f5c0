// Issue 27: the daemon under a Type=notify unit. A fake service manager (a unix datagram socket the
// test binds, as systemd does for NOTIFY_SOCKET) receives READY=1 with MAINPID once the API serves,
// RELOADING=1 … READY=1 around a SIGHUP reload and STOPPING=1 at shutdown; an @abstract address works
// too, and NOTIFY_SOCKET is not passed on to containerd.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { startDaemon } from '../helpers/daemon.ts';
import { NotifyReceiver } from '../helpers/notify-receiver.ts';

/** The pids whose command line holds `needle`. */
async function pidsWith(needle: string): Promise<number[]> {
  const out: number[] = [];
  for (const e of await readdir('/proc')) {
    if (!/^[0-9]+$/.test(e)) continue;
    const cmd = await readFile(`/proc/${e}/cmdline`, 'utf8').catch(() => ''); // gone meanwhile
    if (cmd.replaceAll('\0', ' ').includes(needle)) out.push(Number(e));
  }
  return out;
}

describe('the systemd notify protocol', () => {
  test('READY=1 with MAINPID once serving, RELOADING=1/READY=1 on SIGHUP, STOPPING=1 at shutdown', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'engine-notify-'));
    const rx = NotifyReceiver.open(join(dir, 'notify.sock'));
    const d = await startDaemon({ env: { NOTIFY_SOCKET: rx.address }, waitReady: false });
    try {
      const ready = await rx.waitFor(/^READY=1$/m);
      // READY means the API answers: asked right away, with no retry.
      assert.equal((await d.request('GET', '/_ping')).text(), 'OK');
      assert.match(rx.messages[ready]!, new RegExp(`^MAINPID=${d.pid}$`, 'm'), 'MAINPID names the daemon (bin/engined execs node)');
      assert.equal(rx.messages.slice(0, ready).filter((m) => /READY=1|STOPPING=1/.test(m)).length, 0);
      // containerd (and every other child) is started without the variable: it would notify too.
      const [ctd] = await pidsWith(`containerd --config ${d.execRoot}/`);
      assert.ok(ctd, 'the daemon runs its own containerd');
      assert.doesNotMatch(await readFile(`/proc/${ctd}/environ`, 'utf8'), /NOTIFY_SOCKET=/);

      const before = rx.drain().length;
      d.child.kill('SIGHUP');
      const reloading = await rx.waitFor(/^RELOADING=1$/m, before);
      await rx.waitFor(/^READY=1$/m, reloading + 1);
      await d.waitForOutput(/msg="Reloaded configuration"/);

      const beforeStop = rx.drain().length;
      assert.equal(await d.stop(), 0);
      await rx.waitFor(/^STOPPING=1$/m, beforeStop, 1000);
    } finally {
      rx.close();
      await d.cleanup();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('an @abstract NOTIFY_SOCKET is reached; a socket nobody listens on is a warning, not a failure', async () => {
    const rx = NotifyReceiver.open(`@engine-test-notify-${randomBytes(6).toString('hex')}`);
    const d = await startDaemon({ env: { NOTIFY_SOCKET: rx.address }, waitReady: false });
    try {
      const i = await rx.waitFor(/^READY=1$/m);
      assert.match(rx.messages[i]!, /^MAINPID=[0-9]+$/m);
    } finally {
      rx.close();
      await d.cleanup();
    }
    const gone = await startDaemon({ env: { NOTIFY_SOCKET: `@engine-test-nobody-${randomBytes(6).toString('hex')}` } });
    try {
      await gone.waitForOutput(
        /level=warning msg="could not notify the service manager \(READY=1\): connect @engine-test-nobody-[0-9a-f]+: ECONNREFUSED"/,
      );
      assert.equal((await gone.request('GET', '/_ping')).text(), 'OK');
    } finally {
      await gone.cleanup();
    }
  });
});
