// The test side of FAULT_INJECTION=hold_points (src/shared/fault-latch.ts): wait until the server
// holds at a named point, let it go on, wait for a mark it passed; and one /metrics value.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor, type TestServer } from './server.js';

export function heldAt(server: TestServer, name: string): Promise<boolean> {
  return waitFor(() => existsSync(join(server.dataDir, `fault-held-${name}`)), `the server to hold at ${name}`);
}

export function release(server: TestServer, name: string): void {
  writeFileSync(join(server.dataDir, `fault-release-${name}`), '');
}

export async function reached(server: TestServer, name: string): Promise<void> {
  const file = join(server.dataDir, `fault-reached-${name}`);
  await waitFor(() => existsSync(file), `the server to reach ${name}`);
  rmSync(file);
}

/** A metric from /metrics, without labels or with exactly these (NaN when absent). */
export async function metric(server: TestServer, name: string, labels?: Readonly<Record<string, string>>): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const series = labels === undefined ? name : `${name}{${Object.entries(labels).map(([label, value]) => `${label}="${value}"`).join(',')}}`;
  const match = new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\d+)`, 'm').exec(text);
  return match === null ? Number.NaN : Number(match[1]);
}
