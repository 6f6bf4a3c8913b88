/**
 * The wire protocol of the Kruise reference program (one JSON line per case
 * each way). Kept apart from the process that speaks it so that code judging
 * answers (compare.ts, verdict.ts) does not depend on building the program.
 */
import type { JsonObject } from '../../lib/kube/types.ts';

/** The cluster a case is judged in; what Kruise's fake client holds. */
export interface ReferenceCluster {
  sidecarSets?: readonly JsonObject[];
  namespaces?: readonly JsonObject[];
  pods?: readonly JsonObject[];
  /** The ControllerRevisions the `controller` op's reconcile finds. */
  controllerRevisions?: readonly JsonObject[];
}

/** One case on the wire (the Go side's `request`). */
export type ReferenceRequest =
  | { op: 'default' | 'validate'; operation: 'CREATE' | 'UPDATE'; object: unknown; oldObject?: unknown; cluster: ReferenceCluster }
  | { op: 'inject'; operation: 'CREATE'; namespace: string; object: unknown; cluster: ReferenceCluster }
  | { op: 'status' | 'rollout'; sidecarSet: unknown; cluster: ReferenceCluster }
  /** Kruise's controller reconcile, answering everything it leaves: the set, pods, writes, Events and ControllerRevisions as stored. */
  | { op: 'controller'; sidecarSet: unknown; cluster: ReferenceCluster }
  /** Kruise's CRD conversion webhook (1.9 on): `object` is a ConversionReview, the answer's `result` the review it answers. */
  | { op: 'convert'; object: unknown };

/** One pod write of a rollout's reconcile: the whole pod (`update`) or its `status` (the SidecarSetUpgradable condition), with the pod after it. */
export interface ReferencePodWrite {
  kind: string;
  pod: JsonObject;
}

/** One answer on the wire (the Go side's `answer`). */
export interface ReferenceAnswer {
  id: string;
  allowed?: boolean;
  code?: number;
  message?: string;
  patch?: { op: string; path: string; value?: unknown }[];
  /** The object after the patch (absent when there is no patch). */
  result?: unknown;
  status?: Record<string, unknown>;
  /** rollout: the pods as stored after the reconcile (namespace, name order). */
  pods?: JsonObject[];
  /** rollout: the pod writes of the reconcile, in order. */
  writes?: ReferencePodWrite[];
  /** rollout: the Events the reconcile recorded, in order. */
  events?: { kind: string; namespace?: string; name: string; type: string; reason: string; message: string }[];
  /** rollout: the error the reconcile stopped with (the pods show what it wrote before); the field's name is the Go reference's (control-plane/tools/kruise-reference). */
  passError?: string;
  /** rollout, controller (1.9 on): the delay after which the reconcile asked to run again. */
  requeueAfterMs?: number;
  /** controller: the set as stored after the reconcile (the status Kruise wrote or found consistent). */
  storedSet?: JsonObject;
  /** controller: every ControllerRevision as stored after the reconcile. */
  revisions?: JsonObject[];
  /** Kruise's code panicked or the case could not be decoded. */
  error?: string;
}
