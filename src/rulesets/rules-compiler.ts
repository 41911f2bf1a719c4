// The main-thread side of the rules compiler thread (compile-worker.ts). One thread is enough:
// rule writes and publishes are analyst actions, rare next to events. It starts on first use and
// stops when idle, so a server whose rules nobody edits keeps no thread for it.
import { Piscina } from 'piscina';
import type { CompileResult, RuleDefinition } from '../../compiler/index.js';
import type { ListKind } from '../lists/list-kinds.js';
import type { NormalizeOutcome, RuleListsOutcome, ValidateOutcome } from './compile-worker.js';

const kIdleTimeoutMs = 60_000;

export class RulesCompiler {
  readonly #pool = new Piscina({
    filename: new URL('./compile-worker.js', import.meta.url).href,
    minThreads: 0,
    maxThreads: 1,
    idleTimeout: kIdleTimeoutMs,
  });

  /**
   * validateRuleDefinition on the compiler thread, in_list() ids checked against `lists` (the
   * project's). Rejects only if the thread fails.
   */
  validate(input: unknown, lists: readonly string[]): Promise<ValidateOutcome> {
    return this.#pool.run({ input, lists }, { name: 'validate' }) as Promise<ValidateOutcome>;
  }

  /** compileRuleset on the compiler thread. Rejects only if the thread fails (or the compiler throws on a bug). */
  compile(rules: readonly RuleDefinition[], lists: readonly string[]): Promise<CompileResult> {
    return this.#pool.run({ rules, lists }, { name: 'compile' }) as Promise<CompileResult>;
  }

  /** The lists each rule reads, archived rules included (compile-worker.ts ruleLists). */
  ruleLists(rules: readonly RuleDefinition[], lists: readonly string[]): Promise<RuleListsOutcome> {
    return this.#pool.run({ rules, lists }, { name: 'ruleLists' }) as Promise<RuleListsOutcome>;
  }

  /** List values normalised by `kind` on the compiler thread (lists-service.ts). */
  normalizeListValues(kind: ListKind, values: readonly unknown[]): Promise<NormalizeOutcome> {
    return this.#pool.run({ kind, values }, { name: 'normalizeListValues' }) as Promise<NormalizeOutcome>;
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}
