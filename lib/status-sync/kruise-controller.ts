/**
 * Whether OpenKruise's own SidecarSet controller runs in a cluster, from the
 * objects its installation creates (config/ and its Helm chart, with the
 * `kruise-` name prefix): the kruise-controller-manager Deployment in
 * kruise-system, which runs the SidecarSet controller, and the
 * kruise-mutating-webhook-configuration whose msidecarset.kb.io and
 * mpod.kb.io entries default SidecarSets and inject pods. Two reconcilers
 * would update the same pods from different views and fight over each
 * SidecarSet's status, so the local server refuses to reconcile where either
 * is there. Pure: the caller reads the two objects.
 */
import { arrayOf, objectOf, stringOf } from '../kube/json.ts';

export const KRUISE_NAMESPACE = 'kruise-system';
export const KRUISE_MANAGER_DEPLOYMENT = 'kruise-controller-manager';
export const KRUISE_MUTATING_WEBHOOK_CONFIGURATION = 'kruise-mutating-webhook-configuration';
/** Kruise's webhook entries that serve SidecarSets: defaulting the set, injecting the pod. */
export const KRUISE_SIDECARSET_WEBHOOKS = ['msidecarset.kb.io', 'mpod.kb.io'] as const;

/**
 * What shows Kruise's SidecarSet controller in the cluster, one phrase per
 * sign; empty when neither object is there (or the Deployment is scaled to 0
 * and the webhook configuration holds no SidecarSet entry).
 * @param deployment the Deployment kruise-system/kruise-controller-manager, undefined when there is none.
 * @param webhooks the MutatingWebhookConfiguration kruise-mutating-webhook-configuration, undefined when there is none.
 */
export function kruiseControllerSigns(deployment: unknown, webhooks: unknown): string[] {
  const signs: string[] = [];
  const spec = objectOf(objectOf(deployment)?.spec);
  if (deployment !== undefined && spec?.replicas !== 0) {
    const replicas = typeof spec?.replicas === 'number' ? spec.replicas : 1;
    signs.push(`Deployment ${KRUISE_NAMESPACE}/${KRUISE_MANAGER_DEPLOYMENT} (${replicas} replica(s)) runs Kruise's controllers, its SidecarSet controller among them`);
  }
  if (webhooks !== undefined) {
    const names = arrayOf(objectOf(webhooks)?.webhooks).map((w) => stringOf(objectOf(w)?.name) ?? '');
    const entries = KRUISE_SIDECARSET_WEBHOOKS.filter((name) => names.includes(name));
    if (entries.length > 0) signs.push(`MutatingWebhookConfiguration ${KRUISE_MUTATING_WEBHOOK_CONFIGURATION} holds Kruise's SidecarSet webhooks (${entries.join(', ')})`);
  }
  return signs;
}

/** The refusal, naming the signs and what to do. */
export function kruiseRefusal(cluster: string, signs: readonly string[]): string {
  return (
    `refusing to reconcile ${cluster}: OpenKruise's own SidecarSet controller runs there (${signs.join('; ')}), ` +
    `and two controllers would roll the same pods and overwrite each other's SidecarSet status. ` +
    `Remove Kruise's SidecarSet controller and webhooks first (docs/OPERATIONS.md, "Migrating from or coexisting with OpenKruise"), ` +
    `or start without --reconcile to serve the webhooks only.`
  );
}
