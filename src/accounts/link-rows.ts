// The rows of account_links read at start on the start's own thread (scoring/start-loads-worker.ts)
// and handed to the HTTP thread as typed arrays, so that the HTTP thread, which builds the state,
// neither reads the table nor looks up 10M account ids (bench/README.md, step 35). An account is
// named by its position in `SELECT account_id FROM accounts ORDER BY account_id`, the order in which
// HotAccounts.load numbers them; both sides hash that order, and the HTTP thread takes the rows only
// if the two hashes agree (else it reads the table itself, as before).
//
// The thread posts, on a MessagePort of its own: the order (count and hash), then chunks of rows,
// then the end (or what failed). The HTTP thread, busy loading in one synchronous transaction,
// takes them with receiveMessageOnPort, waiting on a shared counter the thread bumps after each.
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { SignalType } from '../state/signal-index.js';
import type { Db } from '../store/database.js';

/** account_links.signal_type as a SignalType: an IP links as ip_24h. */
export const kLinkTypes: Readonly<Record<string, SignalType>> = {
  email: SignalType.Email, phone: SignalType.Phone, fp: SignalType.Fp, ip_24h: SignalType.Ip, card: SignalType.Card,
};

/** Rows per chunk: a few MB of arrays. */
const kChunkRows = 65_536;
/** The HTTP thread gives up (the start fails) when nothing comes for this long. */
const kQuietLimitMs = 120_000;

/** The SQL expression of a signal type name as its SignalType number (NULL: unknown). */
export function signalTypeNumber(column: string, types: Readonly<Record<string, SignalType>>): string {
  return `CASE ${column} ${Object.entries(types).map(([name, type]) => `WHEN '${name}' THEN ${type}`).join(' ')} END`;
}

/** The accounts' ids in the order both sides number them. */
export const kAccountOrderQuery = 'SELECT account_id FROM accounts ORDER BY account_id';

/** FNV-1a over the ids in order, each ended by a 0: the two sides' orders are the same when it is. */
export class AccountOrder {
  #hash = 0x811c9dc5;
  count = 0;

  add(accountId: string): void {
    let hash = this.#hash;
    for (let i = 0; i < accountId.length; i++) hash = Math.imul(hash ^ accountId.charCodeAt(i), 0x01000193);
    this.#hash = Math.imul(hash, 0x01000193) >>> 0;
    this.count++;
  }

  get hash(): number {
    return this.#hash;
  }
}

/** A chunk of link rows: ends as account positions, the type as a SignalType number (255: unknown). */
export interface LinkChunk {
  readonly length: number;
  readonly a: Int32Array;
  readonly b: Int32Array;
  readonly type: Uint8Array;
  readonly firstSeen: Float64Array;
  readonly lastSeen: Float64Array;
  /** Index into `masks` (a chunk's masks once each: a value's links share its mask). */
  readonly mask: Uint32Array;
  readonly masks: readonly string[];
}

export type LinkMessage =
  | { readonly kind: 'order'; readonly count: number; readonly hash: number }
  | { readonly kind: 'chunk'; readonly chunk: LinkChunk }
  | { readonly kind: 'end'; readonly rows: number }
  | { readonly kind: 'failed'; readonly message: string };

/** The rows of account_links that load a link: the one whose account_id is the smaller (both directions hold the same link). */
export const kLinkRowsQuery = `SELECT account_id, ${signalTypeNumber('signal_type', kLinkTypes)}, other_account_id, masked, first_seen, last_seen
  FROM account_links WHERE account_id < other_account_id`;

/** The start's thread: reads the accounts' order and every link once, and posts them (`chunkRows` to a chunk). */
export function postLinkRows(db: Db, port: MessagePort, posted: Int32Array, chunkRows = kChunkRows): void {
  const post = (message: LinkMessage, transfer: ArrayBuffer[] = []): void => {
    port.postMessage(message, transfer);
    Atomics.add(posted, 0, 1);
    Atomics.notify(posted, 0);
  };
  try {
    const positions = new Map<string, number>();
    const order = new AccountOrder();
    for (const accountId of db.prepare(kAccountOrderQuery).pluck().iterate() as IterableIterator<string>) {
      positions.set(accountId, order.count);
      order.add(accountId);
    }
    post({ kind: 'order', count: order.count, hash: order.hash });
    const rows = db.prepare(kLinkRowsQuery).raw().iterate() as IterableIterator<[string, SignalType | null, string, string, number, number]>;
    let chunk = newChunk(chunkRows);
    let maskIndex = new Map<string, number>();
    let total = 0;
    const flush = (): void => {
      const { a, b, type, firstSeen, lastSeen, mask } = chunk;
      post({ kind: 'chunk', chunk }, [a.buffer, b.buffer, type.buffer, firstSeen.buffer, lastSeen.buffer, mask.buffer] as ArrayBuffer[]);
      chunk = newChunk(chunkRows);
      maskIndex = new Map();
    };
    let publicIdOfRow = '';
    let a = -1;
    for (const [accountId, type, otherId, masked, firstSeen, lastSeen] of rows) {
      if (accountId !== publicIdOfRow) {
        publicIdOfRow = accountId;
        a = positions.get(accountId) ?? -1;
      }
      const b = positions.get(otherId) ?? -1;
      if (a < 0 || b < 0) continue;
      const i = chunk.length;
      chunk.a[i] = a;
      chunk.b[i] = b;
      chunk.type[i] = type ?? 255;
      chunk.firstSeen[i] = firstSeen;
      chunk.lastSeen[i] = lastSeen;
      let index = maskIndex.get(masked);
      if (index === undefined) {
        index = chunk.masks.length;
        chunk.masks.push(masked);
        maskIndex.set(masked, index);
      }
      chunk.mask[i] = index;
      chunk.length++;
      total++;
      if (chunk.length === chunkRows) flush();
    }
    if (chunk.length > 0) flush();
    post({ kind: 'end', rows: total });
  } catch (error) {
    post({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
  }
}

interface MutableChunk {
  length: number;
  a: Int32Array;
  b: Int32Array;
  type: Uint8Array;
  firstSeen: Float64Array;
  lastSeen: Float64Array;
  mask: Uint32Array;
  masks: string[];
}

function newChunk(rows: number): MutableChunk {
  return {
    length: 0,
    a: new Int32Array(rows),
    b: new Int32Array(rows),
    type: new Uint8Array(rows),
    firstSeen: new Float64Array(rows),
    lastSeen: new Float64Array(rows),
    mask: new Uint32Array(rows),
    masks: [],
  };
}

/** The HTTP thread's end: the link rows as they come, taken without returning to the event loop. */
export class LinkRowsReceiver {
  readonly #port: MessagePort;
  readonly #posted: Int32Array;

  constructor(port: MessagePort, posted: Int32Array) {
    this.#port = port;
    this.#posted = posted;
  }

  /** The next message, waiting for it; throws when none comes for kQuietLimitMs (the thread is gone). */
  next(): LinkMessage {
    let quietSince = performance.now();
    for (;;) {
      const seen = Atomics.load(this.#posted, 0);
      const received = receiveMessageOnPort(this.#port);
      if (received !== undefined) return received.message as LinkMessage;
      if (Atomics.wait(this.#posted, 0, seen, 1000) === 'timed-out' && performance.now() - quietSince > kQuietLimitMs) {
        throw new Error(`no link rows from the start's thread for ${kQuietLimitMs / 1000} s`);
      }
      if (Atomics.load(this.#posted, 0) !== seen) quietSince = performance.now();
    }
  }

  close(): void {
    this.#port.close();
  }
}
