// Bench-only ceiling: the least a stdio relay can do. Spawns the upstream given as arguments, and per message
// parses, rewrites the URI (strips `bench+` on the way up, adds it to results on the way down) and writes it on.
import { spawn } from 'node:child_process';
import { jsonLines } from './lines.mjs';

const PREFIX = 'bench+';
const [command, ...args] = process.argv.slice(2);
const env = { ...process.env };
delete env.NODE_OPTIONS; // the bench's GC hook is for this process, not the upstream
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'], env });

/** Calls `each` for every complete line of a stream, and writes what it returns, one write per chunk. */
const relay = (input, output, each) => {
  let out = '';
  jsonLines(
    input,
    (message) => (out += `${JSON.stringify(each(message))}\n`),
    () => {
      output.write(out);
      out = '';
    },
  );
};
const prefixed = (items) => {
  if (Array.isArray(items)) for (const item of items) if (typeof item?.uri === 'string') item.uri = PREFIX + item.uri;
};

relay(process.stdin, child.stdin, (m) => {
  const uri = m.params?.uri;
  if (typeof uri === 'string' && uri.startsWith(PREFIX)) m.params.uri = uri.slice(PREFIX.length);
  return m;
});
relay(child.stdout, process.stdout, (m) => {
  prefixed(m.result?.contents);
  prefixed(m.result?.resources);
  if (m.method === 'notifications/resources/updated' && typeof m.params?.uri === 'string') m.params.uri = PREFIX + m.params.uri;
  return m;
});
process.stdin.on('end', () => child.stdin.end());
child.on('exit', (code) => process.exit(code ?? 0));
process.on('SIGTERM', () => child.kill('SIGTERM'));
