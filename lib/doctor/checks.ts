/**
 * `npm run doctor`'s judgements: each check's finding from what the cluster
 * holds, pure (functions/doctor reads the cluster). One line per check, OK
 * or the problem and what to do.
 */
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import { ANNOTATION_INJECTION_PATH, injectionPath } from '../sidecarset/injection-path.ts';
import { STATUS_SYNC_LEASE_NAME } from '../status-sync/lease.ts';

export interface Finding {
  check: string;
  ok: boolean;
  /** What holds (OK) or what is wrong. */
  detail: string;
  /** What to do, when not OK. */
  fix?: string;
}

/** What the stack deploys: each admission function's URL prefix (before the secret) and the current secret. */
export interface ExpectedStack {
  urls: Readonly<Record<string, string>>;
  /** Undefined when it cannot be read here (the check then says the URLs only were compared). */
  secret?: string;
}

/** The admission policies the stack installs; a MutatingAdmissionPolicy is one more entry of its own kind. */
export interface ExpectedPolicy {
  kind: 'ValidatingAdmissionPolicy' | 'MutatingAdmissionPolicy';
  name: string;
  /** Where it comes from, when not infra/k8s/rbac.yaml: what to apply. */
  source?: string;
}

/** Each webhook of a configuration: its URL is the stack's function's, with the current secret. */
export function webhookFindings(kind: string, name: string, configuration: unknown, expected: ExpectedStack): Finding[] {
  const check = `${kind} ${name}`;
  if (configuration === undefined) return [{ check, ok: false, detail: 'not found', fix: 'apply the webhook configurations (npm run -s manifests -- ... | kubectl apply -f -)' }];
  return arrayOf(objectOf(configuration)?.webhooks).map((webhook) => {
    const hook = objectOf(webhook) ?? {};
    const url = stringOf(objectOf(hook.clientConfig)?.url) ?? '';
    const at = `${check} webhook ${stringOf(hook.name) ?? '?'}`;
    const entry = Object.entries(expected.urls).find(([, prefix]) => url.startsWith(prefix));
    if (entry === undefined) return { check: at, ok: false, detail: `calls ${url.replace(/\/[^/]*$/, '/…')}, no function URL of this stack`, fix: 'render the manifests for this stack (npm run -s manifests) and apply them' };
    const secret = url.slice(entry[1].length);
    if (expected.secret !== undefined && secret !== expected.secret) {
      return { check: at, ok: false, detail: `calls ${entry[0]} with a secret that is not the current one`, fix: 'apply freshly rendered manifests (npm run -s manifests), or let the reconciler finish the rotation' };
    }
    return { check: at, ok: true, detail: `calls ${entry[0]}${expected.secret === undefined ? ' (the secret was not compared: not readable here)' : ' with the current secret'}` };
  });
}

/**
 * Each webhook the rendering puts in a configuration is there: a
 * configuration applied before a webhook was added (the pod-eviction one)
 * lacks the fence that webhook is, and nothing else says so.
 */
export function missingWebhookFindings(kind: string, name: string, configuration: unknown, expectedNames: readonly string[]): Finding[] {
  if (configuration === undefined) return [];
  const present = new Set(arrayOf(objectOf(configuration)?.webhooks).map((w) => stringOf(objectOf(w)?.name)));
  return expectedNames
    .filter((webhook) => !present.has(webhook))
    .map((webhook) => ({ check: `${kind} ${name} webhook ${webhook}`, ok: false, detail: 'missing: the configuration was rendered by an older version', fix: 'apply freshly rendered manifests (npm run -s manifests)' }));
}

/** Each expected policy exists and some binding names it. */
export function policyFindings(expected: readonly ExpectedPolicy[], policies: ReadonlyMap<string, readonly unknown[]>, bindings: ReadonlyMap<string, readonly unknown[]>): Finding[] {
  return expected.map(({ kind, name, source }) => {
    const check = `${kind} ${name}`;
    const present = (policies.get(kind) ?? []).some((p) => stringOf(objectOf(objectOf(p)?.metadata)?.name) === name);
    if (!present) return { check, ok: false, detail: 'not found', fix: `apply ${source ?? 'infra/k8s/rbac.yaml (kubectl apply -f infra/k8s/rbac.yaml)'}` };
    const bound = (bindings.get(kind) ?? []).filter((b) => stringOf(objectOf(objectOf(b)?.spec)?.policyName) === name);
    if (bound.length === 0) return { check, ok: false, detail: 'exists but no binding names it: it holds nothing', fix: `apply ${source ?? 'infra/k8s/rbac.yaml'} again (its binding is there)` };
    return { check, ok: true, detail: `bound by ${bound.map((b) => stringOf(objectOf(objectOf(b)?.metadata)?.name) ?? '?').join(', ')}` };
  });
}

