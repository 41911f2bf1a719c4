// Memory that a write command changes along with its transaction (the writer's cases and case
// events not yet written into the cases' rows, scoring/event-store.ts) must not keep a change whose
// transaction rolled back: the command registers how to undo it, and the writer thread
// (writer-thread.ts) says how each transaction ended. One writer per thread, so one list.
const undos: Array<() => void> = [];

/** Runs `undo` if the transaction now open rolls back. */
export function undoOnRollback(undo: () => void): void {
  undos.push(undo);
}

/** The transaction committed (`committed`) or rolled back: its undos are run (newest first) or dropped. */
export function transactionEnded(committed: boolean): void {
  if (!committed) for (let i = undos.length - 1; i >= 0; i--) undos[i]!();
  undos.length = 0;
}
