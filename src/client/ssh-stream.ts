// The ssh transport's stream class as the SDK exports it. transport.ts makes the class on first use
// (so the CLI, which never imports this file, loads node:stream only for ssh); an application
// importing the SDK's index gets it made here.
import { sshStreamClass } from './transport.ts';

/** One ssh process (`ssh … engine system dial-stdio`) as a duplex stream. */
export const SshStream = sshStreamClass();
export type SshStream = InstanceType<typeof SshStream>;
