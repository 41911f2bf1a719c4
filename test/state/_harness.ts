// Drives the hot state and the reference model (_model.ts) with the same events and compares their
// answers. Deterministic: public ids come from a seeded generator, keys from a fixed secret.
import { EventSignals, HotState, SignalType, type Decision } from '../../src/state/hot-state.js';
import { KeyDomain, KeyHasher } from '../../src/state/keys.js';
import { Model, type ModelRows, type ModelSignal, type ModelType } from './_model.js';

export const kTypeCodes: Record<ModelType, SignalType> = { email: SignalType.Email, phone: SignalType.Phone, fp: SignalType.Fp, ip: SignalType.Ip, card: SignalType.Card };
const kDomains: Record<ModelType, KeyDomain> = { email: KeyDomain.Email, phone: KeyDomain.Phone, fp: KeyDomain.Fp, ip: KeyDomain.Ip, card: KeyDomain.Card };

const kBase62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** acc_ ids from xorshift32: random-looking (the route sorts by them), the same for a seed. */
export function idMaker(seed: number): () => string {
  let state = seed >>> 0 || 1;
  return () => {
    let id = 'acc_';
    for (let i = 0; i < 20; i++) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      id += kBase62[(state >>> 0) % 62];
    }
    return id;
  };
}

export const kHasher = new KeyHasher(Buffer.alloc(32, 9));

/** The hot state and the model side by side. */
export class Pair {
  readonly hot: HotState;
  readonly model: Model;
  readonly #signals = new EventSignals();

  /** A new hot state (ids from idMaker(seed)) and model, or the two given. */
  constructor(seed = 1, given?: { readonly hot: HotState; readonly model: Model }) {
    this.hot = given?.hot ?? new HotState({ hasher: kHasher, newPublicId: idMaker(seed) });
    this.model = given?.model ?? new Model();
  }

  /** The event's signals as the hot state takes them. */
  signalsOf(space: number, signals: readonly ModelSignal[]): EventSignals {
    const out = this.#signals;
    out.clear();
    for (const signal of signals) out.addValue(kHasher, space, kTypeCodes[signal.type], signal.value, signal.masked);
    return out;
  }

  /**
   * Records the event in both (a new account gets `givenId` if given); an error message when they
   * disagree about the account.
   */
  record(space: number, project: number, externalId: string, decision: Decision, now: number, signals: readonly ModelSignal[], givenId?: string): string | null {
    const knownBefore = this.model.accountOf(space, externalId);
    const outcome = this.hot.recordEvent(space, project, externalId, decision, now, this.signalsOf(space, signals), givenId);
    if (!outcome.ok) return `recordEvent failed: ${outcome.error.code} ${outcome.error.message}`;
    const publicId = this.hot.publicId(outcome.account);
    if (outcome.created && givenId !== undefined && publicId !== givenId) return `account ${externalId}: created as ${publicId}, not as the id given, ${givenId}`;
    const accountId = this.model.record(space, project, externalId, decision, now, signals, () => publicId);
    if (accountId !== publicId) return `account ${externalId}: hot ${publicId}, model ${accountId}`;
    if (outcome.created !== (knownBefore === null)) return `account ${externalId}: created ${outcome.created}, model knew it: ${knownBefore !== null}`;
    return null;
  }

  /** Compares everything about one account (or its absence) and the counts of rows. */
  compareAccount(space: number, projects: readonly number[], externalId: string, probe: readonly ModelSignal[], now: number): string | null {
    const accountId = this.model.accountOf(space, externalId);
    const account = this.hot.findAccount(space, externalId);
    if ((account >= 0) !== (accountId !== null)) return `${space}/${externalId}: hot account ${account}, model ${accountId}`;
    if (accountId !== null && this.hot.publicId(account) !== accountId) return `${space}/${externalId}: public id ${this.hot.publicId(account)} ≠ ${accountId}`;
    if (accountId !== null && this.hot.findByPublicId(accountId) !== account) return `${space}/${externalId}: findByPublicId(${accountId}) = ${this.hot.findByPublicId(accountId)}, not ${account}`;
    const differs = (what: string, hot: unknown, model: unknown): string | null =>
      JSON.stringify(hot) === JSON.stringify(model) ? null : `${space}/${externalId} ${what}:\n  hot   ${JSON.stringify(hot)}\n  model ${JSON.stringify(model)}`;
    const signals = this.signalsOf(space, probe);
    const failure = differs('account signal', this.hot.accountSignals(account, now), this.model.accountSignals(accountId, now))
      ?? differs('links signal', this.hot.linkSignals(space, account, signals, now), this.model.linkSignals(space, accountId, probe, now))
      ?? differs('links signal (anonymous)', this.hot.linkSignals(space, -1, signals, now), this.model.linkSignals(space, null, probe, now));
    if (failure !== null || accountId === null) return failure;
    // projectsOf lists the latest first; the model's set holds them in the order they came.
    const projectsFailure = differs('projects', this.hot.projectsOf(account), [...this.model.accounts.get(accountId)!.projects].reverse());
    if (projectsFailure !== null) return projectsFailure;
    for (const project of projects) {
      const used = this.model.accounts.get(accountId)!.projects.has(project);
      for (const id of [externalId, accountId]) {
        const resolved = this.hot.resolve(space, project, id);
        if (resolved !== (used ? account : -1)) return `${space}/${externalId} resolve(${project}, ${id}) = ${resolved}, used: ${used}`;
      }
      const routeFailure = differs(`route for project ${project}`, JSON.parse(this.hot.linksJson(account, project) ?? 'null'), this.model.route(accountId, project));
      if (routeFailure !== null) return routeFailure;
    }
    return null;
  }

