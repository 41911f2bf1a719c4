// The card-number and NUL scans as pure functions, case by case.
import test from 'ava';
import { containsCardNumber, containsNul, locateCardNumber } from '../../src/validation/body-scan.js';
import { passesLuhn } from '../../src/validation/card-schemes.js';
import { scanFormOf } from '../../src/validation/decoded-text.js';

const detects = test.macro((t, text: string, expected: boolean) => {
  t.is(containsCardNumber(text), expected);
});

for (const card of ['4111111111111111', '5555555555554444', '2223003122003222', '378282246310005', '6011111111111117', '3530111333300000', '36227206271667', '6759649826438453128', '6200000000000005', '4111111111111111110']) {
  test(`detects ${card} in a JSON string`, detects, `{"a":"${card}"}`, true);
  test(`detects ${card} as a JSON number`, detects, `{"a":${card}}`, true);
}
test('detects groups separated by spaces', detects, '{"a":"4111 1111 1111 1111"}', true);
test('detects groups separated by dashes', detects, '{"a":"4111-1111-1111-1111"}', true);
test('detects Amex grouping', detects, '{"a":"3782 822463 10005"}', true);
test('detects a card after other digit groups', detects, '{"a":"order 12 4111 1111 1111 1111"}', true);
test('detects a card in a key', detects, '{"4111111111111111":1}', true);
test('detects a card after an escaped newline', detects, '{"a":"x\\n4111111111111111"}', true);
test('detects a card followed by punctuation', detects, '{"a":"pan=4111111111111111."}', true);

test('detects a card written with an exponent', detects, '{"a":4111111111111111e0}', true);
test('detects a card written with a fraction and an exponent', detects, '{"a":[4.111111111111111E+15]}', true);
test('ignores an exponent number that is a fraction', detects, '{"a":4111111111111111e-1}', false);
test('ignores an exponent glued to a word (a hash in a string)', detects, '{"a":"x4111111111111111e0"}', false);
test('ignores an exponent number of epoch milliseconds', detects, '{"a":1.7e12}', false);
test('ignores a Luhn-failing number', detects, '{"a":"4111111111111112"}', false);
test('ignores 12 digits', detects, '{"a":"411111111116"}', false);
test('ignores 20 unseparated digits', detects, '{"a":"41111111111111111110"}', false);
test('ignores a UUID of digits', detects, '{"a":"41111111-1111-1111-1111-111111111111"}', false);
test('ignores a UUID with hex letters', detects, '{"a":"550e8400-e29b-41d4-a716-446655440000"}', false);
test('ignores digits glued to letters (hashes)', detects, '{"a":"ab4111111111111111cd"}', false);
test('ignores an E.164 phone number', detects, '{"a":"+4111111111111"}', false);
test('ignores a number starting with 0 (phones)', detects, '{"a":"04111111111111111"}', false);
test('ignores epoch milliseconds', detects, '{"a":1700000000000}', false);
test('ignores epoch microseconds', detects, '{"a":1700000000000000}', false);
test('ignores epoch nanoseconds', detects, '{"a":"1700000000000000000"}', false);
test('ignores a compact date-time', detects, '{"a":"20240115103000"}', false);
test('ignores ISO timestamps', detects, '{"a":"2024-01-15T10:30:00.000Z"}', false);
test('ignores IPv4 addresses', detects, '{"a":"192.168.100.200","b":"10.0.0.1"}', false);
test('ignores IPv6 addresses', detects, '{"a":"2001:db8:4111:1111:1111:1111:1111:1111"}', false);
test('ignores the integer part of a decimal', detects, '{"a":4111111111111111.5}', false);
test('ignores the fraction part of a decimal', detects, '{"a":0.4111111111111111}', false);

test('Luhn', (t) => {
  t.true(passesLuhn('79927398713'));
  t.false(passesLuhn('79927398710'));
});

test('NUL: raw, escaped, and an escaped backslash that is not one', (t) => {
  t.true(containsNul('{"a":"x\u0000"}'));
  t.true(containsNul('{"a":"x\\u0000"}'));
  t.true(containsNul('{"a":"x\\\\\\u0000"}'));
  t.false(containsNul('{"a":"x\\\\u0000"}'));
  t.false(containsNul('{"a":"x\\u00001"}'.replace('\\u0000', 'u0000')));
});

