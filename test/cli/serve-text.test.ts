// What `serve` prints: the URL it listens on, and the command line its node-flags warning gives.
import test from 'ava';
import { serverUrl, shellWord } from '../../src/cli/serve.js';

test('the URL puts an IPv6 address in brackets', (t) => {
  t.is(serverUrl('127.0.0.1', 8080), 'http://127.0.0.1:8080');
  t.is(serverUrl('::1', 18143), 'http://[::1]:18143');
  t.is(serverUrl('localhost', 80), 'http://localhost:80');
  t.is(new URL(serverUrl('::', 9)).port, '9', 'a URL that parses');
});

test('shellWord quotes what a shell would split or expand, and nothing else', (t) => {
  t.is(shellWord('--data-dir'), '--data-dir');
  t.is(shellWord('/var/lib/fraud-scorer'), '/var/lib/fraud-scorer');
  t.is(shellWord('my data'), "'my data'");
  t.is(shellWord("it's"), "'it'\\''s'");
  t.is(shellWord('$HOME'), "'$HOME'");
});
