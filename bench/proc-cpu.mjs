// A process's CPU time from /proc, for the benches: every thread's schedstat (ns), or stat's clock ticks where there is none.
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // getconf CLK_TCK on Linux

/**
 * The process's CPU time so far in ms, summed over its threads' `schedstat` (nanoseconds): the
 * clock-tick figures of `/proc/<pid>/stat` (the fallback) quantise a 5000-operation round to 2 µs
 * per operation.
 */
export const cpuMs = (pid) => {
  try {
    let ns = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    return ns / 1e6;
  } catch {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  }
};