test('ignores a phone member value without +, as a number or a string', detects, '{"user":{"phone":4915112345678,"mobile_phone":"4915112345678"}}', false);
test('still detects a card in a phone member when it is longer than any phone', detects, '{"phone":"4111111111111111"}', true);
test('still detects a card in a member that only ends like a phone key', detects, '{"note":"phone 4111111111111111"}', true);

// Identifiers that carry a Luhn check digit of their own, and joins of numbers that are grouped
// otherwise: no card scheme issues them, or no card is written so (each passes Luhn).
test('ignores a Visa-like 13-digit number (a German GTIN; no 13-digit Visa numbers are issued)', detects, '{"items":[{"gtin":"4006381333924"}],"a":"4222222222222"}', false);
test('ignores IMEIs', detects, '{"imei":"490154203237518","b":"356938035643809"}', false);
test('ignores a SIM ICCID', detects, '{"sim_iccid":"8944123456789012348"}', false);
test('ignores a South African id number', detects, '{"id_number":"9202204720083"}', false);
test('ignores a payment reference starting like no scheme', detects, '{"payment_reference":"2024112900012346"}', false);
test('ignores an IBAN in print format', detects, '{"iban":"GB83 NWBK 4022 3991 6242 97"}', false);
test('ignores two dates', detects, '{"a":"2025-07-08 2024-09-27"}', false);
test('ignores a ZIP code and a phone number on one line', detects, '{"address":"12 Main St, Springfield, IL 55693 818-394-2738"}', false);
test('ignores two US phone numbers', detects, '{"a":"818-394-2738 415-555-1234","b":"(415) 555-2671 4155552671"}', false);
test('ignores an order id with dashes', detects, '{"order":"ORD-2024-4662933167"}', false);
test('ignores an amount in wei', detects, '{"wei":"12345679000000000"}', false);
test('detects a Diners 4-6-4 layout', detects, '{"a":"3622 720627 1667"}', true);
test('ignores groups not laid out as a card (4-5-4-3)', detects, '{"a":"4111 11111 1111 111"}', false);
test('detects a card separated by double spaces, spaced dashes, en, thin, hair and ideographic spaces, en dashes, soft hyphens and zero-width characters', (t) => {
  for (const separator of ['  ', ' - ', '\u2009', '\u3000', '\u2013', '\u2011', '\u2010', '\u2002', '\u200a', '\u00ad', '\u200b', '\u2060', '\ufeff', ' \u200b', '\u200e', '\u200f', '\u061c', '\u1680', '\u180e', '\u2063']) {
    const text = JSON.stringify({ a: ['4111', '1111', '1111', '1111'].join(JSON.parse(`"${separator}"`)) });
    t.true(containsCardNumber(text), JSON.stringify(separator));
  }
});
test('detects a card in fullwidth, Arabic-Indic, Devanagari and mathematical digits in the scan form', (t) => {
  for (const zero of [0xff10, 0x0660, 0x0966, 0x1d7ce]) {
    const digits = (text: string): string => [...text].map((c) => (c >= '0' && c <= '9' ? String.fromCodePoint(zero + Number(c)) : c)).join('');
    t.true(containsCardNumber(scanFormOf(JSON.stringify({ note: `カード番号 ${digits('4111 1111 1111 1111')}` }))), zero.toString(16));
    t.false(containsCardNumber(scanFormOf(JSON.stringify({ note: digits('4111 1111 1111 1112') }))), zero.toString(16));
  }
});
test('a member named like a phone and a card holds a card', detects, '{"mobile_wallet_pan":"378282246310005","mobileCardNumber":"x"}', true);
test('a phone member whose name only contains the letters p-a-n is still a phone member', detects, '{"japan_phone":"135412345678911","company_phone":"135412345678911"}', false);

