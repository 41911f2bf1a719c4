// Raw HTTP/1.1 over a TCP socket, for what fetch cannot do: send a body slowly, stop mid-body,
// send bytes that are not valid UTF-8 or JSON framing we choose ourselves.
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Reads one response (Content-Length framed) from the socket. */
export function readResponse(socket: Socket): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = buffer.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (buffer.length < end + 4 + length) return;
      socket.off('data', onData);
      resolve({ status: Number(head[0]!.split(' ')[1]), headers, body: buffer.subarray(end + 4, end + 4 + length).toString('utf8') });
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`socket closed before a full response; got ${JSON.stringify(buffer.toString('latin1'))}`)));
  });
}

export function requestHead(method: string, path: string, headers: Record<string, string>): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * Parses every complete response in `bytes` (Content-Length framed), in order. `methods[i]` is
 * the method of the request answered i-th: the answer to HEAD has a Content-Length but no body.
 */
export function parseResponses(bytes: Buffer, methods: readonly string[] = []): RawResponse[] {
  const responses: RawResponse[] = [];
  let offset = 0;
  for (;;) {
    const end = bytes.indexOf('\r\n\r\n', offset);
    if (end === -1) return responses;
    const head = bytes.subarray(offset, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const status = Number(head[0]!.split(' ')[1]);
    const length = status < 200 || methods[responses.length] === 'HEAD' ? 0 : Number(headers['content-length'] ?? 0);
    if (bytes.length < end + 4 + length) return responses;
    responses.push({ status, headers, body: bytes.subarray(end + 4, end + 4 + length).toString('utf8') });
    offset = end + 4 + length;
  }
}

/**
 * Writes `data` and collects everything the server sends until it closes the connection (or, with
 * `untilResponses`, until that many responses arrived). Resolves with the bytes and whether the
 * server closed.
 */
export async function exchangeRaw(port: number, data: string | Buffer, untilResponses?: number, methods: readonly string[] = []): Promise<{ bytes: Buffer; closed: boolean }> {
  const socket = await openSocket(port);
  return new Promise((resolve, reject) => {
    let bytes = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      bytes = Buffer.concat([bytes, chunk]);
      if (untilResponses !== undefined && parseResponses(bytes, methods).length >= untilResponses) {
        socket.destroy();
        resolve({ bytes, closed: false });
      }
    });
    socket.once('error', reject);
    socket.once('close', () => resolve({ bytes, closed: true }));
    socket.write(data);
  });
}
