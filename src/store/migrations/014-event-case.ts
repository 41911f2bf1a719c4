// The case an event is in is kept on the event's row (events.case_id) instead of an index of
// case_events by event id: an event's transaction already writes the last page of the event log,
// while the index took a page at a random key for every review decision (bench/README.md, step
// 12). An event is scored once, so it is in at most one case; case_events still lists a case's
// events.
export const kEventCaseMigration = `
ALTER TABLE events ADD COLUMN case_id TEXT;
UPDATE events SET case_id = (
  SELECT ce.case_id FROM case_events ce JOIN cases c ON c.case_id = ce.case_id
  WHERE ce.event_id = events.event_id AND c.project_id = events.project_id
  ORDER BY ce.added_at LIMIT 1
) WHERE event_id IN (SELECT event_id FROM case_events);
DROP INDEX case_events_by_event;
`;
