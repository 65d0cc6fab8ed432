// Bench-only preload (node --import) for bench/idle-sessions.mjs: SIGUSR2 writes process.memoryUsage() and the V8 heap spaces,
// SIGURG (with --expose-gc) collects first, SIGWINCH writes a heap snapshot; all into $MCP_FEDERATE_PROBE_DIR.
import { writeFileSync } from 'node:fs';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';

const dir = process.env.MCP_FEDERATE_PROBE_DIR;
if (dir) {
  let seq = 0;
  process.on('SIGUSR2', () => {
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }]));
    writeFileSync(`${dir}/mem-${process.pid}.json`, JSON.stringify({ ...process.memoryUsage(), spaces }));
  });
  process.on('SIGURG', () => {
    globalThis.gc?.();
    writeFileSync(`${dir}/gc-${process.pid}.json`, JSON.stringify(process.memoryUsage()));
  });
  process.on('SIGWINCH', () => writeFileSync(`${dir}/snap-${process.pid}`, writeHeapSnapshot(`${dir}/snap-${process.pid}-${++seq}.heapsnapshot`)));
}
