// Start and stop: SIGTERM drains (stops listening, finishes requests in flight, closes the
// database cleanly), and the data survives a restart.
import test from 'ava';
import Database from 'better-sqlite3';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { api, makeDataDir, startServer, waitFor } from '../_helpers/server.js';
import { minimalEvent } from '../_helpers/events.js';
import { openSocket, readResponse, requestHead } from '../_helpers/raw-http.js';

test('SIGTERM finishes the request in flight, stops listening, and closes the database cleanly', async (t) => {
  const dataDir = makeDataDir();
  const server = await startServer({ dataDir });
  const key = server.bootstrap.keys.live_secret.key;
  const event = minimalEvent();
  const body = JSON.stringify(event);

  // A request whose body is still arriving when SIGTERM comes.
  const socket = await openSocket(server.port);
  // One full exchange first: the server has surely taken the connection before it stops listening.
  const health = readResponse(socket);
  socket.write(requestHead('GET', '/healthz', {}));
  t.is((await health).status, 200);
  socket.write(requestHead('POST', '/v1/events', { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) }));
  socket.write(body.slice(0, 10));
  const response = readResponse(socket);
  server.child.kill('SIGTERM');
  // No new connections once draining (the line is logged after the listen socket is closed).
  await waitFor(() => server.output().includes('"message":"draining"'), 'the server to log that it drains');
  await t.throwsAsync(fetch(`${server.url}/healthz`));
  socket.write(body.slice(10));
  const answered = await response;
  t.is(answered.status, 200, answered.body);
  const exit = await server.stop();
  t.is(exit.code, 0);

  // The database is whole and holds the event.
  const db = new Database(join(dataDir, 'fraud-scorer.db'), { readonly: true });
  t.is(db.pragma('integrity_check', { simple: true }), 'ok');
  t.is((db.prepare('SELECT count(*) AS n FROM events WHERE event_id = ?').get(event.event_id as string) as { n: number }).n, 1);
  db.close();

  // A restart on the same data dir serves the stored result.
  const again = await startServer({ dataDir });
  try {
    const stored = await api(again, 'GET', `/v1/scores/${event.event_id}`, { key });
    t.is(stored.status, 200);
    t.is(stored.body.data.event_id, event.event_id);
    t.false(again.output().includes('First start'));
  } finally {
    await again.stop();
  }
});

test('a server whose log reader went away (a closed terminal, a pipe whose reader exited) serves on and drains on SIGTERM: exit 0, start snapshot written', async (t) => {
  const server = await startServer({ env: { ACCESS_LOG: 'on' }, keepDataDir: true });
  t.teardown(() => rmSync(server.dataDir, { recursive: true, force: true }));
  server.child.stdout!.destroy();
  server.child.stderr!.destroy();
  // Each request writes an access-log line into the closed pipe.
  for (let i = 0; i < 3; i++) t.is((await fetch(`${server.url}/healthz`)).status, 200);
  const key = server.bootstrap.keys.live_secret.key;
  t.is((await api(server, 'POST', '/v1/events', { key, body: minimalEvent() })).status, 200);
  const result = await server.stop();
  t.deepEqual(result, { code: 0, signal: null });
  t.true(existsSync(join(server.dataDir, 'start-snapshot')), 'the drain ran to its end');
});

test('while draining, each answer closes its kept-alive connection: a health check that reused one is told "draining" once, then must connect anew and is refused', async (t) => {
  const server = await startServer();
  const key = server.bootstrap.keys.live_secret.key;
  const body = JSON.stringify(minimalEvent());
  // `held` keeps the drain open with a body still arriving; `kept` is a load balancer's connection.
  const held = await openSocket(server.port);
  const kept = await openSocket(server.port);
  for (const socket of [held, kept]) {
    const health = readResponse(socket);
    socket.write(requestHead('GET', '/healthz', {}));
    const answer = await health;
    t.is(answer.status, 200);
    t.truthy(answer.headers['keep-alive'], 'before the drain, connections are kept');
  }
  held.write(requestHead('POST', '/v1/events', { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) }));
  held.write(body.slice(0, 10));
  const scored = readResponse(held);
  server.child.kill('SIGTERM');
  await waitFor(() => server.output().includes('"message":"draining"'), 'the server to log that it drains');

  const keptClosed = new Promise<void>((resolve) => kept.once('close', () => resolve()));
  const check = readResponse(kept);
  kept.write(requestHead('GET', '/healthz', {}));
  const answer = await check;
  t.is(answer.status, 200);
  t.is(JSON.parse(answer.body).data.status, 'draining');
  t.false('keep-alive' in answer.headers);
  await keptClosed;
  await t.throwsAsync(fetch(`${server.url}/healthz`), undefined, 'a new connection is refused');

  held.write(body.slice(10));
  const stored = await scored;
  t.is(stored.status, 200, stored.body);
  t.false('keep-alive' in stored.headers, 'the request in flight is answered, and its connection closed too');
  t.is((await server.stop()).code, 0);
});
