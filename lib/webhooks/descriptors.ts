/**
 * One descriptor per function the API server calls: its name, its handler,
 * the review it answers and the object kind it reviews, what it reads from
 * the cluster, whether it starts a reconcile, and where its caller is
 * registered (with the webhook's rules): what the function is, and nothing
 * about how it is packaged or presented.
 *
 * Everything that needs to know what a function is reads this list: the
 * composition (functions/shared/compose.ts), the HTTP handler and the invoke CLI
 * (through registry.ts), the stack (infra/aws/functions.ts), the bundler
 * (scripts/bundle.ts) and the webhook configurations
 * (lib/webhook-config/webhook-configurations.ts). What belongs to an entry
 * point stays with it, keyed by the function's name so that a function
 * missing there fails the typecheck: its Lambda entry file
 * (functions/entry-points.ts), its help in the invoke CLI
 * (functions/invoke/function-help.ts) and its description in the stack
 * (infra/aws/functions.ts). Adding a function is one descriptor here, its
 * handler, a one-line functions/<name>/handler.ts and those three entries.
 */
import type { WrappableKind } from '../admission/wrap.ts';
import type { AdmissionHandler, HandlerDeps } from './handler.ts';
import type { AdmissionRequest } from '../admission/review.ts';
import type { ConversionAnswer } from '../conversion/review.ts';

/**
 * A handler loaded on first use (or by `load()`, at a cold start): each
 * handler is reached through a dynamic import, so a function's bundle loads
 * its own handler's code and not the others' (pod-inject's and validation's
 * RE2 engine stay out of the defaulting function's cold start).
 */
export interface LazyHandler extends AdmissionHandler {
  load(): Promise<AdmissionHandler>;
}

function lazyHandler(importHandler: () => Promise<AdmissionHandler>): LazyHandler {
  let loaded: Promise<AdmissionHandler> | undefined;
  const load = (): Promise<AdmissionHandler> => {
    loaded ??= importHandler().catch((error: unknown) => {
      loaded = undefined; // a failed load is tried again by the next review
      throw error;
    });
    return loaded;
  };
  const handler = async (request: AdmissionRequest, deps: HandlerDeps) => (await load())(request, deps);
  return Object.assign(handler, { load });
}

/**
 * A conversion handler: the parsed body of a ConversionReview (already
 * checked to be one by the request decoder) in, its answer out. Pure and
 * synchronous once loaded; loaded lazily like the admission handlers, so
 * the conversion code stays out of their bundles and theirs out of its.
 */
export interface LazyConversionHandler {
  (review: unknown): Promise<ConversionAnswer>;
  load(): Promise<unknown>;
}

function lazyConversionHandler(importHandler: () => Promise<(review: unknown) => ConversionAnswer>): LazyConversionHandler {
  let loaded: Promise<(review: unknown) => ConversionAnswer> | undefined;
  const load = (): Promise<(review: unknown) => ConversionAnswer> => {
    loaded ??= importHandler().catch((error: unknown) => {
      loaded = undefined;
      throw error;
    });
    return loaded;
  };
  const handler = async (review: unknown) => (await load())(review);
  return Object.assign(handler, { load });
}

const podInjectHandler = lazyHandler(async () => (await import('./pod-inject.ts')).podInjectHandler);
const podChangeHandler = lazyHandler(async () => (await import('./pod-change.ts')).podChangeHandler);
const sidecarSetDefaultHandler = lazyHandler(async () => (await import('./sidecarset-default.ts')).sidecarSetDefaultHandler);
const sidecarSetValidateHandler = lazyHandler(async () => (await import('./sidecarset-validate.ts')).sidecarSetValidateHandler);

export type FailurePolicy = 'Fail' | 'Ignore';

/** One entry of a webhook's `rules`, as admissionregistration.k8s.io/v1 spells it. */
export interface WebhookRule {
  apiGroups: readonly string[];
  apiVersions: readonly string[];
  resources: readonly string[];
  operations: readonly ('CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT')[];
  scope: 'Cluster' | 'Namespaced';
}

/**
 * Where the API server learns to call an admission function: its webhook in
 * one of the two webhook configurations. (A CRD conversion function's caller
 * is the CRD's spec.conversion.webhook instead; see docs/ARCHITECTURE.md.)
 */
