// Bundles the built CLI (dist/cli.js, after tsc) into a few files, so that starting it loads about 25 modules instead of 340.
// `npm run build` runs it; the library entry (dist/index.js) and the other dist/ modules stay tsc's.
// Node 20's ES module loader costs a resolve, a read, a compile and a link per file: with 10 stdio
// upstreams the gateway spent ~590 ms of CPU to its first list, ~380 ms bundled (see docs/startup-memory.md).
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const DIST = fileURLToPath(new URL('../dist/', import.meta.url));

/**
 * Left to Node's loader: builtins; pino (its transports resolve worker files by path) and pino-pretty;
 * @opentelemetry/api (one copy with the OpenTelemetry SDK an operator preloads, which registers
 * through it); redis and prom-client (loaded only when configured).
 */
const EXTERNAL = [/^node:/, /^pino(-pretty)?$/, /^@opentelemetry\/api$/, /^redis$/, /^prom-client$/];

const bundle = await rolldown({ input: `${DIST}cli.js`, platform: 'node', external: EXTERNAL, logLevel: 'warn' });
// Flat in dist/: version.ts reads ../package.json relative to its own file.
await bundle.write({ dir: DIST, format: 'esm', entryFileNames: 'cli.js', chunkFileNames: 'cli-[name]-[hash].js', sourcemap: true });
await bundle.close();
rmSync(`${DIST}cli.d.ts`, { force: true }); // the bin exports nothing
