// uWebSockets.js reads its header limit from the environment once, when its native module loads:
// this module is imported before it (src/http/server.ts). Requests whose headers exceed the limit
// are answered 431 by the library itself, in plain HTML without our envelope or x-request-id; its
// default of 4 KiB is easy to reach with cookies or forwarded headers in front of a payments
// backend, so the server allows 16 KiB (as Node's own HTTP server does). An operator's own value
// in the environment is kept (docs/operations.md, "HTTP edge cases"); an empty one counts as unset,
// as every setting's does, and loadConfig refuses one that is not a number of bytes in range.
export const kDefaultMaxHeaderBytes = 16 * 1024;

process.env.UWS_HTTP_MAX_HEADERS_SIZE ||= String(kDefaultMaxHeaderBytes);