export interface WebhookRegistration {
  in: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';
  rules: readonly WebhookRule[];
  /**
   * Fixed, or `deployment`: the deployment chooses (the `podFailurePolicy`
   * render option, `Fail` unless given), for a webhook whose outage may be
   * traded for missing work rather than blocked writes.
   */
  failurePolicy: FailurePolicy | 'deployment';
  /** Mutating webhooks only: whether the API server calls it again after later mutations. */
  reinvocationPolicy?: 'Never' | 'IfNeeded';
  /** `NoneOnDryRun` for a function with a side effect it skips on dry runs (starting a reconcile). */
  sideEffects: 'None' | 'NoneOnDryRun';
  /** Never sent objects of the system namespaces, the deployment's excluded ones, or namespaces that opted out. */
  skipsExcludedNamespaces: boolean;
  /** CEL conditions the API server checks before calling (all must hold): requests the function has nothing to do with never reach it. */
  matchConditions?: readonly { name: string; expression: string }[];
  /** Its own timeout, in place of the deployment's (a webhook that only triggers must never hold a write long). */
  timeoutSeconds?: number;
  /**
   * Further webhooks of the same configuration calling this function at the
   * same URL, each with its own rules and conditions: a second kind of review
   * the function answers, with no Function URL or Lambda of its own.
   */
  alsoAs?: readonly NamedWebhook[];
}

/** A further webhook of a function (see {@link WebhookRegistration.alsoAs}), named `<name>.sidecarset.kruise.io`. */
export interface NamedWebhook extends Omit<WebhookRegistration, 'in' | 'alsoAs' | 'failurePolicy'> {
  name: string;
  failurePolicy: FailurePolicy;
}

/** What a function reads from the cluster besides the object under review. */
export interface ClusterReads {
  sidecarSets: boolean;
  namespaces: boolean;
  /** ControllerRevisions, for sets that pin a revision (rollout.md §2.4). */
  revisions: boolean;
  /** One pod by name (the pod an Eviction names), never a list. */
  pods: boolean;
}

/** A function that answers AdmissionReviews. */
export interface AdmissionFunctionDescriptor<Name extends string = string> {
  name: Name;
  /** The review it answers (a CRD conversion function answers `ConversionReview`). */
  answers: 'AdmissionReview';
  handler: LazyHandler;
  /** The kind of object under review; invoke wraps a plain object of this kind in a review. */
  reviews: WrappableKind;
  reads: ClusterReads;
  /** Tells the reconciler about admitted changes, so the set's reconcile starts at once. */
  triggersReconcile: boolean;
  caller: WebhookRegistration;
}

/**
 * Where the API server learns to call a conversion function: the named
 * CRD's `spec.conversion.webhook.clientConfig` (rendered by `npm run
 * manifests`, repointed by the rotation), not a webhook configuration.
 */
export interface CrdConversionRegistration {
  in: 'CustomResourceDefinition';
  /** The CRD's name. */
  crd: string;
}

/** A function that answers the API server's ConversionReviews (apiextensions.k8s.io/v1) for a CRD. */
export interface ConversionFunctionDescriptor<Name extends string = string> {
  name: Name;
  answers: 'ConversionReview';
  handler: LazyConversionHandler;
  /** The kind of object it converts; invoke wraps a plain object of this kind in a review with `--to`. */
  reviews: 'SidecarSet';
  /** Nothing: a conversion is the object alone, so the function holds no cluster credentials. */
  reads: ClusterReads;
  triggersReconcile: false;
  caller: CrdConversionRegistration;
}

/** Every function descriptor: an admission function's or a conversion function's (docs/ARCHITECTURE.md). */
export type FunctionDescriptor = AdmissionFunctionDescriptor | ConversionFunctionDescriptor;

const NOTHING: ClusterReads = { sidecarSets: false, namespaces: false, revisions: false, pods: false };
const SETS_NAMESPACES_POD: ClusterReads = { sidecarSets: true, namespaces: true, revisions: false, pods: true };
const SETS_NAMESPACES_REVISIONS: ClusterReads = { sidecarSets: true, namespaces: true, revisions: true, pods: false };

