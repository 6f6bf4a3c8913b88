/**
 * One side's answer to a case, in a shape both sides share: an admission
 * answer is judged by the object it leaves (the input with the answer's
 * patch applied), not by the patch, because two correct patches may differ
 * (Kruise diffs Go-typed JSON, this project diffs the object as received).
 * Kruise's patch is applied by the reference itself, to the JSON it diffed.
 */
import type { JsonObject } from '../../lib/kube/types.ts';
import type { ConformanceCase } from './generator.ts';
import type { ReferenceAnswer, ReferenceRequest } from './reference-protocol.ts';

/** An Event a rollout's reconcile recorded: `object` is `SidecarSet/<name>` or `Pod/<namespace>/<name>`. */
export interface RolloutEvent {
  object: string;
  type: string;
  reason: string;
  message: string;
}

/** One pod write of a rollout's reconcile, with the pod after it; `kind` is `update` (images, annotations) or `status` (the condition). */
export interface PodWrite {
  kind: 'update' | 'status';
  pod: JsonObject;
}

export type Verdict =
  /** Allowed; `result` is the object after the answer's patch (the input when none). */
  | { kind: 'allowed'; result: unknown }
  /** Denied (`allowed: false`) with this code and message. */
  | { kind: 'denied'; code: number; message: string }
  /** No decision (HTTP 500/503, a panic, a case the side could not read). */
  | { kind: 'failed'; code?: number; message: string }
  | { kind: 'status'; status: Record<string, unknown> }
  /**
   * A rollout's reconcile: the pods as stored after it, the writes it made and the
   * Events it recorded in order, and whether it stopped on an error. `deferred` (this project only) names
   * the pods (`namespace/name`) the reconcile flipped and planned to update too:
   * their update waits for a later reconcile (compare.ts, flippedPodUpdatedLater).
   */
  | { kind: 'pods'; pods: JsonObject[]; writes: PodWrite[]; events: RolloutEvent[]; passError?: string; deferred?: string[] }
  /** A ConversionReview answered with these objects (for a round trip, the objects that came back). */
  | { kind: 'converted'; objects: unknown[] };

/** The ConversionReview (apiextensions.k8s.io/v1) the API server sends for these objects. */
export function conversionReview(objects: readonly unknown[], desiredAPIVersion: string, uid = 'conformance'): JsonObject {
  return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid, desiredAPIVersion, objects: [...objects] } };
}

/** A ConversionReview's answer as a {@link Verdict}: its objects, or the failure it reports. */
export function conversionVerdict(review: unknown): Verdict {
  const response = (review as { response?: { convertedObjects?: unknown[]; result?: { status?: string; message?: string } } } | undefined)?.response;
  if (response === undefined) return { kind: 'failed', message: 'no response in the ConversionReview' };
  if (response.result?.status !== 'Success') return { kind: 'failed', message: response.result?.message ?? 'conversion failed' };
  return { kind: 'converted', objects: response.convertedObjects ?? [] };
}

/** The version a round trip goes back to: the objects' own (they are all in one). */
export function sourceAPIVersion(c: Extract<ConformanceCase, { class: 'convert' }>): string {
  const apiVersion = (c.objects[0] as { apiVersion?: unknown } | undefined)?.apiVersion;
  return typeof apiVersion === 'string' ? apiVersion : '';
}

/** The case as the Kruise reference reads it (for a conversion round trip, its first leg). */
export function referenceRequest(c: ConformanceCase): ReferenceRequest {
  switch (c.class) {
    case 'convert':
      return { op: 'convert', object: conversionReview(c.objects, c.desiredAPIVersion) };
    case 'default':
      return { op: 'default', operation: c.operation, object: c.object, ...(c.oldObject === undefined ? {} : { oldObject: c.oldObject }), cluster: {} };
    case 'validate':
      return {
        op: 'validate',
        operation: c.operation,
        object: c.object,
        ...(c.oldObject === undefined ? {} : { oldObject: c.oldObject }),
        cluster: { sidecarSets: c.cluster.sidecarSets, namespaces: c.cluster.namespaces },
      };
    case 'inject':
      return { op: 'inject', operation: 'CREATE', namespace: c.namespace, object: c.pod, cluster: { sidecarSets: c.cluster.sidecarSets, namespaces: c.cluster.namespaces } };
    case 'status':
      return { op: 'status', sidecarSet: c.sidecarSet, cluster: c.cluster };
    case 'rollout':
      return { op: 'rollout', sidecarSet: c.sidecarSet, cluster: c.cluster };
  }
}

function inputObject(c: ConformanceCase): unknown {
  switch (c.class) {
    case 'convert':
      return c.objects;
    case 'default':
    case 'validate':
      return c.object;
    case 'inject':
      return c.pod;
    case 'status':
    case 'rollout':
      return c.sidecarSet;
  }
}

/** Kruise's answer as a {@link Verdict}. */
export function kruiseVerdict(c: ConformanceCase, answer: ReferenceAnswer): Verdict {
  if (answer.error !== undefined) return { kind: 'failed', message: answer.error };
  if (c.class === 'convert') return answer.result === undefined ? { kind: 'failed', code: answer.code ?? 0, message: `HTTP ${answer.code ?? 0}` } : conversionVerdict(answer.result);
  if (answer.status !== undefined) return { kind: 'status', status: answer.status };
  if (c.class === 'rollout') {
    const writes = (answer.writes ?? []).map((w): PodWrite => ({ kind: w.kind === 'status' ? 'status' : 'update', pod: w.pod }));
    const events = (answer.events ?? []).map((e): RolloutEvent => ({
      object: e.kind === 'Pod' ? `Pod/${e.namespace ?? ''}/${e.name}` : `${e.kind}/${e.name}`,
      type: e.type,
      reason: e.reason,
      message: e.message,
    }));
    return { kind: 'pods', pods: answer.pods ?? [], writes, events, ...(answer.passError === undefined ? {} : { passError: answer.passError }) };
  }
  if (answer.allowed !== true) return { kind: 'denied', code: answer.code ?? 0, message: answer.message ?? '' };
  // The reference applied its patch to what Kruise diffed against (see main.go).
  return { kind: 'allowed', result: answer.result ?? inputObject(c) };
}
