import { App, us_socket_local_port } from 'uWebSockets.js';
const app = App();
app.any('/*', (res, req) => {
  const m = req.getCaseSensitiveMethod(); const cl = req.getHeader('content-length'); const te = req.getHeader('transfer-encoding');
  res.onAborted(() => { console.log('aborted'); res.aborted = true; });
  let n = 0, calls = 0;
  res.onData((chunk, last) => { calls++; n += chunk.byteLength; if (last) { if (!res.aborted) res.cork(() => res.end(JSON.stringify({m, cl, te, n, calls}))); } });
});
app.listen('127.0.0.1', 0, (ls) => { console.log('port', us_socket_local_port(ls)); });
