// Background analysis (backtests, rule statistics) must not slow live scoring (issue 14: at most
// 10 % less POST /v1/events throughput while a backtest runs). Its threads lower their own
// scheduling priority to the lowest (nice 19): when the CPU is idle they run at full speed, when
// scoring wants it they get what is left (Linux CFS gives a nice-19 thread about 1.5 % of a CPU
// against a nice-0 one). On Linux, setpriority(2) on a thread id applies to that thread only;
// the id comes from /proc/thread-self. Elsewhere nothing changes.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

export const kBackgroundNice = 19;

/** Lowers the calling thread's priority; returns whether it could. */
export function lowerThreadPriority(): boolean {
  let link: string;
  try {
    link = readlinkSync('/proc/thread-self'); // "<pid>/task/<tid>"
  } catch {
    return false;
  }
  const tid = Number(link.slice(link.lastIndexOf('/') + 1));
  if (!Number.isInteger(tid)) return false;
  try {
    setPriority(tid, kBackgroundNice);
    return true;
  } catch {
    return false;
  }
}
