// The router alone: static paths, patterns, 405 with the methods of every route on the path.
import test from 'ava';
import { Router, type HttpMethod } from '../../src/http/router.js';

const route = (method: HttpMethod, pattern: string) => ({ method, pattern });
const router = new Router([
  route('GET', '/v1/rules'),
  route('POST', '/v1/rules'),
  route('POST', '/v1/rules/publish'),
  route('GET', '/v1/rules/:rule_id'),
  route('PUT', '/v1/rules/:rule_id'),
  route('GET', '/v1/accounts/:id/links'),
]);

test('a static path wins over a pattern that matches it: its other methods are 405 with its own', (t) => {
  const publish = router.match('POST', '/v1/rules/publish');
  t.is(publish.kind === 'found' && publish.route.pattern, '/v1/rules/publish');
  for (const method of ['GET', 'PUT', 'DELETE'] as const) {
    const other = router.match(method, '/v1/rules/publish');
    t.deepEqual(other.kind === 'method_not_allowed' && [...other.allowed], ['POST'], method);
  }
  const rule = router.match('GET', '/v1/rules/publisher');
  t.is(rule.kind === 'found' && rule.params.rule_id, 'publisher');
});

test('parameters are decoded; malformed encodings and empty segments match nothing', (t) => {
  const links = router.match('GET', '/v1/accounts/user%40example.com/links');
  t.is(links.kind === 'found' && links.params.id, 'user@example.com');
  t.is(router.match('GET', '/v1/accounts/%E0%A4%A/links').kind, 'not_found');
  t.is(router.match('GET', '/v1/accounts//links').kind, 'not_found');
  t.is(router.match('GET', '/v1/rules/x/y').kind, 'not_found');
});

test('duplicate routes are refused when the table is built', (t) => {
  t.throws(() => new Router([route('GET', '/a'), route('GET', '/a')]), { message: /duplicate route/ });
  t.throws(() => new Router([route('GET', '/a/:x'), route('GET', '/a/:x')]), { message: /duplicate route/ });
});