// What a second probe found refused: numbers no scheme issues at that length, and longer numbers
// in print (fours) whose middle passes every check.
test('ignores 15 digits starting with 1 (social network ids, ACH trace numbers; UATP is not taken)', detects, '{"external_account_id":100017262433033,"trace":"121000247173457"}', false);
test('ignores an account number in print whose middle groups pass (Polish NRB)', detects, '{"a":"17 1540 5136 2785 6882 0581 2378"}', false);
test('ignores a tracking number in fours', detects, '{"a":"9205 6252 8410 6220 0672 72"}', false);
test('ignores 18 digits (ticks, national ids, CLABE)', detects, '{"ticks":"637771268136592499","id":"440305196608063489","clabe":"646969726174242353"}', false);
test('ignores a GTIN-14 and a Lloyds IBAN in print', detects, '{"gtin":"39383103493644","iban":"GB77 LOYD 3021 6022 4284 58"}', false);
test('ignores an amount in wei with many zeros', detects, '{"wei":"4694527000000000000"}', false);
test('ignores a 13-digit number starting 6304 (a South African id)', detects, '{"id":"6304218144087"}', false);
test('detects a card followed by its expiry', detects, '{"a":"4111 1111 1111 1111 12/25"}', true);
test('detects a card form-encoded with + for spaces, and with minus signs', detects, '{"a":"card_number=4111+1111+1111+1111&cvc=123","b":"x"}', true);
test('detects a card separated by minus signs', detects, '{"a":"4111\u22121111\u22121111\u22121111"}', true);
test('detects a URL-encoded card and a magnetic track 1 in the scan form', (t) => {
  for (const text of ['{"u":"%3Fpan%3D4111111111111111%26x"}', '{"u":"card%204111%201111%201111%201111"}', '{"t":"%B4111111111111111^DOE/JOHN^2512"}']) {
    t.true(containsCardNumber(scanFormOf(text)), text);
  }
});
test('URL escapes of UTF-8 separators separate a card\'s groups; escapes of letters glue as letters do', (t) => {
  for (const text of ['{"u":"pan%3D4111%E2%80%8B1111%E2%80%8B1111%E2%80%8B1111"}', '{"u":"card%3A%C2%A04111%C2%A01111%C2%A01111%C2%A01111"}']) {
    t.true(containsCardNumber(scanFormOf(text)), text);
  }
  t.false(containsCardNumber(scanFormOf('{"u":"ref%3Dcaf%C3%A94111111111111111"}')), 'an é glues');
  // Bytes that are no UTF-8 (a Latin-1 page's escapes) read as before: a comma each, which does not glue.
  t.true(containsCardNumber(scanFormOf('{"u":"%E94111111111111111"}')));
  // A track's %B right after another escape is still the sentinel.
  t.true(containsCardNumber(scanFormOf('{"u":"swipe%3D%B4111111111111111^DOE"}')));
  t.true(containsCardNumber(scanFormOf('{"u":"%C2%A0%B4111111111111111^DOE"}')));
  // But %B0–%B9 inside a letter's UTF-8 are that letter (д is %D0%B4, 件 %E4%BB%B6): glued, as the letter is.
  t.false(containsCardNumber(scanFormOf('{"u":"%D0%B4111111111111111"}')), 'д then 15 digits');
  t.false(containsCardNumber(scanFormOf('{"u":"ref=%D0%BA%D0%BE%D0%B4111111111111111"}')), 'код then 15 digits');
  t.false(containsCardNumber(scanFormOf('{"u":"%E4%BB%B6411111111111111"}')), '件 then 15 digits');
});
test('a letter written as an escape glues as the letter does', detects, '{"ref":"4111111111111111\\u00e9"}', false);
test('the field named is the one holding the card, not a phone member the scan passed over', (t) => {
  t.is(locateCardNumber({ user: { phone: '378282246310005' }, extras: { note: '4111 1111 1111 1111' } }), 'extras.note');
});

