// The scavenges of a server's HTTP thread, from its `--trace-gc-nvp` output: one line per
// collection, `[pid:isolate] <ms> ms: pause=… gc=s … new_space_survived=… promoted=…`. Every thread
// of the process writes there; the HTTP thread is the isolate that spent the most time scavenging.

export interface ScavengeSummary {
  readonly perSecond: number;
  /** Mean pause of the thread, ms. */
  readonly pauseMs: number;
  /** Mean bytes copied within the young generation (alive once), and moved to the old one. */
  readonly survivedBytes: number;
  readonly promotedBytes: number;
  /** Bytes moved to the old generation per second. */
  readonly promotedPerSecond: number;
  readonly markCompacts: number;
}

/** Over the scavenges after the first `skipShare` of them (start and warm-up). */
export function summariseScavenges(trace: string, skipShare = 1 / 3): ScavengeSummary | null {
  const byIsolate = new Map<string, Array<{ at: number; fields: Map<string, string> }>>();
  for (const line of trace.split('\n')) {
    const match = /^\[\d+:(0x[0-9a-f]+)\]\s+(\d+) ms: (.*)$/.exec(line);
    if (match === null) continue;
    const fields = new Map(match[3]!.split(' ').filter((part) => part.includes('=')).map((part) => part.split('=', 2) as [string, string]));
    const list = byIsolate.get(match[1]!) ?? [];
    list.push({ at: Number(match[2]), fields });
    byIsolate.set(match[1]!, list);
  }
  const pauses = (list: Array<{ fields: Map<string, string> }>): number =>
    list.reduce((sum, entry) => sum + (entry.fields.get('gc') === 's' ? Number(entry.fields.get('pause')) : 0), 0);
  const http = [...byIsolate.values()].sort((a, b) => pauses(b) - pauses(a))[0];
  if (http === undefined) return null;
  const scavenges = http.filter((entry) => entry.fields.get('gc') === 's');
  const measured = scavenges.slice(Math.floor(scavenges.length * skipShare));
  if (measured.length < 2) return null;
  const mean = (field: string): number => measured.reduce((sum, entry) => sum + Number(entry.fields.get(field)), 0) / measured.length;
  const seconds = (measured.at(-1)!.at - measured[0]!.at) / 1000;
  const from = measured[0]!.at;
  return {
    perSecond: measured.length / seconds,
    pauseMs: mean('pause'),
    survivedBytes: mean('new_space_survived'),
    promotedBytes: mean('promoted'),
    promotedPerSecond: (mean('promoted') * measured.length) / seconds,
    markCompacts: http.filter((entry) => entry.fields.get('gc') === 'mc' && entry.at >= from).length,
  };
}
