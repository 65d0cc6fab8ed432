// A bounded record, per server, of the URIs upstreams gave out that a client could not have spelled canonically.
import { LRUCache } from 'lru-cache';
import type { UriCodec } from './uri.js';

/** Options of {@link IssuedUris}. */
export interface IssuedUrisOptions {
  /**
   * Which URIs are worth recording: those a client's copy would not reach the upstream unchanged
   * (not canonical, or refused). Default: every URI.
   */
  keep?: (uri: string) => boolean;
  /** Most characters of URIs recorded per server (least recently issued go first). Default: 1,000,000. */
  maxCharsPerServer?: number;
  /** Most URIs recorded per server. Default: 10,000. */
  maxPerServer?: number;
}

/**
 * The URIs (and templates) each upstream gave out itself, in a list, a template listing, a read's
 * `contents[].uri` or an `updated` notification, exactly as it spelled them, so that a client that
 * sends one back is forwarded that very string even where a client's own spelling would be
 * refused or rewritten. Bounded per server in entries and characters (least recently issued
 * dropped first); a server's record is forgotten when it reconnects (its URIs may have changed).
 * Only URIs the `keep` predicate picks are held: a canonical URI needs no record.
 */
export class IssuedUris {
  private readonly servers = new Map<string, LRUCache<string, true>>();
  private readonly keep: (uri: string) => boolean;
  private readonly maxChars: number;
  private readonly maxEntries: number;

  constructor(options: IssuedUrisOptions = {}) {
    this.keep = options.keep ?? (() => true);
    this.maxChars = options.maxCharsPerServer ?? 1_000_000;
    this.maxEntries = options.maxPerServer ?? 10_000;
  }

  /** Records that `server` gave out `uri` (when it is worth recording). */
  record(server: string, uri: string): void {
    if (!this.keep(uri)) return;
    let lru = this.servers.get(server);
    if (!lru) {
      lru = new LRUCache<string, true>({ max: this.maxEntries, maxSize: this.maxChars, sizeCalculation: (_v, key) => Math.max(1, key.length) });
      this.servers.set(server, lru);
    }
    lru.set(uri, true);
  }

  /** True when `server` gave out exactly `uri` (and it is still recorded). */
  has(server: string, uri: string): boolean {
    return this.servers.get(server)?.has(uri) ?? false;
  }

  /** Forgets what `server` gave out (it reconnected, or went away). */
  forget(server: string): void {
    this.servers.get(server)?.clear();
    this.servers.delete(server);
  }

  /** URIs recorded for `server`. */
  sizeOf(server: string): number {
    return this.servers.get(server)?.size ?? 0;
  }

  /**
   * `codec` with every URI it encodes for a client recorded first: every path that shows a client
   * a URI encodes with the codec, so what is shown is exactly what is recorded.
   */
  recording(codec: UriCodec): UriCodec {
    return {
      ids: codec.ids,
      unprefixed: codec.unprefixed,
      encode: (server, uri) => {
        this.record(server, uri);
        return codec.encode(server, uri);
      },
      decode: (federated) => codec.decode(federated),
    };
  }

  /** Drops every record. Idempotent. */
  close(): void {
    for (const lru of this.servers.values()) lru.clear();
    this.servers.clear();
  }
}
