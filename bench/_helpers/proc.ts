// CPU time, bytes written and sleeps (voluntary context switches) per thread of a process, read
// from /proc (Linux), and its resident set. Threads are told apart by the roles the server
// announces (src/shared/threads.ts); a thread that announced nothing is `other` (V8's platform
// workers: GC and JIT; libuv's pool), except the main thread of a process that announces nothing
// (the bare handler), which is `http`.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface ThreadTimes {
  /** utime + stime, in clock ticks. */
  readonly ticks: number;
  /** Bytes the thread passed to write(2)/pwrite(2) (`wchar` of /proc/<pid>/task/<tid>/io). */
  readonly wchar: number;
  /**
   * Times the thread gave up its core to wait (`voluntary_ctxt_switches` of
   * /proc/<pid>/task/<tid>/status): each is followed by a wake-up, which costs the kernel and
   * the thread's caches more than most steps of an event.
   */
  readonly sleeps: number;
}

export interface ProcessSample {
  readonly threads: ReadonlyMap<number, ThreadTimes>;
  /** The whole process's utime + stime (includes threads that have exited). */
  readonly ticks: number;
}

let ticksPerSecond: number | undefined;

/** `getconf CLK_TCK` (100 on Linux x86-64). */
export function clockTicksPerSecond(): number {
  ticksPerSecond ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
  return ticksPerSecond;
}

/** utime + stime of a stat line: fields 14 and 15, counted after the parenthesised command. */
function statTicks(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return fallback; // the thread exited between readdir and read
  }
}

export function sampleProcess(pid: number): ProcessSample {
  const threads = new Map<number, ThreadTimes>();
  for (const entry of readdirSync(`/proc/${pid}/task`)) {
    const stat = readOr(`/proc/${pid}/task/${entry}/stat`, '');
    if (stat === '') continue;
    const wchar = /^wchar: (\d+)$/m.exec(readOr(`/proc/${pid}/task/${entry}/io`, ''));
    const sleeps = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readOr(`/proc/${pid}/task/${entry}/status`, ''));
    threads.set(Number(entry), { ticks: statTicks(stat), wchar: wchar ? Number(wchar[1]) : 0, sleeps: sleeps ? Number(sleeps[1]) : 0 });
  }
  return { threads, ticks: statTicks(readFileSync(`/proc/${pid}/stat`, 'utf8')) };
}

export interface RoleUsage {
  /** CPU time in microseconds. */
  readonly cpuUs: number;
  readonly wchar: number;
  /** Voluntary context switches (ThreadTimes.sleeps). */
  readonly sleeps: number;
}

/**
 * CPU and bytes written between two samples, summed per role. CPU of threads that exited in
 * between (the process's total minus its live threads') is reported as `exited` when it exceeds a
 * tick per thread (each thread's figure is rounded to a tick on its own).
 */
export function usageByRole(pid: number, before: ProcessSample, after: ProcessSample, roles: ReadonlyMap<number, string>): Map<string, RoleUsage> {
  const usPerTick = 1e6 / clockTicksPerSecond();
  const usage = new Map<string, RoleUsage>();
  const add = (role: string, ticks: number, wchar: number, sleeps: number): void => {
    const sum = usage.get(role) ?? { cpuUs: 0, wchar: 0, sleeps: 0 };
    usage.set(role, { cpuUs: sum.cpuUs + ticks * usPerTick, wchar: sum.wchar + wchar, sleeps: sum.sleeps + sleeps });
  };
  let threadTicks = 0;
  for (const [tid, end] of after.threads) {
    const start = before.threads.get(tid) ?? { ticks: 0, wchar: 0, sleeps: 0 };
    threadTicks += end.ticks - start.ticks;
    add(roles.get(tid) ?? (tid === pid ? 'http' : 'other'), end.ticks - start.ticks, end.wchar - start.wchar, end.sleeps - start.sleeps);
  }
  const exited = after.ticks - before.ticks - threadTicks;
  if (exited > after.threads.size) add('exited', exited, 0, 0);
  return usage;
}

/** The machine's CPU time from /proc/stat's first line, in clock ticks: idle (iowait included) and in all. */
export interface MachineSample {
  readonly idle: number;
  readonly total: number;
}

export function sampleMachine(): MachineSample {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  return { idle: ticks[3]! + ticks[4]!, total: ticks.reduce((sum, value) => sum + value, 0) };
}

/** Cores of the machine left idle on average between two samples, of `cores` (os.availableParallelism()). */
export function idleCores(before: MachineSample, after: MachineSample, cores: number): number {
  const total = after.total - before.total;
  return total > 0 ? (cores * (after.idle - before.idle)) / total : NaN;
}

/** Resident set size now, and its peak (VmHWM), in bytes. */
export function residentBytes(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}
