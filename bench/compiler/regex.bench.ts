// matches(): the engines that could run CEL's RE2 patterns, on the patterns and inputs rules meet
// and on the inputs that make a backtracking engine stall. One function, its alternatives:
//
//   re2js       pure JavaScript port of RE2/J, linear time (what compiler/runtime uses)
//   re2         native binding of Google's RE2 (node-gyp; built from source where its prebuilt
//               binary cannot be downloaded)
//   re2-wasm    Google's RE2 compiled to WebAssembly
//   RegExp      V8's backtracking engine, for reference only: not RE2 syntax, not linear
//
// re2 and re2-wasm are not dependencies of the project; to include them in a run:
//   npm i --no-save re2 re2-wasm && npx tsc -p tsconfig.json && node dist/bench/compiler/regex.bench.js
// Figures and the choice: bench/compiler/README.md ("Regular expressions").
import { createRequire } from 'node:module';
import { RE2JS } from 're2js';

type Tester = (input: string) => boolean;
const require = createRequire(import.meta.url);

function optional(name: string, make: (mod: any) => (pattern: string) => Tester): ((pattern: string) => Tester) | null {
  try {
    return make(require(name));
  } catch {
    console.log(`(${name} is not installed: not measured)`);
    return null;
  }
}

const engines: Array<[string, (pattern: string) => Tester]> = [
  ['re2js', (p) => { const re = RE2JS.compile(p); return (s) => re.test(s); }],
];
const native = optional('re2', (RE2) => (p) => { const re = new RE2(p); return (s) => re.test(s); });
if (native !== null) engines.push(['re2 (native)', native]);
const wasm = optional('re2-wasm', (m) => (p) => { const re = new m.RE2(p, 'u'); return (s) => re.test(s); });
if (wasm !== null) engines.push(['re2-wasm', wasm]);
engines.push(['RegExp (V8, backtracking)', (p) => { const re = new RegExp(p); return (s) => re.test(s); }]);

const kUa = '(headless|phantomjs|selenium|python-requests|curl/|wget/)';
const kCases: Array<[string, string, string, boolean]> = [
  // name, pattern, input, safe for a backtracking engine
  ['preset UA pattern, browser UA (no match)', kUa, 'mozilla/5.0 (windows nt 10.0; win64; x64) applewebkit/537.36 (khtml, like gecko) chrome/120.0.0.0 safari/537.36', true],
  ['preset UA pattern, headless UA (match)', kUa, 'mozilla/5.0 (x11; linux x86_64) headlesschrome/120.0', true],
  ['email shape', '^[a-z0-9._%+-]+@[a-z0-9.-]+[.][a-z]{2,}$', 'jane.doe+shop@example.co.uk', true],
  ["issue 12: 'a*b' on 512 × 'a'", 'a*b', 'a'.repeat(512), true],
  ["'(x+x+)+y' on 30 × 'x'", '(x+x+)+y', 'x'.repeat(30), false],
  ['preset UA pattern on 1 MiB', kUa, 'mozilla '.repeat(1 << 17), true],
  ["'a*b' on 1 MiB of 'a'", 'a*b', 'a'.repeat(1 << 20), false],
];

console.log(`node ${process.version}; ns per call (1 MiB inputs: ms per call)`);
const rows: Record<string, Record<string, string>> = {};
for (const [name, pattern, input, safe] of kCases) {
  const row: Record<string, string> = {};
  for (const [engine, make] of engines) {
    if (!safe && engine.startsWith('RegExp')) {
      row[engine] = 'stalls';
      continue;
    }
    const test = make(pattern);
    const big = input.length > 100_000;
    const n = big ? 5 : 20_000;
    for (let i = 0; i < Math.min(n, 1000); i++) test(input);
    const started = process.hrtime.bigint();
    for (let i = 0; i < n; i++) test(input);
    const ns = Number(process.hrtime.bigint() - started) / n;
    row[engine] = big ? `${(ns / 1e6).toFixed(1)} ms` : `${ns.toFixed(0)} ns`;
  }
  rows[name] = row;
}
console.table(rows);
