/**
 * Whether the API server calls the pod webhook for a pod at all: a
 * MutatingWebhookConfiguration's webhook for pod CREATE is called only for
 * pods its namespaceSelector and objectSelector select (ours leaves out the
 * system namespaces, those excluded at deployment and any namespace labelled
 * `sidecarset.kruise.io/injection=disabled`, lib/webhook-config/). Read from
 * the configuration as stored, so what was deployed is what is told.
 */
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import { selectorMismatch, type SelectorMismatch } from '../kube/label-selector.ts';

/** Why the webhook is not called for the pod: which selector of which webhook, and the term that fails. */
export interface WebhookGate {
  webhook: string;
  selector: 'namespaceSelector' | 'objectSelector';
  mismatch: SelectorMismatch;
}

/** The configuration's webhooks that see pod CREATE. */
function podCreateWebhooks(configuration: unknown): Record<string, unknown>[] {
  return arrayOf(objectOf(configuration)?.webhooks)
    .filter(isObject)
    .filter((webhook) =>
      arrayOf(webhook.rules)
        .filter(isObject)
        .some((rule) => {
          const resources = arrayOf(rule.resources);
          const operations = arrayOf(rule.operations);
          return (resources.includes('pods') || resources.includes('*')) && (operations.includes('CREATE') || operations.includes('*'));
        }),
    );
}

/**
 * The first pod-CREATE webhook of `configuration` whose selectors leave the
 * pod out, with the failing term; undefined when every such webhook is
 * called for it (or the configuration has none). An absent selector
 * selects everything, as the API server reads it.
 */
export function webhookGate(configuration: unknown, podLabels: Readonly<Record<string, string>>, namespaceLabels: Readonly<Record<string, string>>): WebhookGate | undefined {
  for (const webhook of podCreateWebhooks(configuration)) {
    const name = stringOf(webhook.name) ?? '';
    const checks = [
      ['namespaceSelector', webhook.namespaceSelector, namespaceLabels],
      ['objectSelector', webhook.objectSelector, podLabels],
    ] as const;
    for (const [selector, value, labels] of checks) {
      if (value === undefined || value === null) continue;
      const mismatch = selectorMismatch(value, labels);
      if (mismatch !== undefined) return { webhook: name, selector, mismatch };
    }
  }
  return undefined;
}
