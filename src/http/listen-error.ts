// Why the front end could not listen. uWebSockets.js only says that it could not; the operating
// system's reason is found by trying the same address once with node:net, so that the one line an
// operator sees (and systemd logs) names the cause.
import { createServer } from 'node:net';

const kReasons: Readonly<Record<string, string>> = {
  EADDRINUSE: 'another process is listening there',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'the address is not one of this machine\'s',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve',
};

/**
 * Why host:port cannot be listened on, in words, or null when it can (bound and let go at once).
 * The start asks before it loads the store, which can take half a minute on a large database, so a
 * busy port is reported at once; the listen itself can still fail if another process takes the
 * address meanwhile.
 */
export function addressUnavailable(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(kReasons[error.code ?? ''] ?? error.message));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}

/** The cause, in words, of a failed listen on host:port. */
export async function listenFailureReason(host: string, port: number): Promise<string> {
  // It bound after all: whatever held the address let it go meanwhile.
  return (await addressUnavailable(host, port)) ?? 'the address was busy and is free now; start again';
}
