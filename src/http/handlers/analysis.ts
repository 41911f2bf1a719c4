// Backtests and rule statistics (docs/backtests.md): request checks here, the work in
// src/analysis.
import { parseBacktestId, parseBacktestRequest, parseStatsQuery } from '../../analysis/analysis-request.js';
import type { AnalysisAnswer, BacktestService } from '../../analysis/backtest-service.js';
import type { RuleStatsService } from '../../analysis/stats-service.js';
import { parseNoQuery } from '../../rulesets/rules-request.js';
import { data, failure, type Handler, type Reply } from '../types.js';

export interface AnalysisHandlers {
  readonly startBacktest: Handler;
  readonly readBacktest: Handler;
  readonly ruleStats: Handler;
}

function reply(answer: AnalysisAnswer): Reply {
  return answer.ok ? data(answer.body, answer.status, answer.headers) : failure(answer.error, answer.headers);
}

export function createAnalysisHandlers(backtests: BacktestService, stats: RuleStatsService, now: () => number): AnalysisHandlers {
  return {
    startBacktest: async (context) => {
      const refusal = parseNoQuery(context.query);
      if (refusal !== null) return failure(refusal);
      const request = parseBacktestRequest(context.body!);
      if (!request.ok) return failure(request.error);
      return reply(await backtests.start(context.key!.projectId, context.key!.keyId, request.value));
    },
    readBacktest: (context) => {
      const refusal = parseNoQuery(context.query);
      if (refusal !== null) return failure(refusal);
      const id = parseBacktestId(context.params.backtest_id!);
      return id.ok ? reply(backtests.get(context.key!.projectId, id.value)) : failure(id.error);
    },
    ruleStats: async (context) => {
      const query = parseStatsQuery(context.query, now());
      if (!query.ok) return failure(query.error);
      return reply(await stats.stats(context.key!.projectId, context.params.rule_id!, query.value));
    },
  };
}