// A third probe's findings.
test('detects a card right after a + when it is longer than a phone number', detects, '{"a":"+4111111111111111","b":"note=my+card+is+4111+1111+1111+1111"}', true);
test('detects fullwidth digits with a fullwidth hyphen (as Japanese input writes them), in the scan form', (t) => {
  t.true(containsCardNumber(scanFormOf(JSON.stringify({ a: '４１１１－１１１１－１１１１－１１１１' }))));
  t.true(containsCardNumber(scanFormOf(JSON.stringify({ a: '４１１１ー１１１１ー１１１１ー１１１１' }))));
});
test('ignores 20 digits in fours (an account number in print), whatever its last group', detects, '{"a":"4081 7810 0480 7896 0679","b":"4111 1111 1111 1111 1228"}', false);
test('ignores an IBAN in print: its digits after the country code are glued to it', detects, '{"a":"DE46 4805 0161 5349 8550 07","b":"IBAN: IT73 X062 3015 6829 6780 4552 518","c":"AT17 6000 0629 7320 8728"}', false);
test('detects an Amex written in fours', detects, '{"a":"3782 8224 6310 005"}', true);
test('detects a card after a decimal amount or an IP address', (t) => {
  for (const text of ['paid 19.99 4111 1111 1111 1111', '4111111111111111 19.99 EUR', '10.0.0.7 4111111111111111']) {
    t.true(containsCardNumber(JSON.stringify({ a: text })), text);
  }
});
test('an escaped digit after a run makes the number longer: judged as decoded, not refused', (t) => {
  const text = '{"a":"378282246310005\\u0031"}';
  t.false(containsCardNumber(text));
  t.false(containsCardNumber(scanFormOf(JSON.stringify(JSON.parse(text)))));
});
test('a phone member written with an escape in its name is a phone member', detects, '{"ph\\u006fne":"378282246310005"}', false);
test('the field named holds the card, not a number that rounds to its value', (t) => {
  t.is(locateCardNumber({ order_ref: 4111111111111111111, note: 'card 4111111111111111110' }, '4111111111111111110'), 'note');
});
test('URL escapes write their characters: an encoded list of ids is no card', (t) => {
  for (const text of ['https://shop.example/p?ids=5178%2C3470%2C1884%2C2203', 'a=5178%7C3470%7C1884%7C2203', 'x=5178%0A3470%0A1884%0A2203']) {
    t.false(containsCardNumber(scanFormOf(JSON.stringify({ u: text }))), text);
  }
});

// A word after the card that starts with digits ("3DS", "2nd") is the word's: its group is left out, the card before it stays.
test('detects a card before a word that starts with digits', (t) => {
  for (const text of ['Paid 4111 1111 1111 1111 3DS ok', 'card 5555 5555 5555 4444 2nd try', '4111-1111-1111-1111-3ds', '4111111111111111 1X',
    // Words that go on with digits: a protocol's version, a time, a hex token after the card.
    '4111 1111 1111 1111 3DS2', 'card 4111 1111 1111 1111 2FA1 done', 'carte 4111 1111 1111 1111 14h30', '4111 1111 1111 1111 1h30m',
    'pan 4111 1111 1111 1111 3f2a9c1b token', '378282246310005 3DS2 ok', '4111 1111 1111 1111 3ds2.0',
    // A word, then a group of four with a digit: not a number in fours going on in hex.
    'card 4111111111111111 10am-12pm slot', 'card 4111 1111 1111 1111 10am 12pm', 'delivery 4111111111111111 12th 2026', '4111111111111111 1ABC 1234',
    'card 4111 1111 1111 1111 3DS2 1234', 'card 4111111111111111 3DS2 2024', '4111 1111 1111 1111 3DS2 - 1234']) {
    t.true(containsCardNumber(JSON.stringify({ a: text })), text);
  }
});
test('ignores a run glued to a word after it when it is one group, or when its last groups are what would make a card', (t) => {
  for (const text of ['4111111111111111abc', 'ref 4111 1111 1111 1111abc', 'MU17 BOMM 0101 1010 3030 0200 000M UR', 'order 4111 1111 1111 11X',
    // A longer number in fours whose last group is glued to a word, and a hex fingerprint in fours: not a card followed by a word.
    '4111 1111 1111 1111 1111abc', 'PGP 4539 1488 0343 6467 9A2B 3C4D']) {
    t.false(containsCardNumber(JSON.stringify({ a: text })), text);
  }
});

// Scripts written without spaces between words: a card number touches the words around it.
test('detects a card inside Chinese, Japanese, Korean or Thai text', (t) => {
  for (const text of ['卡号4111111111111111已绑定', 'カード番号：4111111111111111です', '번호4111111111111111입니다', '卡号：4111 1111 1111 1111已绑定', 'บัตร4111111111111111ครับ',
    'ｶｰﾄﾞ4111111111111111', 'ﾃﾞｰﾀｰ4111111111111111', 'カート\u30994111111111111111']) {
    t.true(containsCardNumber(JSON.stringify({ a: text })), text);
  }
});
