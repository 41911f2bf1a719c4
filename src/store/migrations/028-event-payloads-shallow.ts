// The view event_payloads again, its codes replaced a few per step of a chain of CTEs
// (scoring/stored-payload.ts, payloadViewSql): as migration 21 made it, one expression of 27 nested
// replace()s, the parser of an older sqlite3 shell (Debian 12's 3.40, Ubuntu 24.04's 3.45) failed
// with "parser stack overflow" on it — and so on every statement, as it parses the whole schema.
import { payloadViewSql } from '../../scoring/stored-payload.js';

export const kEventPayloadsShallowMigration = `
DROP VIEW IF EXISTS event_payloads;
${payloadViewSql()}
`;
