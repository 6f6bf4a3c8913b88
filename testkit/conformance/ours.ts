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
import { computeStatus, summarizePod } from '../../lib/sidecarset/status.ts';
import { runReview, type AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { CONFORMANCE_NOW, type ConformanceCase } from './generator.ts';
import type { Verdict } from './verdict.ts';

const GVK_POD = { group: '', version: 'v1', kind: 'Pod' };
const GVK_SET = { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'SidecarSet' };

function review(gvk: typeof GVK_POD, resource: string, operation: string, object: unknown, oldObject: unknown, namespace: string | undefined) {
  return {
    kind: 'AdmissionReview',
    apiVersion: 'admission.k8s.io/v1',
    request: {
      uid: 'conformance',
      kind: gvk,
      resource: { group: gvk.group, version: gvk.version, resource },
      requestKind: gvk,
      requestResource: { group: gvk.group, version: gvk.version, resource },
      name: '',
      ...(namespace === undefined ? {} : { namespace }),
      operation,
      userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
      object,
      oldObject: oldObject ?? null,
      dryRun: false,
    },
  };
}

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
      return admission('sidecarset-default', review(GVK_SET, 'sidecarsets', c.operation, c.object, c.oldObject, undefined), c.object, c);
    case 'validate':
      return admission('sidecarset-validate', review(GVK_SET, 'sidecarsets', c.operation, c.object, c.oldObject, undefined), c.object, c);
    case 'inject':
      return admission('pod-inject', review(GVK_POD, 'pods', 'CREATE', c.pod, undefined, c.namespace), c.pod, c);
    case 'status': {
      const labels = new Map(c.cluster.namespaces.map((ns) => [ns.metadata?.name ?? '', { ...ns.metadata?.labels }]));
      const { status } = computeStatus(c.sidecarSet, c.cluster.pods.map(summarizePod), labels);
      return { kind: 'status', status };
    }
  }
}
