// What each event's rules read from the service's state (velocity, links, account), kept with the
// event so that a backtest can judge it exactly as it was judged (scoring/recorded-signals.ts).
// Null for events scored before this migration and for pending ones.
export const kRecordedSignalsMigration = `
ALTER TABLE events ADD COLUMN signals TEXT;
`;
