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
}

/** One case on the wire (the Go side's `request`). */
export type ReferenceRequest =
  | { op: 'default' | 'validate'; operation: 'CREATE' | 'UPDATE'; object: unknown; oldObject?: unknown; cluster: ReferenceCluster }
  | { op: 'inject'; operation: 'CREATE'; namespace: string; object: unknown; cluster: ReferenceCluster }
  | { op: 'status'; sidecarSet: unknown; cluster: ReferenceCluster };

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
  /** Kruise's code panicked or the case could not be decoded. */
  error?: string;
}
