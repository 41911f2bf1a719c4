// By hand (about 40 s): which allocations of the HTTP thread outlive the young generation, the
// objects that fill the old generation and make its mark-compacts (bench/README.md, after step
// 23). One server started with --inspect on loopback; the realistic mix offered open-loop at
// BENCH_RATE events/s (4000), 8 s of warm-up, then V8's sampling heap profiler over the inspector
// for BENCH_SECONDS (15), keeping the samples of objects that a scavenge did not collect
// (BENCH_ALL=1: every allocation). Prints bytes per request by the three innermost frames.
//   node --experimental-websocket dist/bench/http/promoted.bench.js   (Node 20; Node 22 needs no flag)
import { realisticLoad } from '../_helpers/open-loop.js';
import { startFraudScorer } from '../_helpers/processes.js';

const kRate = Number(process.env.BENCH_RATE ?? 4000);
const kSeconds = Number(process.env.BENCH_SECONDS ?? 15);
const kAll = process.env.BENCH_ALL === '1';
const kInspectorPort = Number(process.env.BENCH_INSPECTOR_PORT ?? 9339);
const kShown = 25;

interface ProfileNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly ProfileNode[];
}

// Node's WebSocket client (Node 22; Node 20 behind --experimental-websocket); @types/node 20 has no type for it.
interface SocketLike {
  addEventListener(type: 'open' | 'error' | 'message', listener: (event: { data?: unknown }) => void): void;
  send(data: string): void;
  close(): void;
}
const WebSocketClient = (globalThis as { WebSocket?: new (url: string) => SocketLike }).WebSocket;

/** A Chrome DevTools Protocol session on the server's main thread. */
async function inspectorSession(): Promise<{ send: (method: string, params?: object) => Promise<any>; close: () => void }> {
  const targets = (await (await fetch(`http://127.0.0.1:${kInspectorPort}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  const socket = new WebSocketClient!(targets[0]!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve);
    socket.addEventListener('error', reject);
  });
  let nextId = 1;
  const waiting = new Map<number, (result: unknown) => void>();
  socket.addEventListener('message', (message) => {
    const answer = JSON.parse(String(message.data)) as { id?: number; result?: unknown };
    if (answer.id !== undefined) waiting.get(answer.id)?.(answer.result);
  });
  return {
    send: (method, params = {}) => new Promise((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    }),
    close: () => socket.close(),
  };
}

function bytesByFrames(head: ProfileNode): Map<string, number> {
  const bytes = new Map<string, number>();
  const walk = (node: ProfileNode, stack: string[]): void => {
    const frame = node.callFrame;
    const here = [...stack, `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^file:\/\/.*?\/dist\//, 'dist/')}:${frame.lineNumber + 1}`];
    if (node.selfSize > 0) {
      const key = here.slice(-3).reverse().join(' < ');
      bytes.set(key, (bytes.get(key) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, here);
  };
  walk(head, []);
  return bytes;
}

async function main(): Promise<void> {
  if (WebSocketClient === undefined) throw new Error('no WebSocket: run with --experimental-websocket on Node 20');
  const server = await startFraudScorer({}, [`--inspect=127.0.0.1:${kInspectorPort}`]);
  try {
    const load = realisticLoad(server, kRate);
    await load(8);
    const session = await inspectorSession();
    await session.send('HeapProfiler.enable');
    await session.send('HeapProfiler.startSampling', { samplingInterval: 8192, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: kAll });
    const result = await load(kSeconds);
    const { profile } = (await session.send('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
    session.close();
    const requests = result.status.length;
    const bytes = bytesByFrames(profile.head);
    const total = [...bytes.values()].reduce((sum, value) => sum + value, 0);
    console.log(`${kAll ? 'allocated' : 'outlived the young generation'}: ${(total / requests).toFixed(0)} B per request (${requests} requests at ${kRate}/s)`);
    for (const [frames, size] of [...bytes].sort((a, b) => b[1] - a[1]).slice(0, kShown)) {
      console.log(`${(size / requests).toFixed(0).padStart(7)} B  ${frames}`);
    }
  } finally {
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
