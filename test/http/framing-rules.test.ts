// The framing and media-type rules of the front end, as pure functions (the same requests over raw
// sockets: framing.test.ts).
import test from 'ava';
import { framingProblem, isJsonMediaType } from '../../src/http/framing.js';

const kFraming: Array<[string, number, string[], string | null]> = [
  ['no framing headers', 0, [], null],
  ['one Content-Length', 1, [], null],
  ['two Content-Length headers', 2, [], 'Content-Length'],
  ['chunked', 0, ['chunked'], null],
  ['Chunked with spaces', 0, [' Chunked '], null],
  ['gzip, chunked', 0, ['gzip, chunked'], 'Transfer-Encoding'],
  ['chunked, chunked', 0, ['chunked, chunked'], 'Transfer-Encoding'],
  ['identity', 0, ['identity'], 'Transfer-Encoding'],
  ['two chunked headers', 0, ['chunked', 'chunked'], 'Transfer-Encoding'],
  ['Content-Length and chunked', 1, ['chunked'], 'Transfer-Encoding'],
];

for (const [name, contentLengths, transferEncodings, parameter] of kFraming) {
  test(`framing: ${name}`, (t) => {
    const problem = framingProblem(contentLengths, transferEncodings);
    t.is(problem?.parameter ?? null, parameter);
    if (problem !== null) {
      t.is(problem.status, 400);
      t.is(problem.code, 'VALIDATION_ERROR');
    }
  });
}

test('JSON media types: application/json with any parameters and case; nothing else', (t) => {
  for (const yes of ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON;charset=UTF-8', ' application/json ', 'application/json;']) {
    t.true(isJsonMediaType(yes), yes);
  }
  for (const no of ['', 'text/plain', 'application/jsonp', 'application/json-seq', 'application/x-www-form-urlencoded', 'json', 'application/ld+json', 'text/json']) {
    t.false(isJsonMediaType(no), no);
  }
});
