// The physical limit of the HTTP front end on this machine: a bare uWebSockets.js handler doing the
// same JSON work as an API route (read the body, parse it, answer an envelope), with nothing else.
// Run by the HTTP benchmarks in its own process.
import { randomUUID } from 'node:crypto';
import { App, us_socket_local_port } from 'uWebSockets.js';

const app = App();
app.any('/*', (res, req) => {
  const requestId = req.getHeader('x-request-id') || randomUUID();
  let aborted = false;
  res.onAborted(() => (aborted = true));
  const chunks: Buffer[] = [];
  res.onData((chunk, isLast) => {
    chunks.push(Buffer.from(chunk.slice(0)));
    if (!isLast || aborted) return;
    const text = Buffer.concat(chunks).toString('utf8');
    let data: unknown = null;
    try {
      data = text === '' ? {} : JSON.parse(text);
    } catch {
      data = null;
    }
    const body = `{"status":1,"data":${JSON.stringify({ received: data !== null, decision: 'allow' })},"errors":[]}`;
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').writeHeader('x-request-id', requestId).end(body);
    });
  });
});
app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) process.exit(1);
  process.stdout.write(`bare uws on ${us_socket_local_port(socket)}\n`);
});
process.once('SIGTERM', () => process.exit(0));