  compareCounts(): string | null {
    const stats = this.hot.stats;
    const counts = this.model.counts;
    const hot = { accounts: stats.accounts, holders: stats.holders, linkRows: stats.links * 2, values: stats.values };
    const model = { accounts: this.model.accounts.size, ...counts };
    return JSON.stringify(hot) === JSON.stringify(model) ? null : `counts: hot ${JSON.stringify(hot)}, model ${JSON.stringify(model)}`;
  }

  /** Erases in both; an error message when the summaries differ. */
  erase(space: number, externalId: string): string | null {
    const accountId = this.model.accountOf(space, externalId);
    const account = this.hot.findAccount(space, externalId);
    if (accountId === null) return account < 0 && this.hot.erase(account) === null ? null : `erase ${externalId}: hot has ${account}, model none`;
    const erased = this.hot.erase(account)!;
    const expected = this.model.erase(accountId);
    const values: string[] = [];
    for (let i = 0; i < erased.signalTypes.length; i++) values.push(`${erased.signalTypes[i]}:${erased.signalKeys.subarray(i * 4, i * 4 + 4).join(',')}`);
    const key = new Uint32Array(4);
    const expectedValues = expected.values.map((name) => {
      const type = name.slice(0, name.indexOf(':')) as ModelType;
      kHasher.key128(kDomains[type], space, name.slice(name.indexOf(':') + 1), key, 0);
      return `${kTypeCodes[type]}:${key.join(',')}`;
    });
    const hot = { publicId: erased.publicId, signals: erased.signals, links: erased.links, values: values.sort(), dropped: erased.droppedSignals };
    const model = { publicId: accountId, signals: expected.signals, links: expected.links, values: expectedValues.sort(), dropped: expected.dropped };
    return JSON.stringify(hot) === JSON.stringify(model) ? null : `erase ${externalId}: hot ${JSON.stringify(hot)}, model ${JSON.stringify(model)}`;
  }
}

/**
 * Loads rows of the tables into an empty hot state as a start does: accounts, then their projects,
 * then holders in ascending last seen (ties in key order, not in the order they were written, as a
 * SELECT … ORDER BY last_seen gives them) — or, with `shuffleSeed`, in a shuffled order — then
 * each link once, from its lower account id's row. An error message when a load call fails.
 */
export function loadRows(rows: ModelRows, hot: HotState, shuffleSeed: number | null = null): string | null {
  const accounts = new Map<string, number>();
  for (const row of rows.accounts) {
    const account = hot.loadAccount(row.space, row.externalId, row.accountId, row.createdAt, row.lastSeenAt, row.events, row.blocks, row.reviews, row.fraud);
    if (typeof account !== 'number') return `loadAccount ${row.accountId}: ${account.code} ${account.message}`;
    accounts.set(row.accountId, account);
  }
  for (const row of rows.accounts) for (const project of row.projects) hot.addProject(accounts.get(row.accountId)!, project);
  const binary = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  const holders = [...rows.signals].sort((a, b) => a.lastSeen - b.lastSeen || binary(a.type, b.type) || binary(a.value, b.value) || binary(a.accountId, b.accountId));
  const key = new Uint32Array(4);
  for (const row of shuffleSeed === null ? holders : shuffled(holders, shuffleSeed >>> 0 || 1)) {
    kHasher.key128(kDomains[row.type], row.space, row.value, key, 0);
    const error = hot.loadHolder(row.space, accounts.get(row.accountId)!, kTypeCodes[row.type], key, 0, row.masked, row.firstSeen, row.lastSeen);
    if (error !== null) return `loadHolder ${row.type}:${row.value} of ${row.accountId}: ${error.code} ${error.message}`;
  }
  for (const row of rows.links) {
    if (row.accountId > row.other) continue;
    const type = kTypeCodes[(row.linkType === 'ip_24h' ? 'ip' : row.linkType) as ModelType];
    const error = hot.loadLink(accounts.get(row.accountId)!, accounts.get(row.other)!, type, row.masked, row.firstSeen, row.lastSeen);
    if (error !== null) return `loadLink ${row.linkType} ${row.accountId}–${row.other}: ${error.code} ${error.message}`;
  }
  return null;
}

/** A copy of `array` shuffled by a seeded xorshift32 (seed ≠ 0). */
export function shuffled<T>(array: readonly T[], seed: number): T[] {
  const out = [...array];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    const j = (state >>> 0) % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
