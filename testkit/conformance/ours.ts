/**
 * This project's answers to conformance cases. The admission functions run
 * through `runReview`, the very path `npm run invoke` takes (functions/invoke
 * /cli.ts decodes its files and calls runReview with the same memory
 * sources), so calling it in-process is equivalent to spawning the CLI per
 * case, and thousands of cases take seconds instead of minutes. Status is
 * lib/sidecarset/status.ts, what the status-sync pass counts with.
 */
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { currentRevisionName } from '../../lib/rollout/revisions.ts';
import { computeStatus, summarizePod } from '../../lib/sidecarset/status.ts';
import { runReview, type AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { GVK_POD, GVK_SET, reviewAround } from '../reviews.ts';
import { CONFORMANCE_NOW, type ConformanceCase } from './generator.ts';
import type { Verdict } from './verdict.ts';

async function admission(fn: AdmissionFunctionName, body: unknown, object: unknown, c: ConformanceCase): Promise<Verdict> {
  const cluster = 'cluster' in c ? c.cluster : { sidecarSets: [], namespaces: [] };
  const outcome = await runReview(fn, body, {
    sidecarSets: memorySidecarSetSource(cluster.sidecarSets),
    namespaces: memoryNamespaceSource(cluster.namespaces),
    clock: { now: () => CONFORMANCE_NOW },
  });
  switch (outcome.kind) {
    case 'invalid':
      return { kind: 'failed', message: outcome.message };
    case 'failed':
      return { kind: 'failed', code: outcome.status, message: outcome.message };
    case 'review': {
      const response = outcome.review.response;
      if (!response.allowed) return { kind: 'denied', code: response.status?.code ?? 0, message: response.status?.message ?? '' };
      const result = response.patch === undefined ? object : applyPatch(structuredClone(object), decodePatch(response.patch));
      return { kind: 'allowed', result };
    }
  }
}

/** What this project answers for one case. */
export async function ourVerdict(c: ConformanceCase): Promise<Verdict> {
  switch (c.class) {
    case 'default':
      return admission('sidecarset-default', reviewAround('conformance', GVK_SET, 'sidecarsets', c.operation, c.object, c.oldObject ?? null, undefined), c.object, c);
    case 'validate':
      return admission('sidecarset-validate', reviewAround('conformance', GVK_SET, 'sidecarsets', c.operation, c.object, c.oldObject ?? null, undefined), c.object, c);
    case 'inject':
      return admission('pod-inject', reviewAround('conformance', GVK_POD, 'pods', 'CREATE', c.pod, null, c.namespace), c.pod, c);
    case 'status': {
      const labels = new Map(c.cluster.namespaces.map((ns) => [ns.metadata?.name ?? '', { ...ns.metadata?.labels }]));
      const { status } = computeStatus(c.sidecarSet, c.cluster.pods.map(summarizePod), labels);
      // The reference registers the set's first revision (its fake client holds none), as a pass here would:
      // the name comes from the spec and the collision count alone.
      const collisionCount = c.sidecarSet.status?.collisionCount ?? 0;
      return { kind: 'status', status: { ...status, latestRevision: currentRevisionName(c.sidecarSet, collisionCount), collisionCount } };
    }
  }
}
