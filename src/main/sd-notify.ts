// systemd's notify protocol (sd_notify(3)) for the Type=notify unit (engine.service): when
// NOTIFY_SOCKET names a unix datagram socket, the daemon tells its service manager READY=1 (with
// MAINPID) once the API serves, RELOADING=1 … READY=1 around a SIGHUP reload and STOPPING=1 when
// shutdown starts. The datagrams go through the log drivers' native helper (build/native/unixgram.node,
// which also takes '@' for the abstract namespace): Node has no AF_UNIX SOCK_DGRAM.
import { errnoError, unixgramHelper } from '../logging/remote/unixgram.ts';
import type { Logger } from '../util/log.ts';

export interface ServiceNotifier {
  /** Sends one notification (newline-separated KEY=VALUE assignments); false when it could not. */
  send(state: string): boolean;
  readonly socket: string;
}

type Log = Pick<Logger, 'warn' | 'debug'>;

/**
 * The notifier for NOTIFY_SOCKET, or undefined when the daemon was not started by a service manager
 * that asks. The variable is removed from `env`, as sd_notify's unset_environment does: containerd
 * and the other children would otherwise inherit it (containerd notifies too).
 */
export function serviceNotifier(env: NodeJS.ProcessEnv, log: Log): ServiceNotifier | undefined {
  const socket = env.NOTIFY_SOCKET;
  delete env.NOTIFY_SOCKET;
  if (!socket) return undefined;
  if (!socket.startsWith('/') && !socket.startsWith('@')) {
    // vsock: addresses (systemd 253+, for virtual machines) have no use for a host daemon
    log.warn(`NOTIFY_SOCKET=${socket}: only unix socket paths and @abstract names are supported; the service manager is not notified`);
    return undefined;
  }
  let warned = false;
  return {
    socket,
    send(state: string): boolean {
      const h = unixgramHelper();
      let err: Error | undefined;
      if (!h) err = new Error('the native helper build/native/unixgram.node is missing (npm run build with a C compiler)');
      else {
        const fd = h.open(socket, false);
        if (fd < 0) err = errnoError(fd, `connect ${socket}`);
        else {
          const rc = h.send(fd, Buffer.from(state));
          h.close(fd);
          if (rc < 0) err = errnoError(rc, `send to ${socket}`);
        }
      }
      if (!err) {
        log.debug('notified the service manager', { state: state.replaceAll('\n', ' ') });
        return true;
      }
      // Said once at warning level: a Type=notify unit whose READY=1 never arrives times out.
      if (!warned) log.warn(`could not notify the service manager (${state.split('\n')[0]}): ${err.message}`);
      else log.debug(`could not notify the service manager: ${err.message}`);
      warned = true;
      return false;
    },
  };
}
