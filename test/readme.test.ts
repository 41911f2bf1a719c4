// The README's quick start stays true: its first-start output is what a first start prints, and its
// example request, sent to a fresh server, gets the answer the README shows.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { api, serverForFile } from './_helpers/server.js';

const kReadme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');

const file = serverForFile(test);

/** The fenced blocks of the README, with their language. */
function codeBlocks(): Array<{ language: string; text: string }> {
  return [...kReadme.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({ language: match[1]!, text: match[2]! }));
}

/** A README line as a pattern: "…" stands for a value that differs each time. */
function linePattern(line: string): RegExp {
  const escaped = line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('…', '\\S+');
  return new RegExp(`^${escaped.replace('127\\.0\\.0\\.1:8080', '127\\.0\\.0\\.1:\\d+').replace('\\(data in \\./data\\)', '\\(data in .+\\)').replace('data/bootstrap-keys\\.json', '.+/bootstrap-keys\\.json')}$`);
}

/** The JSON value after `"name":` in `text` (a value without "…" placeholders). */
function claimedValue(text: string, name: string): unknown {
  const start = text.indexOf(`"${name}":`);
  if (start === -1) throw new Error(`the README's answer does not show ${name}`);
  const rest = text.slice(start + name.length + 3);
  // The shortest prefix that parses and is followed by a delimiter: "311" and not its "3".
  for (let end = 1; end <= rest.length; end++) {
    if (end < rest.length && !/[,\]}\s]/.test(rest[end]!)) continue;
    try {
      return JSON.parse(rest.slice(0, end));
    } catch {
      // not a whole value yet
    }
  }
  throw new Error(`no JSON value for ${name}`);
}

test('the first-start output is what the README shows, line by line', (t) => {
  const block = codeBlocks().find((candidate) => candidate.text.startsWith('First start:'));
  t.truthy(block);
  const printed = file.server.output().split('\n');
  let at = 0;
  for (const line of block!.text.trimEnd().split('\n')) {
    const pattern = linePattern(line);
    const found = printed.findIndex((candidate, index) => index >= at && pattern.test(candidate));
    t.not(found, -1, `README line not printed (in this order): ${line}`);
    at = found + 1;
  }
});

test('the README\'s example request gets the answer the README shows', async (t) => {
  const request = codeBlocks().find((candidate) => candidate.language === 'sh' && candidate.text.includes('curl -s http://127.0.0.1:8080/v1/events'));
  t.truthy(request);
  t.regex(request!.text, /keys\.live_secret\.key/, 'it uses the live secret key');
  t.regex(request!.text, /-H 'Content-Type: application\/json'/);
  // The body: the single-quoted -d argument, with the shell's event id substitution filled in.
  const argument = /-d '([\s\S]*)'\s*$/.exec(request!.text.trimEnd())![1]!;
  const substitution = `'"$(node -p 'crypto.randomUUID()')"'`;
  t.true(argument.includes(substitution));
  const eventId = randomUUID();
  const body = JSON.parse(argument.replace(substitution, eventId)) as Record<string, unknown>;

  const answer = await api(file.server, 'POST', '/v1/events', { key: file.key, body });
  t.is(answer.status, 200, answer.text);
  const claimed = codeBlocks().find((candidate) => candidate.language === 'json' && candidate.text.includes('"decision"'))!.text;
  const data = answer.body.data as Record<string, unknown>;
  t.is(data.event_id, eventId);
  t.is(answer.body.status as number, claimedValue(claimed, 'status') as number);
  for (const field of ['state', 'decision', 'risk_score', 'max_possible', 'flags', 'trust_override', 'hard_block_hit', 'enrichment_status', 'ruleset_version']) {
    t.deepEqual(data[field], claimedValue(claimed, field), field);
  }
  // The README shows the breakdown's first entry, then elides the rest.
  const shownEntry = JSON.parse(/"breakdown":\[(\{[^}]*\})/.exec(claimed)![1]!) as unknown;
  t.deepEqual((data.breakdown as unknown[])[0], shownEntry);
  t.regex(String(data.account_public_id), /^acc_/);
  t.is(typeof data.latency_ms, 'number');
});
