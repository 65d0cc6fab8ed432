// Tool and prompt names as clients see them: `<id>__<name>`, readable short forms when too long, the prefix of each server id. Pure.
import { createHash } from 'node:crypto';

/** What clients (Claude Code, Copilot, model APIs) accept as a tool name. */
export const CLIENT_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Between a server's prefix and the upstream's name. A prefix never holds `_`, so the first `__` is always this one. */
export const NAME_DELIMITER = '__';
/** Hex characters of the hash in a short form. */
const HASH_CHARS = 8;
/** Hex characters of the hash in a shortened prefix. */
const PREFIX_HASH_CHARS = 4;
const NAME_CHARS = /^[A-Za-z0-9_-]+$/;
const NOT_NAME_CHAR = /[^A-Za-z0-9_-]/g;

const hex = (text: string, chars: number): string => createHash('sha256').update(text, 'utf8').digest('hex').slice(0, chars);

/**
 * The prefix of server `id` in client names: the id with `.` turned into `-`, shortened (its head
 * plus a 4-hex hash of the id) when it would leave fewer than 10 characters of `maxLength` for the
 * upstream's name. Ids match `^[a-z0-9][a-z0-9.-]*$`, so a prefix holds neither `_` nor `.`.
 *
 * @example namePrefixOf('docs.v2', 64) // 'docs-v2'
 */
export function namePrefixOf(id: string, maxLength: number): string {
  const mapped = id.replace(/\./g, '-');
  const room = maxLength - NAME_DELIMITER.length - HASH_CHARS - 2;
  if (mapped.length <= room) return mapped;
  const head = Math.max(1, room - PREFIX_HASH_CHARS - 1);
  return `${mapped.slice(0, head)}-${hex(id, PREFIX_HASH_CHARS)}`;
}

/** Pairs of server ids whose name prefixes are the same (`a.b` and `a-b`): a config error. */
export function prefixCollisions(ids: Iterable<string>, maxLength: number): [string, string][] {
  const seen = new Map<string, string>();
  const out: [string, string][] = [];
  for (const id of ids) {
    const prefix = namePrefixOf(id, maxLength);
    const other = seen.get(prefix);
    if (other !== undefined) out.push([other, id]);
    else seen.set(prefix, id);
  }
  return out;
}

/** Client names of one server's tools or prompts, and the server a client's name routes to. */
export interface NameCodec {
  /** The server that keeps its names (`prefix: false`), if any. */
  readonly unprefixed: string | undefined;
  /**
   * The name clients see for `name` of `server`: `<prefix>__<name>` when that fits `maxLength` and
   * `name` is made of `[A-Za-z0-9_-]` only; else a short form, `<prefix>__<head>_<hash>`, with the
   * name's characters outside that set turned into `-` and a hash of (server, name), so two names
   * never share one. The unprefixed server's names are kept as they are.
   */
  encode(server: string, name: string): string;
  /**
   * The server a client's name routes to: the one whose prefix comes before the first `__`; else
   * the unprefixed server; else undefined. Which upstream name it stands for is looked up in the
   * server's list (short forms are not reversible by parsing).
   */
  serverOf(clientName: string): string | undefined;
}

/**
 * A codec for `ids` (the servers' ids), with names at most `maxLength` characters long whenever
 * the upstream's own name fits `^[A-Za-z0-9_-]{1,64}$`.
 *
 * @example
 * const names = createNameCodec(['github', 'docs.v2'], undefined, 64);
 * names.encode('docs.v2', 'search'); // 'docs-v2__search'
 * names.serverOf('docs-v2__search'); // 'docs.v2'
 */
export function createNameCodec(ids: Iterable<string>, unprefixed: string | undefined, maxLength: number): NameCodec {
  const prefixes = new Map<string, string>();
  const byPrefix = new Map<string, string>();
  for (const id of ids) {
    const prefix = namePrefixOf(id, maxLength);
    prefixes.set(id, prefix);
    if (!byPrefix.has(prefix)) byPrefix.set(prefix, id);
  }
  return {
    unprefixed,
    encode(server, name) {
      if (server === unprefixed) return name;
      const prefix = prefixes.get(server) ?? namePrefixOf(server, maxLength);
      const full = `${prefix}${NAME_DELIMITER}${name}`;
      if (full.length <= maxLength && NAME_CHARS.test(name)) return full;
      const hash = hex(`${server}\u0000${name}`, HASH_CHARS);
      const room = maxLength - prefix.length - NAME_DELIMITER.length - HASH_CHARS - 1;
      const head = room > 0 ? name.replace(NOT_NAME_CHAR, '-').slice(0, room) : '';
      return head ? `${prefix}${NAME_DELIMITER}${head}_${hash}` : `${prefix}${NAME_DELIMITER}${hash}`;
    },
    serverOf(clientName) {
      const at = clientName.indexOf(NAME_DELIMITER);
      const server = at > 0 ? byPrefix.get(clientName.slice(0, at)) : undefined;
      return server ?? unprefixed;
    },
  };
}
