/**
 * What the reconciler tells when rotation refused webhooks pointing at URLs
 * the deployment did not make (rotation.ts): one Warning Event on each
 * configuration (or the CRD) holding such a webhook, naming each one and
 * where it points. Someone repointed admission, or applied another
 * deployment's manifests: either way pods are being sent elsewhere.
 */
import type { AdmissionConfigEvent } from '../ports.ts';
import { CRD_NAME } from '../crd/sidecarset-crd.ts';
import { WEBHOOK_CONFIGURATION_NAME } from './webhook-configurations.ts';
import { describeRefused, type RefusedWebhook } from '../auth/rotation.ts';

export const WEBHOOK_NOT_DEPLOYED = 'WebhookNotDeployed';

function objectOf(configuration: RefusedWebhook['configuration']): AdmissionConfigEvent['object'] {
  return configuration === 'CustomResourceDefinition'
    ? { apiVersion: 'apiextensions.k8s.io/v1', kind: configuration, name: CRD_NAME }
    : { apiVersion: 'admissionregistration.k8s.io/v1', kind: configuration, name: WEBHOOK_CONFIGURATION_NAME };
}

/** One Warning Event per configuration holding refused webhooks, in the order they were found. */
export function refusedWebhookEvents(refused: readonly RefusedWebhook[]): AdmissionConfigEvent[] {
  const byConfiguration = new Map<RefusedWebhook['configuration'], RefusedWebhook[]>();
  for (const r of refused) byConfiguration.set(r.configuration, [...(byConfiguration.get(r.configuration) ?? []), r]);
  return [...byConfiguration].map(([configuration, webhooks]) => ({
    object: objectOf(configuration),
    type: 'Warning',
    reason: WEBHOOK_NOT_DEPLOYED,
    message: `${webhooks.map(describeRefused).join('; ')}: no webhook secret is written into it and no rotation starts; render the manifests afresh (npm run manifests) and apply them, and find out who changed them`,
  }));
}
