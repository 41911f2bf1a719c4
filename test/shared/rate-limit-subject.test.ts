// The subject of per-address limits (src/http/rate-limit-subject.ts): IPv4 as itself, IPv6 by its /64.
import test from 'ava';
import { rateLimitSubject } from '../../src/http/rate-limit-subject.js';

test('IPv4 as it is; IPv6 by its /64, however written; IPv4-mapped as IPv4', (t) => {
  t.is(rateLimitSubject('203.0.113.7'), '203.0.113.7');
  t.is(rateLimitSubject('2001:db8:1:2::1'), '2001:db8:1:2::/64');
  t.is(rateLimitSubject('2001:0DB8:0001:0002:ffff:0:0:9'), '2001:db8:1:2::/64');
  t.not(rateLimitSubject('2001:db8:1:3::1'), rateLimitSubject('2001:db8:1:2::1'));
  t.is(rateLimitSubject('::ffff:203.0.113.7'), '203.0.113.7');
  t.is(rateLimitSubject('not an address'), 'not an address');
  // A zone id is no part of the address; addresses that carry an IPv4 one are that one.
  t.is(rateLimitSubject('fe80::1%eth0'), 'fe80:0:0:0::/64');
  t.is(rateLimitSubject('fe80::2%eth1'), rateLimitSubject('fe80::1'));
  t.is(rateLimitSubject('64:ff9b::203.0.113.7'), '203.0.113.7');
  t.not(rateLimitSubject('64:ff9b::203.0.113.7'), rateLimitSubject('64:ff9b::203.0.113.8'));
  t.is(rateLimitSubject('::203.0.113.7'), '203.0.113.7');
  t.is(rateLimitSubject('::1'), '0:0:0:0::/64');
});
