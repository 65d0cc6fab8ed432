// Bench-only preload (--import), for bench/idle-after.mjs: on SIGUSR2 writes this process's GC totals and new-space size to $IDLE_GC_DIR/gc-<pid>.json.
import { writeFileSync } from 'node:fs';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';

const dir = process.env.IDLE_GC_DIR;
if (dir) {
  const totals = { seq: 0, ms: 0, minor: 0, major: 0 };
  // One entry per GC pause on the main thread; its kind tells a scavenge from a mark-compact.
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      totals.ms += entry.duration;
      const kind = entry.detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) totals.minor++;
      else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) totals.major++;
    }
  }).observe({ entryTypes: ['gc'] });
  process.on('SIGUSR2', () => {
    totals.seq++;
    const newSpace = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    writeFileSync(`${dir}/gc-${process.pid}.json`, JSON.stringify({ ...totals, newSpace: newSpace?.space_size ?? 0 }));
  });
}
