// Event payloads written with the event schema's member names as one character each
// (scoring/stored-payload.ts): the log row of a payment loses ~200 of its ~650 bytes. Rows stored
// before stay as they are (readers tell the two apart by the first character). The view gives
// operators' SQL the body as received: SELECT payload FROM event_payloads WHERE seq = ?.
import { payloadViewSql } from '../../scoring/stored-payload.js';

// The view as migration 28 made it (its SQL once was one nested expression, which an older sqlite3
// shell cannot parse).
export const kEventPayloadsMigration = payloadViewSql();
