/**
 * Whether the API server calls the pod webhook for a pod at all, matched as
 * k8s.io/apiserver's webhook predicates match (namespaceSelector, then
 * objectSelector). Read from the configuration as stored, so what was deployed
 * is what is explained.
 */
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import { selectorMismatch, type SelectorMismatch } from '../kube/label-selector.ts';

/** Why the webhook is not called for the pod: which selector of which webhook, and the term that fails. */
export interface WebhookSelectorMismatch {
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
export function webhookSelectorMismatch(configuration: unknown, podLabels: Readonly<Record<string, string>>, namespaceLabels: Readonly<Record<string, string>>): WebhookSelectorMismatch | undefined {
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
