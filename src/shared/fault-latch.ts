// Test-only latches (FAULT_INJECTION=hold_points): a named point in the pipeline where the server
// stops until the test lets it go, so races (an erasure while an event is in flight or queued) are
// driven step by step instead of by sleeping. Off in production: every hold() is then a no-op.
//
// The handshake is two files in the data dir, which the test can see without a socket:
//   the server creates  fault-held-<name>     when it reaches the point,
//   the test creates    fault-release-<name>  to let it go on (the server then removes both).
// A mark is a point the server passes without stopping: it creates fault-reached-<name>.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const kName = /^[a-z0-9_-]{1,64}$/;
const kPollMs = 5;

interface HandshakeFiles {
  readonly held: string;
  readonly release: string;
}

/** Released: both files go, so the point can be held again. */
function leave(files: HandshakeFiles): void {
  rmSync(files.held, { force: true });
  rmSync(files.release, { force: true });
}

export class FaultLatch {
  readonly #dir: string | null;

  /** `dir` null: latches off. */
  constructor(dir: string | null) {
    this.#dir = dir;
  }

  get enabled(): boolean {
    return this.#dir !== null;
  }

  /** Says that the server passed `name` (for a test to wait for), without stopping. */
  mark(name: string): void {
    if (this.#dir === null || !kName.test(name)) return;
    writeFileSync(join(this.#dir, `fault-reached-${name}`), '');
  }

  /**
   * hold() for a thread whose work is one synchronous call (a rule worker evaluating a batch): the
   * thread sleeps in steps until the release.
   */
  holdSync(name: string): void {
    const files = this.#arrive(name);
    if (files === null) return;
    const sleeper = new Int32Array(new SharedArrayBuffer(4));
    while (!existsSync(files.release)) Atomics.wait(sleeper, 0, 0, kPollMs);
    leave(files);
  }

  async hold(name: string): Promise<void> {
    const files = this.#arrive(name);
    if (files === null) return;
    // Unref'd: a server stopped while held still exits (its stop does not wait for the release).
    while (!existsSync(files.release)) await new Promise((resolve) => setTimeout(resolve, kPollMs).unref());
    leave(files);
  }

  /** Says that the server is held at `name`; its handshake files, or null when latches are off. */
  #arrive(name: string): HandshakeFiles | null {
    if (this.#dir === null || !kName.test(name)) return null;
    const files = { held: join(this.#dir, `fault-held-${name}`), release: join(this.#dir, `fault-release-${name}`) };
    writeFileSync(files.held, '');
    return files;
  }
}
