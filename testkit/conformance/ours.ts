/**
 * This project's answers to conformance cases. The admission functions run
 * through `runReview`, the very path `npm run invoke` takes (functions/invoke
 * /cli.ts decodes its files and calls runReview with the same memory
 * sources), so calling it in-process is equivalent to spawning the CLI per
 * case, and thousands of cases take seconds instead of minutes. Status is
 * lib/sidecarset/status.ts, what a resync counts with; a
 * rollout is one reconcile of lib/status-sync/set-reconcile.ts over memory adapters.
 */
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { memoryPods, memoryRevisionStore } from '../../lib/adapters/memory-rollout.ts';
import { memoryStatusWriter } from '../../lib/adapters/memory-status-sync.ts';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { internalSidecarSet, internalSidecarSets } from '../../lib/conversion/internal-model.ts';
import { answerConversionReview } from '../../lib/conversion/review.ts';
import type { JsonObject } from '../../lib/kube/types.ts';
import type { PodWriter } from '../../lib/ports.ts';
import { planRollout } from '../../lib/rollout/plan.ts';
import { podKey } from '../../lib/sidecarset/pod-state.ts';
import { currentRevisionName } from '../../lib/sidecarset/revisions.ts';
import { computeStatus, summarizePod } from '../../lib/sidecarset/status.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { rolloutStateEvents } from '../../lib/status-sync/rollout-state.ts';
import { reconcileSet } from '../../lib/status-sync/set-reconcile.ts';
import { runReview, type AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { GVK_POD, GVK_SET, reviewAround } from '../reviews.ts';
import { CONFORMANCE_NOW, ROLLOUT_NOW, type Cluster, type ConformanceCase } from './generator.ts';
import { conversionReview, conversionVerdict, sourceAPIVersion, type PodWrite, type RolloutEvent, type Verdict } from './verdict.ts';

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

/**
 * One reconcile of the set (lib/status-sync/set-reconcile.ts, the reconcile the
 * status-sync function runs) over the case's cluster held by the memory
 * adapters, and the pods as stored after it.
 */
async function rolloutReconcile(set: SidecarSet, cluster: Cluster): Promise<Verdict> {
  const pods = memoryPods(cluster.pods);
  const writes: PodWrite[] = [];
  const stored = (namespace: string, name: string) => pods.pods().find((p) => podKey(p) === `${namespace}/${name}`) as JsonObject;
  const writer: PodWriter = {
    async patch(namespace, name, operations, signal) {
      const write = await pods.writer.patch(namespace, name, operations, signal);
      if (write.outcome === 'written') writes.push({ kind: 'update', pod: stored(namespace, name) });
      return write;
    },
    async patchStatus(namespace, name, patch, signal) {
      const write = await pods.writer.patchStatus(namespace, name, patch, signal);
      if (write.outcome === 'written') writes.push({ kind: 'status', pod: stored(namespace, name) });
      return write;
    },
  };
  // The set's and the pods' Events in one list, in the order the reconcile recorded them.
  const events: RolloutEvent[] = [];
  const namespaces = memoryNamespaceSource(cluster.namespaces);
  const result = await reconcileSet(
    set,
    {
      statuses: memoryStatusWriter(cluster.sidecarSets.some((s) => s.metadata?.name === set.metadata?.name) ? cluster.sidecarSets : [...cluster.sidecarSets, set]),
      events: {
        record(event) {
          events.push({ object: `SidecarSet/${event.sidecarSet.name}`, type: event.type, reason: event.reason, message: event.message });
          return Promise.resolve();
        },
      },
      namespaces,
      rollout: {
        revisions: memoryRevisionStore(),
        setPods: pods.source,
        pods: writer,
        podEvents: {
          record(event) {
            events.push({ object: `Pod/${event.pod.namespace}/${event.pod.name}`, type: event.type, reason: event.reason, message: event.message });
            return Promise.resolve();
          },
        },
        clock: { now: () => ROLLOUT_NOW },
        states: rolloutStateEvents(),
      },
    },
    // One write at a time, in the reconcile's order, as Kruise writes them.
    { writeConcurrency: 1 },
  );
  // Pods the reconcile flipped that its plan also updates: the reconcile leaves their update to a later reconcile.
  const labels = new Map(cluster.namespaces.map((ns) => [ns.metadata?.name ?? '', { ...ns.metadata?.labels }]));
  const plan = planRollout(set, cluster.pods, labels);
  const planned = new Set(plan.updates.map((u) => podKey(u.pod)));
  const deferred = plan.flips.map((f) => podKey(f.pod)).filter((key) => planned.has(key));
  const sorted = pods.pods().sort((a, b) => (podKey(a) < podKey(b) ? -1 : podKey(a) > podKey(b) ? 1 : 0)) as JsonObject[];
  const reconcileError = result.errors.map((e) => `${e.operation}: ${e.message}`).join('; ');
  return { kind: 'pods', pods: sorted, writes, events, ...(reconcileError === '' ? {} : { passError: reconcileError }), ...(deferred.length === 0 ? {} : { deferred }) };
}

/** The conversion function's answer (lib/conversion/review.ts, what sidecarset-convert runs); for a round trip, its answer to its own answer. */
function conversion(c: Extract<ConformanceCase, { class: 'convert' }>): Verdict {
  const there = conversionVerdict(answerConversionReview(conversionReview(c.objects, c.desiredAPIVersion)).review);
  if (!c.roundTrip || there.kind !== 'converted') return there;
  return conversionVerdict(answerConversionReview(conversionReview(there.objects, sourceAPIVersion(c))).review);
}

/**
 * The kind a SidecarSet review names: the version of the object's
 * `apiVersion` (v1alpha1 when it names none), the one the API server calls
 * the webhook for when the client wrote that version, as the reference
 * sends it to Kruise (main.go, admissionRequest).
 */
function setKindOf(object: unknown): typeof GVK_SET {
  const apiVersion = (object as { apiVersion?: unknown } | null)?.apiVersion;
  return apiVersion === 'apps.kruise.io/v1beta1' ? { ...GVK_SET, version: 'v1beta1' } : GVK_SET;
}

/** What this project answers for one case. */
export async function ourVerdict(c: ConformanceCase): Promise<Verdict> {
  switch (c.class) {
    case 'convert':
      return conversion(c);
    case 'default':
      return admission('sidecarset-default', reviewAround('conformance', setKindOf(c.object), 'sidecarsets', c.operation, c.object, c.oldObject ?? null, undefined), c.object, c);
    case 'validate':
      return admission('sidecarset-validate', reviewAround('conformance', setKindOf(c.object), 'sidecarsets', c.operation, c.object, c.oldObject ?? null, undefined), c.object, c);
    case 'inject':
      return admission('pod-inject', reviewAround('conformance', GVK_POD, 'pods', 'CREATE', c.pod, null, c.namespace), c.pod, c);
    case 'status': {
      // A stored set enters in the internal model, as the adapters that read sets give it (lib/adapters/kube-sidecarsets.ts).
      const set = internalSidecarSet(c.sidecarSet);
      const labels = new Map(c.cluster.namespaces.map((ns) => [ns.metadata?.name ?? '', { ...ns.metadata?.labels }]));
      const { status } = computeStatus(set, c.cluster.pods.map(summarizePod), labels);
      // The reference registers the set's first revision (its fake client holds none), as a reconcile here would:
      // the name comes from the spec and the collision count alone.
      const collisionCount = set.status?.collisionCount ?? 0;
      return { kind: 'status', status: { ...status, latestRevision: currentRevisionName(set, collisionCount), collisionCount } };
    }
    case 'rollout':
      return rolloutReconcile(internalSidecarSet(c.sidecarSet), { ...c.cluster, sidecarSets: [...internalSidecarSets(c.cluster.sidecarSets)] });
  }
}
