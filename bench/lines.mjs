// Bench-only: the JSON lines of a stream, as the ceiling relays read them (no bounds: the bench's own processes only).

/**
 * Calls `each` with every complete line of `input`, parsed, in order; `done` (when given) once per
 * chunk, after its lines (a relay writes its output there, one write per chunk).
 */
export function jsonLines(input, each, done) {
  let rest = '';
  input.setEncoding('utf8');
  input.on('data', (chunk) => {
    const text = rest + chunk;
    const end = text.lastIndexOf('\n');
    if (end === -1) {
      rest = text;
      return;
    }
    rest = text.slice(end + 1);
    for (const line of text.slice(0, end).split('\n')) if (line) each(JSON.parse(line));
    done?.();
  });
}
