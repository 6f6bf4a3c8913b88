/**
 * One side's answer to a case, in a shape both sides share: an admission
 * answer is judged by the object it leaves (the input with the answer's
 * patch applied), not by the patch, because two correct patches may differ
 * (Kruise diffs Go-typed JSON, this project diffs the object as received).
 * Kruise's patch is applied by the reference itself, to the JSON it diffed.
 */
import type { ConformanceCase } from './generator.ts';
import type { ReferenceAnswer, ReferenceRequest } from './reference-protocol.ts';

export type Verdict =
  /** Allowed; `result` is the object after the answer's patch (the input when none). */
  | { kind: 'allowed'; result: unknown }
  /** Denied (`allowed: false`) with this code and message. */
  | { kind: 'denied'; code: number; message: string }
  /** No decision (HTTP 500/503, a panic, a case the side could not read). */
  | { kind: 'failed'; code?: number; message: string }
  | { kind: 'status'; status: Record<string, unknown> };

/** The case as the Kruise reference reads it. */
export function referenceRequest(c: ConformanceCase): ReferenceRequest {
  switch (c.class) {
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
  }
}

function inputObject(c: ConformanceCase): unknown {
  switch (c.class) {
    case 'default':
    case 'validate':
      return c.object;
    case 'inject':
      return c.pod;
    case 'status':
      return c.sidecarSet;
  }
}

/** Kruise's answer as a {@link Verdict}. */
export function kruiseVerdict(c: ConformanceCase, answer: ReferenceAnswer): Verdict {
  if (answer.error !== undefined) return { kind: 'failed', message: answer.error };
  if (answer.status !== undefined) return { kind: 'status', status: answer.status };
  if (answer.allowed !== true) return { kind: 'denied', code: answer.code ?? 0, message: answer.message ?? '' };
  // The reference applied its patch to what Kruise diffed against (see main.go).
  return { kind: 'allowed', result: answer.result ?? inputObject(c) };
}
