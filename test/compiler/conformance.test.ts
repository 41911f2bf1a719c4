// google/cel-spec's conformance tests (tests/simple/testdata, vendored in
// test/compiler/cel-spec with its licence and commit) run through the compiler.
//
// Every test the rule language can express must give the specification's
// answer. Every other test must have a reason, and the reasons are of two
// kinds only: not applicable (protocol buffer messages, enums, containers,
// declared variables and partial evaluation, which a rule over a JSON event
// has no use for) and deliberately unsupported (named in docs/rules.md). A
// test that is refused or answered otherwise without such a reason fails the
// suite. The counts per file are printed.

import test from 'ava';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { kAbsent } from '../../compiler/runtime/index.js';
import { compileValue } from '../../compiler/value.js';
import { one, parseTextproto, type TextMessage, type TextValue } from './_helpers/textproto.js';

// From dist/test/compiler back to the sources: the data files are not compiled.
const kDataDir = fileURLToPath(new URL('../../../test/compiler/cel-spec/testdata/', import.meta.url));
const kDocs = readFileSync(fileURLToPath(new URL('../../../docs/rules.md', import.meta.url)), 'utf8');

type Outcome = { kind: 'pass' } | { kind: 'skip'; reason: string } | { kind: 'fail'; why: string };

// Not applicable: what a rule over a JSON event has no use for.
const kNotApplicable = {
  proto: 'not applicable: protocol buffer messages, enums and wrappers',
  variables: 'not applicable: declares its own variables (rules read the event, the signals and now)',
  unknowns: 'not applicable: partial evaluation (unknowns)',
  checkOnly: 'not applicable: type-checks only, evaluates nothing',
  unchecked: 'not applicable: expects evaluation without type-checking (rules are always checked)',
  macros: 'not applicable: expects macros to be disabled',
} as const;

