// The cases routes: GET /v1/cases, GET /v1/cases/{case_id}, PATCH /v1/cases/{case_id}.
import type { CasesService } from '../../cases/cases-service.js';
import { parseCaseChange, parseCaseListQuery, parseOneCaseQuery } from '../../cases/cases-query.js';
import { data, failure, type Handler } from '../types.js';

export function createListCasesHandler(cases: CasesService): Handler {
  return (context) => {
    const key = context.key!;
    const query = parseCaseListQuery(context.query, key.projectId);
    if (!query.ok) return failure(query.error);
    const answer = cases.list(key.tenantId, key.environment, query.value);
    return answer.ok ? data(answer.body) : failure(answer.error);
  };
}

export function createReadCaseHandler(cases: CasesService): Handler {
  return (context) => {
    const key = context.key!;
    const refusal = parseOneCaseQuery(context.query, key.projectId);
    if (refusal !== null) return failure(refusal);
    const answer = cases.get(key.projectId, context.params.case_id!);
    return answer.ok ? data(answer.body) : failure(answer.error);
  };
}

export function createChangeCaseHandler(cases: CasesService): Handler {
  return async (context) => {
    const key = context.key!;
    const refusal = parseOneCaseQuery(context.query, key.projectId);
    if (refusal !== null) return failure(refusal);
    const change = parseCaseChange(context.body!);
    if (!change.ok) return failure(change.error);
    const answer = await cases.change(key.projectId, context.params.case_id!, change.value, key.keyId);
    return answer.ok ? data(answer.body) : failure(answer.error);
  };
}
