// Bench-only preload (NODE_OPTIONS=--import): sums the process's GC pauses and writes them to a file on SIGUSR2.
// Enabled by MCP_FEDERATE_BENCH_GC_DIR; the file is <dir>/gc-<pid>.json: { seq, ms, count }.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';

const dir = process.env.MCP_FEDERATE_BENCH_GC_DIR;
if (dir) {
  let ms = 0;
  let count = 0;
  let seq = 0;
  // One entry per GC pause on the main thread (scavenges and mark-compacts alike); its duration is the pause.
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      ms += entry.duration;
      count++;
    }
  }).observe({ entryTypes: ['gc'] });
  process.on('SIGUSR2', () => writeFileSync(join(dir, `gc-${process.pid}.json`), JSON.stringify({ seq: ++seq, ms, count })));
}
