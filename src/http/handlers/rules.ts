// The rules API routes (DESIGN §3, docs/rules-api.md): rules, policy, publish and rulesets of the
// key's project.
import {
  parseCreateRule, parseNoQuery, parsePolicy, parsePublishBody, parseReplaceRule, parseRuleQuery, parseRulesetListQuery,
  parseRulesetVersion,
} from '../../rulesets/rules-request.js';
import type { RulesAnswer, RulesService } from '../../rulesets/rules-service.js';
import { data, failure, type Handler, type Reply } from '../types.js';

export interface RulesHandlers {
  readonly listRules: Handler;
  readonly readRule: Handler;
  readonly createRule: Handler;
  readonly replaceRule: Handler;
  readonly readPolicy: Handler;
  readonly replacePolicy: Handler;
  readonly publishRules: Handler;
  readonly listRulesets: Handler;
  readonly readRuleset: Handler;
  readonly restoreRuleset: Handler;
}

function reply(answer: RulesAnswer): Reply {
  return answer.ok ? data(answer.body, answer.status) : failure(answer.error);
}

export function createRulesHandlers(rules: RulesService): RulesHandlers {
  return {
    listRules: (context) => {
      const refusal = parseNoQuery(context.query);
      return refusal !== null ? failure(refusal) : reply(rules.list(context.key!.projectId));
    },
    readRule: (context) => {
      const query = parseRuleQuery(context.query);
      return query.ok ? reply(rules.get(context.key!.projectId, context.params.rule_id!, query.value.history)) : failure(query.error);
    },
    createRule: async (context) => {
      const refusal = parseNoQuery(context.query);
      if (refusal !== null) return failure(refusal);
      const input = parseCreateRule(context.body!);
      if (!input.ok) return failure(input.error);
      return reply(await rules.create(context.key!.projectId, context.key!.keyId, input.value));
    },
    replaceRule: async (context) => {
      const refusal = parseNoQuery(context.query);
      if (refusal !== null) return failure(refusal);
      const change = parseReplaceRule(context.body!, context.params.rule_id!);
      if (!change.ok) return failure(change.error);
      return reply(await rules.replace(context.key!.projectId, context.key!.keyId, change.value));
    },
    readPolicy: (context) => {
      const refusal = parseNoQuery(context.query);
      return refusal !== null ? failure(refusal) : reply(rules.getPolicy(context.key!.projectId));
    },
    replacePolicy: async (context) => {
      const refusal = parseNoQuery(context.query);
      if (refusal !== null) return failure(refusal);
      const change = parsePolicy(context.body!);
      if (!change.ok) return failure(change.error);
      return reply(await rules.replacePolicy(context.key!.projectId, context.key!.keyId, change.value));
    },
    publishRules: async (context) => {
      const refusal = parseNoQuery(context.query) ?? parsePublishBody(context.body);
      if (refusal !== null) return failure(refusal);
      return reply(await rules.publish(context.key!.projectId, context.key!.keyId));
    },
    listRulesets: (context) => {
      const query = parseRulesetListQuery(context.query);
      return query.ok ? reply(rules.listRulesets(context.key!.projectId, query.value)) : failure(query.error);
    },
    readRuleset: (context) => {
      const refusal = parseNoQuery(context.query);
      if (refusal !== null) return failure(refusal);
      const version = parseRulesetVersion(context.params.version!);
      return version.ok ? reply(rules.getRuleset(context.key!.projectId, version.value)) : failure(version.error);
    },
    restoreRuleset: async (context) => {
      const version = parseRulesetVersion(context.params.version!);
      if (!version.ok) return failure(version.error);
      const refusal = parseNoQuery(context.query) ?? parsePublishBody(context.body, 'restore');
      if (refusal !== null) return failure(refusal);
      return reply(await rules.restore(context.key!.projectId, context.key!.keyId, version.value));
    },
  };
}
