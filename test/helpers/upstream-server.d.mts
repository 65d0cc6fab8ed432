// Types of upstream-server.mjs, the one scriptable upstream.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { McpError, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import type { Counter } from './counter.mjs';

/** How list cursors are written and read back (an offset into the list). */
export interface CursorCodec {
  encode(offset: number, server: Server): string;
  /** Throws (an McpError) to refuse a cursor. */
  decode(cursor: string): number;
}

/** What a test can script about an upstream. */
export interface UpstreamSpec {
  /** serverInfo.name. Default: "test-upstream". */
  name?: string;
  /** The listed resources, or a function returning the current list. Default: none. */
  resources?: Resource[] | (() => Resource[]);
  /** The listed templates. Default: none. */
  templates?: ResourceTemplate[];
  /** Page size of resources/list and resources/templates/list. Default: everything in one page. */
  pageSize?: number;
  /** Cursor format. Default: {@link clientNameCursors}. */
  cursors?: CursorCodec;
  /** Read handler; default: text "content of <uri>" for listed URIs, -32002 otherwise. Every read is counted first. */
  /** Answers a read; `server` is the connection it came on (to notify that session alone). */
  read?: (uri: string, signal: AbortSignal, server: Server) => unknown;
  /** Completion handler; when absent the capability is not declared. */
  complete?: (params: { ref: { type?: string; uri?: string }; argument: { name: string; value: string } }) => string[];
  /** Both list calls fail with -32603 and a message holding "secret detail". Default: false. */
  failList?: boolean;
  /** resources/list never ends: one `fixture://endless/<n>` a page, always with a next cursor. Default: false. */
  endlessCursor?: boolean;
  /** Declare and handle subscriptions. Default: false. */
  subscribe?: boolean;
  /** More capabilities to declare (e.g. tools and prompts whose handlers `extend` registers). */
  capabilities?: Record<string, unknown> | undefined;
  /** Registers more handlers on each connection's Server, after the built-in ones. */
  extend?: ((server: Server) => void) | undefined;
  /** Omit templates/list (method not found). Default: false. */
  noTemplates?: boolean;
}

/** Counters shared by every Server built with the same stats. */
export interface UpstreamStats {
  initializes: number;
  /** Reads by URI, counted as they arrive (before any delay, hang or error). */
  reads: Map<string, number>;
  cursorsSeen: string[];
  subscribes: string[];
  unsubscribes: string[];
  /** Hit on every subscribe and unsubscribe the upstream receives. */
  subscriptionCalls: Counter;
  listCalls: number;
  templateListCalls: number;
  completions: number;
}

/** One connection's Server, its counters, and the URIs it is subscribed to. */
export interface UpstreamHandle {
  server: Server;
  stats: UpstreamStats;
  subscribed: Set<string>;
}

export const textContents: (uri: string, text: string) => { contents: [{ uri: string; mimeType: 'text/plain'; text: string }] };
export const resourceNotFound: (uri: string) => McpError;
export const clientNameCursors: CursorCodec;
export const opaqueCursors: CursorCodec;
export function richResource(uri: string, extra?: Partial<Resource>): Resource;
export function newStats(): UpstreamStats;
export function createUpstreamServer(spec: UpstreamSpec, stats?: UpstreamStats): UpstreamHandle;
