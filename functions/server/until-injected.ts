/**
 * Waits, with server-side dry runs of a pod, until a SidecarSet just stored
 * injects it. On the policy path the API server's informer of SidecarSets
 * delivers a new set a moment after it is stored (milliseconds; docs/INJECTION-POLICY.md,
 * "How it fails"): a pod created before then is created without the set's
 * sidecars, as with Kruise's informer-fed webhook. The demo waits so, and so
 * do the suites that create a set and its pods at once.
 */
import type { Pod } from '../../lib/kube/types.ts';

/** One request to the API server, answered with its status and body text. */
export type ApiRequest = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: string }>;

const POLL_MS = 100;

/** Milliseconds until a dry run of `pod` (in `namespace`) comes back with more containers than it has. */
export async function untilInjected(request: ApiRequest, namespace: string, pod: Pod, timeoutMs = 30_000): Promise<number> {
  const started = performance.now();
  const path = `/api/v1/namespaces/${namespace}/pods?dryRun=All`;
  for (;;) {
    const res = await request('POST', path, pod);
    if (res.status !== 201) throw new Error(`a dry run of pod ${pod.metadata?.name ?? ''}: HTTP ${res.status} ${res.body.slice(0, 300)}`);
    if ((JSON.parse(res.body) as Pod).spec?.containers.length !== pod.spec?.containers.length) return Math.round(performance.now() - started);
    if (performance.now() - started > timeoutMs) throw new Error(`no SidecarSet injected a dry run of pod ${pod.metadata?.name ?? ''} within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
