/**
 * What the reconciler tells when rotation refused webhooks pointing at URLs
 * the deployment did not make (rotation.ts): one Warning Event on each
 * configuration (or the CRD) holding such a webhook, naming each one and
 * where it points. Someone repointed admission, or applied another
 * deployment's manifests: either way pods are being sent elsewhere.
 * And when the resync repaired webhooks whose secret segment no function
 * accepted: one Warning Event on each configuration, naming them (every pod
 * creation or SidecarSet write through them was failing until then).
 */
import type { AdmissionConfigEvent, AdmissionConfigEventSink } from '../ports.ts';
import { CRD_NAME } from '../crd/sidecarset-crd.ts';
import { WEBHOOK_CONFIGURATION_NAME } from './webhook-configurations.ts';
import { describeRefused, type RefusedWebhook, type RepairedWebhook } from '../auth/rotation.ts';

export const WEBHOOK_NOT_DEPLOYED = 'WebhookNotDeployed';
export const WEBHOOK_SECRET_REPAIRED = 'WebhookSecretRepaired';

function objectOf(configuration: RefusedWebhook['configuration']): AdmissionConfigEvent['object'] {
  return configuration === 'CustomResourceDefinition'
    ? { apiVersion: 'apiextensions.k8s.io/v1', kind: configuration, name: CRD_NAME }
    : { apiVersion: 'admissionregistration.k8s.io/v1', kind: configuration, name: WEBHOOK_CONFIGURATION_NAME };
}

function byConfiguration<T extends { configuration: RefusedWebhook['configuration'] }>(webhooks: readonly T[]): Map<T['configuration'], T[]> {
  const out = new Map<T['configuration'], T[]>();
  for (const w of webhooks) out.set(w.configuration, [...(out.get(w.configuration) ?? []), w]);
  return out;
}

/** One Warning Event per configuration holding refused webhooks, in the order they were found. */
export function refusedWebhookEvents(refused: readonly RefusedWebhook[]): AdmissionConfigEvent[] {
  return [...byConfiguration(refused)].map(([configuration, webhooks]) => ({
    object: objectOf(configuration),
    type: 'Warning',
    reason: WEBHOOK_NOT_DEPLOYED,
    message: `${webhooks.map(describeRefused).join('; ')}: no webhook secret is written into it and no rotation starts; render the manifests afresh (npm run manifests) and apply them, and find out who changed them`,
  }));
}

/** One Warning Event per configuration holding repaired webhooks. */
export function repairedWebhookEvents(repaired: readonly RepairedWebhook[]): AdmissionConfigEvent[] {
  return [...byConfiguration(repaired)].map(([configuration, webhooks]) => ({
    object: objectOf(configuration),
    type: 'Warning',
    reason: WEBHOOK_SECRET_REPAIRED,
    message: `${webhooks.map((w) => `webhook "${w.webhook}"`).join(', ')} carried a last URL segment that is not the webhook secret (every call through it was refused): pointed back at the secret; find out who changed it (a stale copy applied, or the reconciler's credential)`,
  }));
}

/** rotation.ts's `recordRepaired` through `sink`: every Event is tried; the first failure is thrown after. */
export function repairRecorder(sink: AdmissionConfigEventSink): (repaired: readonly RepairedWebhook[], signal?: AbortSignal) => Promise<void> {
  return async (repaired, signal) => {
    const outcomes = await Promise.allSettled(repairedWebhookEvents(repaired).map((event) => sink.record(event, signal)));
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed !== undefined) throw failed.reason instanceof Error ? failed.reason : new Error(String(failed.reason));
  };
}
