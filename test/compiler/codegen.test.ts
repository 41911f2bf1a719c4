// The Name/Code builder that every emitted character goes through.

import test from 'ava';
import { Code, Name, NameScope, _, join, literal, property, safeStringify } from '../../compiler/codegen.js';

test('Name accepts identifiers only', (t) => {
  t.is(new Name('h12').str, 'h12');
  for (const bad of ['', '1a', 'a-b', 'a b', 'a;b', 'constructor', '__proto__', 'process', 'require', 'globalThis', 'this', 'eval', 'new', 'a$', 'é']) {
    t.throws(() => new Name(bad), { message: /invalid name/ }, bad);
  }
});

test('Code cannot be forged outside codegen', (t) => {
  t.throws(() => new Code(Symbol('code'), 'process.exit()'), { message: /can only be built/ });
});

test('plain values interpolate as literals', (t) => {
  const x = new Name('x');
  t.is(_`${x} === ${'a"b'}`.str, 'x === "a\\"b"');
  t.is(_`f(${1}, ${-2}, ${true}, ${null})`.str, 'f(1, (-2), true, null)');
  t.is(_`a - ${-1}`.str, 'a - (-1)');
  t.is(_`${'${x}`'}`.str, '"${x}`"');
  t.is(_`${'*/'}`.str, '"*/"');
  t.throws(() => _`${Number.NaN}`, { message: /non-finite/ });
  t.throws(() => _`${Number.POSITIVE_INFINITY}`, { message: /non-finite/ });
});

test('safeStringify escapes U+2028 and U+2029', (t) => {
  t.is(safeStringify('a\u2028b\u2029c'), '"a\\u2028b\\u2029c"');
  t.is(literal('\u2028'), '"\\u2028"');
  t.throws(() => safeStringify(undefined), { message: /no JSON form/ });
});

test('property: dot for identifiers, quoted brackets otherwise', (t) => {
  t.is(property('email').str, '.email');
  t.is(property('a-b').str, '["a-b"]');
  t.is(property('__proto__').str, '["__proto__"]');
  t.is(property('"]; x; ["').str, '["\\"]; x; [\\""]');
});

test('join and NameScope', (t) => {
  t.is(join([new Name('a'), 'b', 3]).str, 'a, "b", 3');
  const scope = new NameScope();
  t.deepEqual([scope.name('t').str, scope.name('t').str, scope.name('h').str], ['t0', 't1', 'h0']);
});
