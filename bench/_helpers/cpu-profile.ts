// Reading the .cpuprofile files `node --cpu-prof` writes, one per thread: self time per function,
// and which of our threads a file is, told by the script it runs (Node names the files by its own
// thread number, not by the OS thread id).
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const kThreadScripts: ReadonlyArray<readonly [string, RegExp]> = [
  ['writer', /\/store\/writer-thread\.js$/],
  ['checkpointer', /\/store\/checkpoint-worker\.js$/],
  ['compile', /\/rulesets\/compile-worker\.js$/],
  ['rules', /\/pool\/worker\.js$/],
  // The start's loads of the event log on a thread of their own (after 4f6adb8).
  ['start loads', /\/scoring\/start-loads-worker\.js$/],
  ['http', /\/src\/main\.js$/],
];

/**
 * Samples that are waiting, not working: the profiler samples the JavaScript stack whatever the
 * thread does, so a piscina worker blocked in Atomics.wait between tasks shows as busy in
 * atomicsWaitLoop. (A native call that sleeps, such as a checkpoint in SQLite's busy handler,
 * cannot be told apart: perf's on-CPU figures are the reference.)
 */
const kWaiting = new Set(['(idle)', 'atomicsWaitLoop']);

export interface ProfileSummary {
  readonly role: string;
  /** Sampled time, µs, waiting excluded. */
  readonly busyUs: number;
  /** "function file:line" → self time, µs, largest first. */
  readonly functions: ReadonlyArray<readonly [string, number]>;
}

export function summariseCpuProfile(path: string): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const urls = new Set(profile.nodes.map((node) => node.callFrame.url));
  const role = kThreadScripts.find(([, script]) => [...urls].some((url) => script.test(url)))?.[0] ?? 'other';
  const self = new Map<string, number>();
  let busyUs = 0;
  profile.samples.forEach((id, i) => {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (kWaiting.has(functionName)) return;
    const where = url === '' ? '' : ` ${url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${lineNumber + 1}`;
    const key = `${functionName || '(anonymous)'}${where}`;
    const delta = profile.timeDeltas[i] ?? 0;
    self.set(key, (self.get(key) ?? 0) + delta);
    busyUs += delta;
  });
  return { role, busyUs, functions: [...self].sort((a, b) => b[1] - a[1]) };
}

/**
 * Sampled time (µs) under each of `phases`, a phase being a function (name and script) and all it
 * calls: a sample counts for the innermost phase on its stack, else for '(other)' — or for the
 * leaf's own name when that is V8's '(garbage collector)' or '(program)'. Waiting is left out.
 */
export function phaseTimes(path: string, phases: ReadonlyArray<readonly [string, string, RegExp]>): Map<string, number> {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile & { nodes: ReadonlyArray<ProfileNode & { readonly children?: readonly number[] }> };
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const phaseOfNode = new Map<number, string>();
  const phaseOf = (id: number): string => {
    let phase = phaseOfNode.get(id);
    if (phase !== undefined) return phase;
    const { functionName, url } = byId.get(id)!.callFrame;
    const own = phases.find(([, name, script]) => name === functionName && script.test(url));
    const parent = parentOf.get(id);
    phase = own?.[0] ?? (parent === undefined ? '(other)' : phaseOf(parent));
    phaseOfNode.set(id, phase);
    return phase;
  };
  const times = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const { functionName } = byId.get(id)!.callFrame;
    if (kWaiting.has(functionName)) return;
    const phase = functionName === '(garbage collector)' || functionName === '(program)' ? functionName : phaseOf(id);
    times.set(phase, (times.get(phase) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return times;
}
