// IP addresses in their canonical text (src/signals/ip.ts): what links and counts as one address.
import { isIPv4 } from 'node:net';
import test from 'ava';
import { maskIp, normalizeIp } from '../../src/signals/ip.js';

test('IPv4 is dotted decimal as sent; a part with a leading zero or above 255 is no address', (t) => {
  t.is(normalizeIp('203.0.113.7'), '203.0.113.7');
  t.is(normalizeIp('0.0.0.0'), '0.0.0.0');
  t.is(normalizeIp(' 10.1.2.3\n'), '10.1.2.3', 'surrounding whitespace is not part of it');
  for (const text of ['010.1.2.3', '10.1.2.03', '00.0.0.0', '256.1.1.1', '1.2.3', '1.2.3.4.5', '1.2.3.4a', '']) {
    t.is(normalizeIp(text), null, text);
  }
});

test('the runtime refuses what the canonical form would rewrite, so the text is returned as it is', (t) => {
  // normalizeIp relies on it: were 010.1.2.3 accepted, it would have to be written 10.1.2.3.
  for (let part = 0; part < 1000; part++) {
    for (const text of [String(part), String(part).padStart(2, '0'), String(part).padStart(3, '0')]) {
      const address = `${text}.0.0.1`;
      t.is(isIPv4(address), text === String(part) && part <= 255, address);
    }
  }
});

test('IPv6 is lower case with the longest run of zeros compressed; IPv4-mapped reads as IPv4', (t) => {
  t.is(normalizeIp('2001:DB8:0:0:0:0:0:1'), '2001:db8::1');
  t.is(normalizeIp('2001:db8:0:0:1:0:0:1'), '2001:db8::1:0:0:1', 'the first of two equal runs');
  t.is(normalizeIp('2001:db8:0:1:1:1:1:1'), '2001:db8:0:1:1:1:1:1', 'one zero group stays');
  t.is(normalizeIp('::ffff:203.0.113.7'), '203.0.113.7');
  t.is(normalizeIp('::FFFF:cb00:7107'), '203.0.113.7');
  t.is(normalizeIp('2001:db8::g'), null);
});

test('masks keep the network part', (t) => {
  t.is(maskIp('203.0.113.7'), '203.0.113.*');
  t.is(maskIp('2001:db8::1'), '2001:db8:*');
});