/** Both versions, as OpenKruise 1.9 registers its SidecarSet webhooks (`versions=v1alpha1;v1beta1`). */
const SIDECARSET_RULE: WebhookRule = {
  apiGroups: ['apps.kruise.io'],
  apiVersions: ['v1alpha1', 'v1beta1'],
  resources: ['sidecarsets'],
  operations: ['CREATE', 'UPDATE'],
  scope: 'Cluster',
};

/** Keeps the literal name, so the list's names form a type. */
function describe<Name extends string>(descriptor: AdmissionFunctionDescriptor<Name>): AdmissionFunctionDescriptor<Name> {
  return descriptor;
}

/**
 * SidecarSet defaulting fails closed: a SidecarSet stored without defaults or
 * hashes would inject wrong sidecars later. It reads nothing but the object.
 */
export const SIDECARSET_DEFAULT = describe({
  name: 'sidecarset-default',
  answers: 'AdmissionReview',
  handler: sidecarSetDefaultHandler,
  reviews: 'SidecarSet',
  reads: NOTHING,
  triggersReconcile: false,
  caller: { in: 'MutatingWebhookConfiguration', rules: [SIDECARSET_RULE], failurePolicy: 'Fail', reinvocationPolicy: 'Never', sideEffects: 'None', skipsExcludedNamespaces: false },
});

/**
 * SidecarSet validation fails closed (a conflict stored would inject wrong
 * sidecars). It sees every admitted change after defaulting, so it is the
 * one that starts the set's reconcile: a side effect skipped on dry runs,
 * which "None" would deny having.
 */
export const SIDECARSET_VALIDATE = describe({
  name: 'sidecarset-validate',
  answers: 'AdmissionReview',
  handler: sidecarSetValidateHandler,
  reviews: 'SidecarSet',
  reads: SETS_NAMESPACES_REVISIONS,
  triggersReconcile: true,
  caller: { in: 'ValidatingWebhookConfiguration', rules: [SIDECARSET_RULE], failurePolicy: 'Fail', sideEffects: 'NoneOnDryRun', skipsExcludedNamespaces: false },
});

/**
 * Pod injection: the deployment chooses its failure policy (`Fail` blocks
 * pod creation while the function is unreachable, `Ignore` creates pods
 * without sidecars, which status-sync reports). `IfNeeded`: injection is
 * idempotent, and a re-run sees containers other webhooks added. It knows
 * which sets it injected, so it starts their reconciles (their matched pods
 * grew): a side effect skipped on dry runs.
 */
export const POD_INJECT = describe({
  name: 'pod-inject',
  answers: 'AdmissionReview',
  handler: podInjectHandler,
  reviews: 'Pod',
  reads: SETS_NAMESPACES_REVISIONS,
  triggersReconcile: true,
  caller: {
    in: 'MutatingWebhookConfiguration',
    rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'], scope: 'Namespaced' }],
    failurePolicy: 'deployment',
    reinvocationPolicy: 'IfNeeded',
    sideEffects: 'NoneOnDryRun',
    skipsExcludedNamespaces: true,
  },
});

/** The reconciler, as rbac.yaml's policies match it: its username or its group (the one RBAC grants the writes to). */
const IS_STATUS_SYNC = "request.userInfo.username == 'sidecarset-status-sync' || (has(request.userInfo.groups) && 'sidecarset-status-sync' in request.userInfo.groups)";

/**
 * The reconciler's evictions, judged by the pod-change function at its own
 * URL (pod-eviction.ts): the eviction policy in rbac.yaml sees only the
 * Eviction, this reads the pod it names and refuses one without a
 * controller. `Fail`: a stolen credential must not evict while the function
 * is away (the reconciler's repair waits for the next resync). Only the
 * reconciler's evictions reach it (the same username or group test as the
 * policy), so no administrator's drain ever waits on it; every namespace,
 * since the policy already refuses the excluded ones. 5 s: one GET of a pod.
 */
export const POD_EVICTION_WEBHOOK: NamedWebhook = {
  name: 'pod-eviction',
  rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods/eviction'], operations: ['CREATE'], scope: 'Namespaced' }],
  failurePolicy: 'Fail',
  sideEffects: 'None',
  skipsExcludedNamespaces: false,
  timeoutSeconds: 5,
  matchConditions: [{ name: 'is-status-sync', expression: IS_STATUS_SYNC }],
};

