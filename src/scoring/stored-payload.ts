// The payload column of the event log: the body as received, with the member names of the event
// schema written as one character each. The names were ~200 of a payment's ~540 bytes, about a
// third of the log row, and the log is most of the WAL (bench/README.md, step 50).
//
// Lossless for any text: a JSON body never holds a raw control character (JSON.parse refuses one
// in a string, and outside strings only tab, line feed and carriage return may appear), so the
// codes below stand only for the names they replace. A stored payload that begins with
// kMarker is coded with this table; anything else is the body as is (rows written before
// migration 21, scrubbed payloads of erased accounts). The table is frozen: a different one needs
// a marker of its own. Readers get the text back with payloadText(); operators' SQL reads it
// through the view event_payloads (migration 21), built from the same table. Pure.

/** The first character of a coded payload. */
export const kMarker = '\u0001';

/**
 * The codes, in order from U+0002, skipping tab, line feed and carriage return (whitespace in
 * JSON): `"name":` as the compact JSON that clients send writes it. A name followed by a space
 * before its colon stays as it is.
 */
export const kCodedNames: readonly string[] = [
  'event_id', 'event_type', 'external_account_id', 'brand_id', 'context', 'ip', 'user_agent',
  'fp_id', 'session_id', 'country', 'affiliate_id', 'user', 'email', 'phone', 'name',
  'registered_at', 'email_hash', 'phone_hash', 'payment', 'amount_cents', 'currency', 'method',
  'bin', 'last4', 'billing_country', 'card_token', 'extras',
];

/** U+0002–U+001F but tab, line feed and carriage return. */
const kCodePoints: readonly number[] = Array.from({ length: 0x1e }, (_, i) => i + 2).filter((point) => point !== 0x09 && point !== 0x0a && point !== 0x0d);

/** [code, the text it stands for], in the table's order. */
export const kCodes: ReadonlyArray<readonly [code: string, text: string]> = kCodedNames.map((name, i) => {
  const point = kCodePoints[i];
  if (point === undefined) throw new Error('stored-payload: more names than codes');
  return [String.fromCharCode(point), `"${name}":`] as const;
});

const kTextOfCode: string[] = [];
for (const [code, text] of kCodes) kTextOfCode[code.charCodeAt(0)] = text;

const kCodeOfName = new Map(kCodedNames.map((name, i) => [name, kCodes[i]![0]]));
/** Any of the table's names, quoted, and its colon. */
const kCodedName = new RegExp(`"(${kCodedNames.join('|')})":`, 'g');

/** Any character below U+0020 but tab, line feed and carriage return: a code, or text not coded. */
const kControl = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/;

// The pieces are joined by hand: a regex replace with a function per match cost twice as much on
// the writer thread (bench/README.md, step 50).

/** The payload as stored. Text that holds a control character already (not JSON) stays as is. */
export function storedPayload(body: string): string {
  if (kControl.test(body)) return body;
  let out = kMarker;
  let from = 0;
  kCodedName.lastIndex = 0;
  for (let match = kCodedName.exec(body); match !== null; match = kCodedName.exec(body)) {
    out += body.slice(from, match.index) + kCodeOfName.get(match[1]!)!;
    from = kCodedName.lastIndex;
  }
  return out + body.slice(from);
}

/** The body as received, from a stored payload (coded or not). */
export function payloadText(stored: string): string {
  if (stored.charCodeAt(0) !== 1) return stored;
  let out = '';
  let from = 1;
  for (let i = 1; i < stored.length; i++) {
    const text = stored.charCodeAt(i) < 0x20 ? kTextOfCode[stored.charCodeAt(i)] : undefined;
    if (text === undefined) continue;
    out += stored.slice(from, i) + text;
    from = i + 1;
  }
  return out + stored.slice(from);
}

/** Codes decoded per step of the view: SQLite before 3.46 cannot parse 27 nested replace()s. */
const kCodesPerStep = 9;

/**
 * CREATE VIEW event_payloads: payloadText(payload) of each row of `events`, as SQL. The codes are
 * replaced a few per step of a chain of CTEs, not all in one nested expression, which the parser of
 * an older `sqlite3` shell (Debian 12's 3.40, Ubuntu 24.04's 3.45) refuses with "parser stack
 * overflow" — for every statement, since it parses the whole schema first (migration 28).
 */
export function payloadViewSql(): string {
  const steps: string[] = [];
  // Plain rows (not coded) keep decoded NULL and read their payload as it is.
  let input = 'CASE WHEN substr(payload, 1, 1) = char(1) THEN substr(payload, 2) END';
  for (let first = 0; first < kCodes.length; first += kCodesPerStep) {
    let decoded = input;
    for (const [code, text] of kCodes.slice(first, first + kCodesPerStep)) decoded = `replace(${decoded}, char(${code.charCodeAt(0)}), '${text}')`;
    const from = steps.length === 0 ? 'events' : `step${steps.length}`;
    steps.push(`step${steps.length + 1} AS (SELECT seq, project_id, event_id, payload, ${decoded} AS decoded FROM ${from})`);
    input = 'decoded';
  }
  return `CREATE VIEW event_payloads (seq, project_id, event_id, payload) AS
  WITH ${steps.join(',\n  ')}
  SELECT seq, project_id, event_id, coalesce(decoded, payload) FROM step${steps.length};`;
}