/** The dry-run pod's answer: injected (by which sets) or not, and how long the API server took. */
export function injectionFinding(namespace: string, status: number, body: unknown, elapsedMs: number): Finding {
  const check = `pod injection in namespace ${namespace} (server-side dry run)`;
  if (status !== 201) {
    const message = stringOf(objectOf(body)?.message) ?? `HTTP ${status}`;
    return { check, ok: false, detail: `refused in ${elapsedMs} ms: ${message}`, fix: 'see the message; kubectl get mutatingwebhookconfigurations, and the pod-inject function\'s logs' };
  }
  const injected = stringOf(objectOf(objectOf(objectOf(body)?.metadata)?.annotations)?.['kruise.io/sidecarset-injected-list']);
  if (injected === undefined || injected === '') return { check, ok: false, detail: `came back without sidecars in ${elapsedMs} ms`, fix: 'check that a SidecarSet selects the labels given (--pod-labels) and that pod-inject is called (explain a pod: npm run -s explain)' };
  return { check, ok: true, detail: `injected by ${injected} in ${elapsedMs} ms` };
}

/** A read that should answer 200: OK, or its status and message. */
export function answerFinding(check: string, status: number, body: unknown, fix: string, okDetail: string): Finding {
  if (status === 200 || status === 201) return { check, ok: true, detail: okDetail };
  return { check, ok: false, detail: `HTTP ${status}: ${stringOf(objectOf(body)?.message) ?? 'no message'}`, fix };
}

/** The paths installed: the pod webhook, and the injection policy (pod-inject rendered with its matchConditions). */
export interface InstalledPaths {
  podWebhook: boolean;
  policy: boolean;
}

/**
 * Which path injects each set: pod-inject, or with the policy installed the
 * rule's verdict (lib/sidecarset/injection-path.ts), which must agree with the
 * annotation the policy reads (written by defaulting when the set was stored).
 */
export function injectionPathFindings(sets: readonly unknown[], paths: InstalledPaths): Finding[] {
  return sets.map((set) => {
    const name = stringOf(objectOf(objectOf(set)?.metadata)?.name) ?? '?';
    const check = `SidecarSet ${name}`;
    if (!paths.podWebhook) return { check, ok: false, detail: 'no path injects it: the pod webhook is not installed', fix: 'apply the webhook configurations' };
    if (!paths.policy || !isObject(set)) return { check, ok: true, detail: 'injected by the pod-inject webhook' };
    const rule = injectionPath(set);
    const recorded = stringOf(objectOf(objectOf(objectOf(set)?.metadata)?.annotations)?.[ANNOTATION_INJECTION_PATH]);
    if (recorded !== rule.path) {
      return { check, ok: false, detail: `its ${ANNOTATION_INJECTION_PATH} annotation says ${recorded ?? 'nothing'}, the rule says ${rule.path} (${rule.reason}): the policy follows the annotation`, fix: 'apply the set again (kubectl apply), so defaulting writes the rule\'s verdict' };
    }
    return { check, ok: true, detail: rule.path === 'policy' ? 'injected by the injection policy (alone on a pod; with other sets, by pod-inject)' : `injected by the pod-inject webhook: ${rule.reason}` };
  });
}

/**
 * The reconciler's last resync, from its heartbeat Lease
 * (lib/status-sync/lease.ts): recent while renewTime is within
 * leaseDurationSeconds of now.
 */
export function leaseFinding(namespace: string, lease: unknown, nowMs: number): Finding {
  const check = 'status-sync reconciler';
  const at = `Lease ${namespace}/${STATUS_SYNC_LEASE_NAME}`;
  if (lease === undefined) return { check, ok: false, detail: `no ${at}: the reconciler never finished a resync against this cluster, or predates the Lease`, fix: 'check that its schedule is enabled and its credential is the status-sync identity (infra/k8s/rbac.yaml), and read the function\'s logs' };
  const spec = objectOf(objectOf(lease)?.spec);
  const renewTime = stringOf(spec?.renewTime);
  const duration = spec?.leaseDurationSeconds;
  const renewedMs = renewTime === undefined ? Number.NaN : Date.parse(renewTime);
  if (Number.isNaN(renewedMs) || typeof duration !== 'number') return { check, ok: false, detail: `${at} carries no renewTime or leaseDurationSeconds`, fix: 'delete it (kubectl delete lease); the next resync writes it again' };
  const agoS = Math.max(0, Math.round((nowMs - renewedMs) / 1000));
  const by = stringOf(spec?.holderIdentity) ?? '?';
  if (agoS > duration) return { check, ok: false, detail: `last resync ${agoS} s ago (${at} renewTime ${renewTime} by ${by}), longer than its ${duration} s: the reconciler stopped`, fix: 'check its schedule (the EventBridge rule, or npm start\'s STATUS_SYNC_INTERVAL_MS) and its logs' };
  return { check, ok: true, detail: `last resync ${agoS} s ago (${at} renewTime ${renewTime} by ${by}, valid ${duration} s)` };
}

export function findingLine(f: Finding): string {
  return f.ok ? `OK    ${f.check}: ${f.detail}` : `FAIL  ${f.check}: ${f.detail}${f.fix === undefined ? '' : `; ${f.fix}`}`;
}
