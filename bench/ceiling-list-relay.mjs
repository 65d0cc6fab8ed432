// Bench-only ceiling for merged lists: the least a JSON relay can do. Spawns `count` copies of the upstream given as
// arguments; serves resources/list as pages of 1000 items merged in order, parsing each upstream page, prefixing each
// uri and serialising each downstream page, with the next two upstreams' lists read ahead (as the gateway does).
import { spawn } from 'node:child_process';
import { jsonLines } from './lines.mjs';

const PAGE = 1000; // the gateway's default list.maxItemsPerPage
const [countArg, command, ...args] = process.argv.slice(2);
const count = Number(countArg);
const env = { ...process.env };
delete env.NODE_OPTIONS; // the bench's GC hook is for this process, not the upstreams

const upstreams = Array.from({ length: count }, (_, k) => {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'], env });
  const pending = new Map();
  let nextId = 1;
  jsonLines(child.stdout, (m) => {
    const resolve = pending.get(m.id);
    pending.delete(m.id);
    resolve?.(m);
  });
  const request = (method, params) =>
    new Promise((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  const ready = request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ceiling-list-relay', version: '1' } }).then(() =>
    child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n'),
  );
  /** The upstream's whole list, page by page, each item's uri prefixed with the upstream's namespace. */
  const listAll = async () => {
    const items = [];
    let cursor;
    do {
      const answer = await request('resources/list', cursor === undefined ? {} : { cursor });
      for (const item of answer.result.resources) {
        item.uri = `u${k}+${item.uri}`;
        items.push(item);
      }
      cursor = answer.result.nextCursor;
    } while (cursor !== undefined);
    return items;
  };
  return { child, ready, listAll };
});
await Promise.all(upstreams.map((u) => u.ready));

const ahead = new Map();
const listOf = (k) => {
  for (let d = k; d < Math.min(count, k + 3); d++) if (!ahead.has(d)) ahead.set(d, upstreams[d].listAll());
  return ahead.get(k);
};
/** One downstream page from upstream `k`, item `offset` on: PAGE items, across upstreams, and the cursor after them. */
const page = async (k, offset) => {
  if (k === 0 && offset === 0) ahead.clear(); // a new walk
  const items = [];
  while (k < count && items.length < PAGE) {
    const all = await listOf(k);
    const take = all.slice(offset, offset + PAGE - items.length);
    for (const item of take) items.push(item);
    offset += take.length;
    if (offset >= all.length) {
      ahead.delete(k);
      k++;
      offset = 0;
    }
  }
  return { resources: items, ...(k < count ? { nextCursor: `${k}:${offset}` } : {}) };
};

const answer = (id, result) => process.stdout.write(`${JSON.stringify({ result, jsonrpc: '2.0', id })}\n`);
jsonLines(process.stdin, (m) => {
  if (m.id === undefined) return;
  if (m.method === 'initialize')
    return answer(m.id, {
      protocolVersion: m.params.protocolVersion,
      capabilities: { resources: {} },
      serverInfo: { name: 'ceiling-list-relay', version: '1' },
    });
  if (m.method !== 'resources/list') return answer(m.id, {});
  const [k, offset] = (m.params?.cursor ?? '0:0').split(':').map(Number);
  void page(k, offset).then((result) => answer(m.id, result));
});
process.stdin.on('end', () => {
  for (const u of upstreams) u.child.stdin.end();
  process.exit(0);
});
