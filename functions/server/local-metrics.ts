/**
 * The local server's metrics: one registry for the process, fed by the
 * three webhooks and the status loop with the same facts the Lambda
 * functions write as EMF lines, and shown on `/metrics`.
 */
import { metricsRegistry, type MetricsRegistry } from '../../lib/metrics/registry.ts';
import { registryRecorder } from '../../lib/metrics/registry-recorder.ts';
import type { MetricsRecorder } from '../../lib/metrics/facts.ts';

/**
 * The function name stale lists are counted under: the local server's
 * webhooks share one set of cluster sources, so a stale list is not one
 * function's.
 */
export const SHARED_SOURCES = 'server';

export interface LocalMetrics {
  registry: MetricsRegistry;
  recorder: MetricsRecorder;
  /** For the shared cluster sources' stale lists. */
  staleServed: (ageMs: number) => void;
}

export function localMetrics(): LocalMetrics {
  const registry = metricsRegistry();
  const recorder = registryRecorder(registry);
  const shared = recorder.admission(SHARED_SOURCES);
  return {
    registry,
    recorder,
    staleServed: (ageMs) => {
      shared.staleServed(ageMs);
    },
  };
}
