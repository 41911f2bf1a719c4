// The in-memory form of a list in a rule worker: the hash set against a model (random adds,
// deletes and growth), expiry, and lookups by kind (ranges, parent domains, BIN prefixes, national
// phone numbers), with values normalised as items are.
import test from 'ava';
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { HashSet64 } from '../../src/lists/hash-set64.js';
import { normalizeListItem, type ListKind } from '../../src/lists/list-kinds.js';
import { KeyHasher, ListTable } from '../../src/lists/list-table.js';
import { sipKey } from '../../src/state/siphash.js';

test('the hash set agrees with a Set of the same keys through adds, deletes and growth', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 300 })), { maxLength: 2000 }),
      (ops) => {
        const set = new HashSet64();
        const model = new Set<number>();
        // Few distinct low bits, so that runs collide and backward shifts are exercised.
        const lo = (k: number): number => (k % 7) * 1024 + 1;
        const hi = (k: number): number => k * 2654435761;
        for (const [add, k] of ops) {
          if (add) t.is(set.set(lo(k), hi(k), null), !model.has(k));
          else t.is(set.delete(lo(k), hi(k)), model.has(k));
          if (add) model.add(k);
          else model.delete(k);
        }
        t.is(set.size, model.size);
        for (let k = 0; k <= 300; k++) if (set.has(lo(k), hi(k), 0) !== model.has(k)) return false;
        return true;
      },
    ),
    { seed: 20261123, numRuns: 200 },
  );
});

test('expiry: a member matches before its time, not from it; setting it again changes it', (t) => {
  const set = new HashSet64();
  set.set(3, 4, 1000);
  set.set(5, 6, null);
  t.true(set.has(3, 4, 999));
  t.false(set.has(3, 4, 1000));
  t.true(set.has(5, 6, 1e15));
  set.set(3, 4, null);
  t.true(set.has(3, 4, 1e15));
  set.set(3, 4, 10);
  t.false(set.has(3, 4, 10));
  t.true(set.delete(3, 4));
  t.is(set.size, 1);
});

function table(kind: ListKind, items: Array<string | [string, number]>): ListTable {
  const listTable = new ListTable(kind, new KeyHasher(sipKey(randomBytes(16))));
  for (const item of items) {
    const [raw, expiresAt] = typeof item === 'string' ? [item, null] : item;
    const normalized = normalizeListItem(kind, raw);
    if (!normalized.ok) throw new Error(`${raw}: ${normalized.message}`);
    listTable.add(normalized.value, expiresAt);
  }
  return listTable;
}

test('ip: addresses and ranges of both families; an address matches every range holding it', (t) => {
  const ips = table('ip', ['203.0.113.7', '198.51.100.0/24', '10.0.0.0/8', '2001:db8::/32', '2001:db8:1::1']);
  for (const inside of ['203.0.113.7', '198.51.100.255', '10.200.3.4', '::ffff:10.1.1.1', '2001:db8:ffff::9', '2001:DB8:1:0::1']) t.true(ips.has(inside, 0, null), inside);
  for (const outside of ['203.0.113.8', '198.51.101.0', '11.0.0.1', '2001:db9::1', 'not an ip', '', '10.0.0.0/8']) t.false(ips.has(outside, 0, null), outside);
  ips.remove('10.0.0.0/8');
  t.false(ips.has('10.200.3.4', 0, null));
  t.true(ips.has('198.51.100.1', 0, null));
});

test('email_domain: by the domain of an email or a domain, parents included; email: trimmed, lower-cased', (t) => {
  const domains = table('email_domain', ['mailinator.com', 'spam.example.net']);
  for (const inside of ['x@mailinator.com', 'X@Sub.Mailinator.COM', 'mailinator.com', 'a@deep.spam.example.net']) t.true(domains.has(inside, 0, null), inside);
  for (const outside of ['x@example.net', 'x@mailinator.co', 'x@notmailinator.com', 'com', '']) t.false(domains.has(outside, 0, null), outside);
  const emails = table('email', ['jane@example.com']);
  t.true(emails.has(' JANE@Example.com ', 0, null));
  t.false(emails.has('jane@example.org', 0, null));
});

test('phone with the event country; bin by prefix; card in both forms; country in any case; the rest as sent', (t) => {
  const phones = table('phone', ['+447400123456']);
  t.true(phones.has('07400 123456', 0, 'GB'));
  t.false(phones.has('07400 123456', 0, null), 'a national number without a country cannot be read');
  t.true(phones.has('+44 7400 123456', 0, null));
  const bins = table('bin', ['411111', '5555555']);
  for (const inside of ['411111', '41111199', '5555555', '55555551']) t.true(bins.has(inside, 0, null), inside);
  for (const outside of ['411112', '555555', '4111', 'abcdef']) t.false(bins.has(outside, 0, null), outside);
  const cards = table('card', ['411111:1111']);
  t.true(cards.has('411111:1111', 0, null));
  t.true(cards.has('411111******1111', 0, null));
  t.false(cards.has('411111:1112', 0, null));
  const countries = table('country', ['NG']);
  t.true(countries.has('ng', 0, null));
  // Letters beyond ASCII that upper-case to ASCII (a dotless i, a long s) make no country code.
  const lookalikes = table('country', ['IT', 'SS']);
  t.false(lookalikes.has('ıt', 0, null));
  t.false(lookalikes.has('ſs', 0, null));
  t.true(lookalikes.has(' it', 0, null));
  const accounts = table('account', ['User-42']);
  t.true(accounts.has('User-42', 0, null));
  t.false(accounts.has('user-42', 0, null));
});

test('expired items stop matching at their time', (t) => {
  const ips = table('ip', [['192.0.2.0/24', 5000], '198.51.100.1']);
  t.true(ips.has('192.0.2.9', 4999, null));
  t.false(ips.has('192.0.2.9', 5000, null));
  t.true(ips.has('198.51.100.1', 1e15, null));
});

test('texts hash one-to-one: lone surrogates (which UTF-8 would merge) and non-ASCII text stay apart', (t) => {
  const strings = table('string', ['x\ud800', 'zoë', '😀']);
  t.true(strings.has('x\ud800', 0, null));
  t.false(strings.has('x\ud801', 0, null));
  t.false(strings.has('x\ufffd', 0, null));
  t.true(strings.has('zoë', 0, null));
  t.false(strings.has('zoe', 0, null));
  t.true(strings.has('😀', 0, null));
  t.false(strings.has('\ud83d', 0, null));
});
