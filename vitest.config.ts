// Test runner settings: three projects (unit, in-process, end-to-end) sharing one set of defaults.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // End-to-end suites spawn real processes; keep the 2-core machines from thrashing.
    maxWorkers: 2,
    // Each project names its own folder (an `include` here would be merged into every project's).
    // `npm run test:fast` runs unit and inprocess (no build, no processes); `npm run test:e2e` the built CLI.
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { extends: true, test: { name: 'inprocess', include: ['test/inprocess/**/*.test.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'] } },
    ],
  },
});
