// GET /v1/audit (docs/audit.md): the audit trail of the key's project, newest first. Read-only:
// no route changes or deletes a record.
import { auditCursorScope, parseAuditQuery } from '../../audit/audit-request.js';
import { listAudit } from '../../audit/audit-store.js';
import { encodeCursor } from '../../shared/query.js';
import type { Db } from '../../store/database.js';
import { data, failure, type Handler } from '../types.js';

export function createAuditHandler(readDb: Db): Handler {
  return (context) => {
    const projectId = context.key!.projectId;
    const filter = parseAuditQuery(context.query, projectId);
    if (!filter.ok) return failure(filter.error);
    const page = listAudit(readDb, filter.value);
    return data({ records: page.records, next_cursor: page.next === null ? null : encodeCursor(auditCursorScope(projectId), [page.next]) });
  };
}
