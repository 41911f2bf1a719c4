// The operator's erasures (fraud-scorer accounts erase): the command line asks the running server
// through this table, as it tells it of keys through the keys table, and reads the answer back.
// An erasure is the server's to do (it is a barrier on the events in flight and on the state in
// memory), and an account that several live projects used is erased only this way: the API
// answers it 403 (interface, DELETE /v1/accounts/{id}).
//   account_ref: the id as the operator gave it, personal data: NULL from the moment the server
//                takes the request, before the erasure empties the WAL.
//   alive_at:    the waiting command writes it every second: a server takes only a request whose
//                command still waits (one killed, its terminal closed, is never done).
//   answer:      JSON, { "ok": true, "body": <the DELETE's summary> } or
//                { "ok": false, "code": …, "message": … }.
export const kOperatorErasuresMigration = `
CREATE TABLE operator_erasures (
  request_id   INTEGER PRIMARY KEY,
  project_id   TEXT NOT NULL,
  account_ref  TEXT,
  requested_at INTEGER NOT NULL,
  alive_at     INTEGER NOT NULL,
  taken_at     INTEGER,
  answered_at  INTEGER,
  answer       TEXT
);
CREATE INDEX operator_erasures_open ON operator_erasures(request_id) WHERE answered_at IS NULL;
`;
