// Event payloads written with the event schema's member names as one character each
// (scoring/stored-payload.ts): the log row of a payment loses ~200 of its ~650 bytes. Rows stored
// before stay as they are (readers tell the two apart by the first character). The view gives
// operators' SQL the body as received: SELECT payload FROM event_payloads WHERE seq = ?.
import { payloadTextSql } from '../../scoring/stored-payload.js';

export const kEventPayloadsMigration = `
CREATE VIEW event_payloads (seq, project_id, event_id, payload) AS
  SELECT seq, project_id, event_id, ${payloadTextSql('payload')} FROM events;
`;
