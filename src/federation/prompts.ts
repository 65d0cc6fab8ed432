// Federated prompts, shared by all sessions: get = route to the owner, resource content namespaced; completion of a prompt's argument routed likewise.
import type { TimeoutsConfig } from '../config/schema.js';
import { CompleteResult, GetPromptResult, Methods, withoutHopFields, type CompleteResultT, type GetPromptResultT } from '../protocol.js';
import type { CallContext, CallsInFlight } from './calls-in-flight.js';
import { namespacedContent } from './content-uris.js';
import type { FoundItem } from './item-catalog.js';
import type { CompleteParams, OperationTrace } from './resources.js';
import { inputRequiredTraced, jsonLength, sendToOwner } from './tools.js';
import { isInputRequired, type InputRequiredResult } from './relay.js';
import type { UriCodec } from './uri.js';

/** The shared parts prompt operations use. */
export interface PromptsDeps {
  uris: UriCodec;
  calls: CallsInFlight;
  timeouts: () => TimeoutsConfig;
}

/** The federation's prompts. Holds no per-session state. */
export class FederatedPrompts {
  constructor(private readonly deps: PromptsDeps) {}

  /** `prompts/get` of `found`: its messages, with resource links and embedded resources namespaced. */
  async get(found: FoundItem, params: Record<string, unknown>, relay: CallContext, trace?: OperationTrace): Promise<GetPromptResultT | InputRequiredResult> {
    const { server } = found;
    const result = await sendToOwner(this.deps, found, params, relay, trace, Methods.getPrompt, GetPromptResult);
    if (isInputRequired(result)) return inputRequiredTraced(result, trace); // the caller's edge renders it for its era
    const encode = (uri: string) => this.deps.uris.encode(server, uri);
    const out = {
      ...withoutHopFields(result),
      messages: result.messages.map((m) => ('content' in m ? { ...m, content: namespacedContent(m.content, encode) } : m)),
    };
    if (trace && trace.weigh !== false) trace.bytes = jsonLength(out);
    return out;
  }

  /** `completion/complete` for a `ref/prompt`, at the prompt's owner under its own name. */
  async complete(params: CompleteParams, found: FoundItem, signal?: AbortSignal, principal?: string): Promise<CompleteResultT> {
    const { upstream } = found;
    if (!upstream.supports('completions')) return { completion: { values: [], hasMore: false } };
    const upstreamParams: Record<string, unknown> = { ...params, ref: { ...params.ref, name: found.name } };
    return withoutHopFields(await upstream.request(Methods.complete, upstreamParams, CompleteResult, signal, principal));
  }
}