// Deliberately unsupported: each reason quotes words docs/rules.md uses for it, checked below.
const kUnsupported: ReadonlyArray<{ reason: string; docs: string; test: (expr: string, message: string, expected: string) => boolean }> = [
  { reason: 'unsupported: unsigned integers', docs: 'unsigned integers', test: (e, m, x) => /\d[uU]\b|\buint\b/.test(e) || /uint/.test(m) || x.includes('uint64_value') },
  { reason: 'unsupported: bytes', docs: 'bytes (`b\'…\'`)', test: (e, m, x) => /\bb['"]|\bbytes\b/.test(e) || /bytes/.test(m) || x.includes('bytes_value') },
  { reason: 'unsupported: dyn(), type() and type names as values', docs: '`dyn()`, `type()`, type names as values', test: (e, m, x) => /\b(dyn|type)\(/.test(e) || /Unknown variable: (int|uint|double|bool|string|bytes|list|map|null_type|type)\b/.test(m) || x.includes('type_value') },
  { reason: 'unsupported: optional values and extension libraries', docs: 'optional values (`?.`, `.orValue()`), `cel.bind`, extension libraries', test: (e, m) => /optional|\?\.|\.\?|\[\?|cel\.|math\.|strings\.|base64|\.format\(|\.replace\(|\.reverse\(|\.quote\(|\bip\(|\bip\.|isIP\(|cidr|sets\.|lists\./.test(e) || /optional/i.test(m) || /\bnot supported\b|found no matching overload|Unknown variable/.test(m) && /\.(replace|format|reverse|join|lastIndexOf|indexOf|substring|upperAscii|lowerAscii|trim|split|charAt)\(/.test(e) },
  { reason: 'unsupported: numbers are doubles, exact to 2^53', docs: 'Numbers are doubles', test: (e, m) => /too large|2\^53|exact/.test(m) || /\d{16,}/.test(e) },
  { reason: 'unsupported: time zones in timestamp methods', docs: 'time zones in the timestamp methods', test: (_e, m) => /time zone/.test(m) },
  { reason: 'unsupported by the parser: has() on a map literal, quoted field names, doubles without a leading digit', docs: 'quoted field names', test: (e, m) => /has\(\)|`|Unexpected token: DOT/.test(m) || /`/.test(e) },
  { reason: 'unsupported: protocol buffer types', docs: 'protocol buffer messages and their fields', test: (e, m) => /google\.protobuf|TestAllTypes|NestedTestAllTypes|cel\.expr|proto/.test(e + m) },
  { reason: 'unsupported by the parser: two-variable macros, transformList, transformMap', docs: 'two-variable macros', test: (e) => /\.(exists|all|existsOne|transformList|transformMap|transformMapEntry)\(\s*\w+\s*,\s*\w+\s*,/.test(e) },
  { reason: 'unsupported: map keys other than strings', docs: 'map literals with keys other than strings', test: (_e, m) => /map literal keys must be strings/.test(m) },
  { reason: "refused by cel-js's checker: comparisons on elements of an empty list literal", docs: 'comparisons on the elements of an empty list literal', test: (_e, m) => /overlaps with|an element of an empty list or map literal has no type/.test(m) },
  { reason: 'unsupported: beyond the expression limits', docs: 'nesting depth 32', test: (_e, m) => /Exceeded max/.test(m) },
  // The specification's heterogeneous equality answers false ('a' == 1, 7 in {}); ours makes it a
  // type error, so that a wrong-typed value degrades the rule rather than quietly not matching.
  { reason: 'differs: equality between values of different types is a type error', docs: 'Equality between values of different types is a type error', test: (e, m, x) => m === 'type_error' && /==|!=|\bin\b/.test(e) && x.includes('bool_value') },
  { reason: 'unsupported: times are milliseconds', docs: 'Times are milliseconds', test: (e) => /\.\d{4,9}Z'|\d(ns|us|µs)'/.test(e) },
];

function unsupportedReason(expr: string, message: string, expected: string): string | null {
  return kUnsupported.find((u) => u.test(expr, message, expected))?.reason ?? null;
}

/** Value kinds of the expected result that have no counterpart in rules. */
function protoOnly(expected: string): boolean {
  return /object_value/.test(expected) && !/google\.protobuf\.(Timestamp|Duration)\]/.test(expected) || /enum_value/.test(expected);
}

function numberOf(text: string): number {
  const t = text.toLowerCase();
  if (t === 'inf' || t === 'infinity') return Infinity;
  if (t === '-inf' || t === '-infinity') return -Infinity;
  if (t === 'nan') return NaN;
  return Number(text);
}

/** Does the compiled `got` equal the expected cel.expr.Value? A reason string when it does not. */
function compare(got: unknown, expected: TextMessage, topTy: string | null): string | null {
  const [kind, raw] = Object.entries(expected)[0] ?? [];
  const value = raw?.[0] as TextValue;
  switch (kind) {
    case 'int64_value':
    case 'double_value': {
      if (typeof got !== 'number') return `expected a number, got ${String(got)}`;
      if (topTy !== null && topTy !== 'dyn' && topTy !== (kind === 'int64_value' ? 'int' : 'double')) return `expected ${kind}, typed ${topTy}`;
      const want = numberOf(value as string);
      return Object.is(got, want) || got === want || (Number.isNaN(want) && Number.isNaN(got)) ? null : `expected ${want}, got ${got}`;
    }
    case 'string_value':
      return got === value ? null : `expected ${JSON.stringify(value)}, got ${JSON.stringify(got)}`;
    case 'bool_value':
      return got === (value === 'true') ? null : `expected ${value}, got ${String(got)}`;
    case 'null_value':
      // Null reads as absent (docs/rules.md): either is the null value.
      return got === null || got === kAbsent ? null : `expected null, got ${String(got)}`;
    case 'list_value': {
      const want = ((value as TextMessage).values ?? []) as TextMessage[];
      if (!Array.isArray(got) || got.length !== want.length) return `expected a list of ${want.length}, got ${JSON.stringify(got)}`;
      for (let i = 0; i < want.length; i++) {
        const r = compare(got[i], want[i]!, null);
        if (r !== null) return `[${i}]: ${r}`;
      }
      return null;
    }
    case 'map_value': {
      const entries = ((value as TextMessage).entries ?? []) as TextMessage[];
      if (typeof got !== 'object' || got === null || Array.isArray(got)) return `expected a map, got ${String(got)}`;
      if (Object.keys(got).length !== entries.length) return `expected ${entries.length} entries, got ${Object.keys(got).length}`;
      for (const e of entries) {
        const key = one(e, 'key') as TextMessage;
        const k = one(key, 'string_value');
        if (typeof k !== 'string') return 'a map key that is not a string';
        const r = compare((got as Record<string, unknown>)[k], one(e, 'value') as TextMessage, null);
        if (r !== null) return `[${k}]: ${r}`;
      }
      return null;
    }
    case 'object_value': {
      const [typeUrl, body] = Object.entries(value as TextMessage)[0] ?? [];
      const m = body?.[0] as TextMessage;
      const ms = Number(one(m, 'seconds') ?? 0) * 1000 + Number(one(m, 'nanos') ?? 0) / 1e6;
      if (!/Timestamp|Duration/.test(typeUrl ?? '')) return `object ${typeUrl}`;
      return got === ms ? null : `expected ${ms} ms, got ${String(got)}`;
    }
    default:
      return `cannot compare ${kind}`;
  }
}

function run(t: TextMessage): Outcome {
  const expr = one(t, 'expr') as string;
  const expected = JSON.stringify(t.value ?? t.typed_result ?? t.eval_error ?? t.any_eval_errors ?? 'true');
  if (t.bindings !== undefined || t.type_env !== undefined) {
    const declared = JSON.stringify([t.bindings, t.type_env]);
    return { kind: 'skip', reason: /object_value|message_type|enum_value/.test(declared) ? kNotApplicable.proto : kNotApplicable.variables };
  }
  if (t.unknown !== undefined || t.any_unknowns !== undefined) return { kind: 'skip', reason: kNotApplicable.unknowns };
  if (one(t, 'check_only') === 'true') return { kind: 'skip', reason: kNotApplicable.checkOnly };
  if (one(t, 'disable_macros') === 'true') return { kind: 'skip', reason: kNotApplicable.macros };
  if (t.container !== undefined || protoOnly(expected)) return { kind: 'skip', reason: kNotApplicable.proto };
  const compiled = compileValue(expr);
  if (!compiled.ok) {
    const reason = unsupportedReason(expr, compiled.problem.message, expected);
    if (reason !== null) return { kind: 'skip', reason };
    if (one(t, 'disable_check') === 'true') return { kind: 'skip', reason: kNotApplicable.unchecked };
    // The specification expects an error at run time; refusing at compile time is earlier and no less an error.
    if (t.eval_error !== undefined || t.any_eval_errors !== undefined) return { kind: 'pass' };
    return { kind: 'fail', why: `refused: ${compiled.problem.message}` };
  }
  const got = compiled.value.evaluate({ event: {}, signals: {}, now: 0 });
  if (t.eval_error !== undefined || t.any_eval_errors !== undefined) {
    if (typeof got === 'symbol') return { kind: 'pass' };
    const why = `expected an error, got ${JSON.stringify(got)}`;
    const reason = unsupportedReason(expr, why, expected);
    return reason !== null ? { kind: 'skip', reason } : { kind: 'fail', why };
  }
  // simple.proto: a test without a result matcher expects true.
  const value = (one(t, 'value') ?? one(one(t, 'typed_result') as TextMessage, 'result') ?? { bool_value: ['true'] }) as TextMessage;
  if (typeof got === 'symbol') {
    const reason = unsupportedReason(expr, String(got.description), expected);
    return reason !== null ? { kind: 'skip', reason } : { kind: 'fail', why: `evaluation error ${String(got.description)}` };
  }
  const mismatch = compare(got, value, compiled.value.ty.k);
  if (mismatch === null) return { kind: 'pass' };
  const reason = unsupportedReason(expr, mismatch, expected);
  return reason !== null ? { kind: 'skip', reason } : { kind: 'fail', why: mismatch };
}

const kFiles = readdirSync(kDataDir).filter((f) => f.endsWith('.textproto')).sort();

test('the vendored conformance files are all there', (t) => {
  t.true(kFiles.length >= 30, kFiles.join(' '));
});

test('every reason for a deliberately unsupported test is named in docs/rules.md', (t) => {
  for (const u of kUnsupported) t.true(kDocs.includes(u.docs), u.docs);
});

for (const file of kFiles) {
  test(`cel-spec ${file}`, (t) => {
    const parsed = parseTextproto(readFileSync(`${kDataDir}${file}`, 'utf8'));
    const counts = { pass: 0, skip: 0, fail: 0 };
    const reasons = new Map<string, number>();
    const failures: string[] = [];
    for (const section of (parsed.section ?? []) as TextMessage[]) {
      for (const c of (section.test ?? []) as TextMessage[]) {
        const outcome = run(c);
        counts[outcome.kind]++;
        if (outcome.kind === 'skip') reasons.set(outcome.reason, (reasons.get(outcome.reason) ?? 0) + 1);
        if (outcome.kind === 'fail') failures.push(`${one(section, 'name') as string}/${one(c, 'name') as string}: ${one(c, 'expr') as string} → ${outcome.why}`);
      }
    }
    const listed = [...reasons].map(([r, n]) => `${n} ${r}`).join('; ');
    t.log(`${file}: ${counts.pass} pass, ${counts.skip} not run (${listed || 'none'}), ${counts.fail} fail`);
    t.deepEqual(failures, []);
  });
}