/** The pod whose change a pod-change review is about: as it was, for a DELETE (`object` is null then). */
const REVIEWED_POD = "(request.operation == 'DELETE' ? oldObject : object)";

/**
 * Pod changes that move a set's counts: only triggers, never decides. It
 * can never fail a pod's deletion or a kubelet's status write: `Ignore`,
 * a 1 s timeout, and an answer of "allowed" whatever happens. The API
 * server sends it only pods some set injected (their injected-list
 * annotation), only deletions of pods not already terminating, and only
 * status writes that change phase, conditions or container statuses; the
 * handler checks the same (pod-change.ts). It reads the sets (and, for a
 * set that selects by namespace, the pod's namespace) to trigger only those
 * that still select the pod. The same function is the pod-eviction webhook
 * ({@link POD_EVICTION_WEBHOOK}), for which it reads the evicted pod.
 */
export const POD_CHANGE = describe({
  name: 'pod-change',
  answers: 'AdmissionReview',
  handler: podChangeHandler,
  reviews: 'Pod',
  reads: SETS_NAMESPACES_POD,
  triggersReconcile: true,
  caller: {
    in: 'ValidatingWebhookConfiguration',
    rules: [
      { apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['DELETE'], scope: 'Namespaced' },
      { apiGroups: [''], apiVersions: ['v1'], resources: ['pods/status'], operations: ['UPDATE'], scope: 'Namespaced' },
    ],
    failurePolicy: 'Ignore',
    sideEffects: 'NoneOnDryRun',
    skipsExcludedNamespaces: true,
    timeoutSeconds: 1,
    matchConditions: [
      { name: 'injected-by-a-sidecarset', expression: `has(${REVIEWED_POD}.metadata.annotations) && 'kruise.io/sidecarset-injected-list' in ${REVIEWED_POD}.metadata.annotations` },
      { name: 'not-already-terminating', expression: "request.operation != 'DELETE' || !has(oldObject.metadata.deletionTimestamp)" },
      {
        name: 'counted-status-changed',
        expression:
          "request.operation == 'DELETE' || !has(object.status) || !has(oldObject.status) || object.status.?phase != oldObject.status.?phase || object.status.?conditions != oldObject.status.?conditions || object.status.?containerStatuses != oldObject.status.?containerStatuses || object.status.?initContainerStatuses != oldObject.status.?initContainerStatuses",
      },
    ],
    alsoAs: [POD_EVICTION_WEBHOOK],
  },
});

/**
 * The SidecarSet CRD's conversion webhook (v1alpha1 <-> v1beta1, OpenKruise
 * 1.9's mapping made lossless: docs/CONVERSION.md). Every read or write of
 * the version not stored goes through it. It reads nothing from the
 * cluster; a converted review is counted `Allowed`, one answered with
 * `result.status: Failure` `Denied`, in the same log line and metric as
 * the admission functions.
 */
export const SIDECARSET_CONVERT = {
  name: 'sidecarset-convert',
  answers: 'ConversionReview',
  handler: lazyConversionHandler(async () => (await import('./sidecarset-convert.ts')).sidecarSetConvertHandler),
  reviews: 'SidecarSet',
  reads: NOTHING,
  triggersReconcile: false,
  caller: { in: 'CustomResourceDefinition', crd: 'sidecarsets.apps.kruise.io' },
} as const satisfies ConversionFunctionDescriptor<'sidecarset-convert'>;

/** Every function the API server calls, in the order the stack, the bundles and the webhook configurations list them. */
export const FUNCTION_DESCRIPTORS = [SIDECARSET_DEFAULT, SIDECARSET_VALIDATE, POD_INJECT, POD_CHANGE, SIDECARSET_CONVERT] as const;

/** A descriptor of the list, its name typed as one of the list's. */
export type ListedDescriptor = (typeof FUNCTION_DESCRIPTORS)[number];
export type FunctionName = ListedDescriptor['name'];

/** Whether a function reads the cluster at all (and so needs its credentials and sources). */
export function readsCluster(descriptor: FunctionDescriptor): boolean {
  return descriptor.reads.sidecarSets || descriptor.reads.namespaces || descriptor.reads.revisions || descriptor.reads.pods;
}
