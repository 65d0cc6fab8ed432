// Readiness: config loaded, every required upstream ready, the audit log writable; what `/readyz` and `ls` both report. Pure.

/** One upstream as readiness sees it. */
export interface UpstreamReadiness {
  server: string;
  /** Its status (`ready`, `connecting`, `unavailable`, …). */
  status: string;
  /** Whether the gateway is unready without it (`servers.<id>.required`). */
  required: boolean;
}

/** What the gateway is missing, if anything. */
export interface Readiness {
  ready: boolean;
  /** What is not ready: `config`, `audit`, `upstream:<id>`, in that order. Empty when ready. */
  notReady: string[];
}

/**
 * Ready when the config is loaded, every required upstream is `ready` and the audit log (when there is
 * one) is writable. Optional upstreams that are down do not count; with no required upstream at all,
 * at least one upstream must be ready (a gateway serving nothing is not ready).
 *
 * @example readiness({ configLoaded: true, auditWritable: true, upstreams: [{ server: 'docs', status: 'unavailable', required: true }] })
 * // { ready: false, notReady: ['upstream:docs'] }
 */
export function readiness(state: { configLoaded: boolean; auditWritable: boolean; upstreams: readonly UpstreamReadiness[] }): Readiness {
  const notReady: string[] = [];
  if (!state.configLoaded) notReady.push('config');
  if (!state.auditWritable) notReady.push('audit');
  const required = state.upstreams.filter((u) => u.required);
  for (const u of required) if (u.status !== 'ready') notReady.push(`upstream:${u.server}`);
  if (required.length === 0 && state.upstreams.length > 0 && !state.upstreams.some((u) => u.status === 'ready')) notReady.push('upstreams');
  return { ready: notReady.length === 0, notReady };
}
