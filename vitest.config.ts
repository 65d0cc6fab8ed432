// Test runner settings: one config for unit, in-process and end-to-end suites.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // End-to-end suites spawn real processes; keep the 2-core machines from thrashing.
    maxWorkers: 2,
  },
});
