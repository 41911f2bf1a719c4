// A bulk write of derived rows goes to the writer in parts, one transaction each, and the two rows
// of a link (one per direction) fall in the parts of their two accounts. A crash or a failed part
// between them leaves one direction stored, which the replay at the next start does not write
// again, and which an erasure of the account it names left behind. parts_open says a bulk write's
// parts were written without its last (0: none), as the earliest last_seen of that write's links
// (ms); a start then mends the links seen since (accounts/link-halves.ts). Set here to 1 (every
// row, once), for what a crash or an erasure may have left before this migration.
export const kDerivedPartsOpenMigration = `
ALTER TABLE derived_stamp ADD COLUMN parts_open INTEGER NOT NULL DEFAULT 0;
UPDATE derived_stamp SET parts_open = 1 WHERE id = 1;
`;
