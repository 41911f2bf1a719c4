// The main-thread side of the rules compiler thread (compile-worker.ts). One thread is enough:
// rule writes and publishes are analyst actions, rare next to events. It starts on first use and
// stops when idle, so a server whose rules nobody edits keeps no thread for it.
import { Piscina } from 'piscina';
import type { CompileResult, RuleDefinition } from '../../compiler/index.js';
import type { ValidateOutcome } from './compile-worker.js';

const kIdleTimeoutMs = 60_000;

export class RulesCompiler {
  readonly #pool = new Piscina({
    filename: new URL('./compile-worker.js', import.meta.url).href,
    minThreads: 0,
    maxThreads: 1,
    idleTimeout: kIdleTimeoutMs,
  });

  /** validateRuleDefinition on the compiler thread. Rejects only if the thread fails. */
  validate(input: unknown): Promise<ValidateOutcome> {
    return this.#pool.run(input, { name: 'validate' }) as Promise<ValidateOutcome>;
  }

  /** compileRuleset on the compiler thread. Rejects only if the thread fails (or the compiler throws on a bug). */
  compile(rules: readonly RuleDefinition[]): Promise<CompileResult> {
    return this.#pool.run(rules, { name: 'compile' }) as Promise<CompileResult>;
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}
