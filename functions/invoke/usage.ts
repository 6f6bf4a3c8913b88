/**
 * The invoke command's help: `invoke --help` lists the functions, and each
 * function's `--help` says what that function reads, prints and exits with.
 * The rollout's waiting reasons come from a table keyed by the planner's own
 * reasons, so a reason added or removed there fails to compile here.
 */
import type { WaitingReason } from '../../lib/rollout/plan.ts';
import { STATUS_SYNC } from '../../lib/status-sync/resync.ts';
import { FUNCTION_DESCRIPTORS, SIDECARSET_CONVERT, type ListedDescriptor } from '../../lib/webhooks/descriptors.ts';
import { FUNCTION_HELP } from './function-help.ts';
import { EXPLAIN } from './explain.ts';

type AdmissionDescriptor = Extract<ListedDescriptor, { answers: 'AdmissionReview' }>;

/** The offline rollout plan: what one reconcile would update, nothing written. */
export const ROLLOUT = 'rollout';

const CLUSTER_FILES = `  --sidecarsets, --namespaces, --pods FILE
                     what the function sees of the cluster: one object, an array, a List or several YAML
                     documents. A SidecarSet without the kruise.io/sidecarset-hash annotation is defaulted
                     on read, as sidecarset-default would have stored it; one with it is used as given.`;

const EVENT = `  -f, --event FILE   the request, JSON or YAML (standard input when absent or "-"): an AdmissionReview v1
                     request, or a plain %KIND%, which is wrapped in the review the API server would send`;

const OUTPUT = `  -o, --output yaml|json
                     print the resulting object instead of the review; warnings and a denial's reasons go to
                     standard error.`;

const ADMISSION_EXIT = `exit codes: 0 the review printed (allowed or denied), or with -o the allowed object printed;
            1 the function could not decide (a webhook answers HTTP 500/503, so failurePolicy applies);
            2 bad input (usage, unreadable file, not JSON/YAML, not a request the function takes);
            3 with -o, the request was denied.`;

const PLAN_EXIT = `exit codes: 0 printed; 1 a set's namespaceSelector needs a Namespace missing from --namespaces;
            2 bad input (a missing --sidecarsets or --pods, an unreadable file, a file of the wrong kind).`;

const UPDATE = `  --operation CREATE|UPDATE, --old FILE
                     an UPDATE review of the plain object, --old being the object as stored (default CREATE)`;

/** Each waiting reason of the rollout plan, as `invoke rollout` prints it. */
const WAITING_REASONS: Record<WaitingReason['kind'], string> = {
  'not-update': 'updateStrategy.type is NotUpdate',
  finished: 'every matched pod runs the current sidecars and is ready (also when no pod matches)',
  'hot-swapping': 'every pod updated, some still between the two writes of a hot upgrade',
  flipping: 'the reconcile resets finished hot upgrades\' old containers to the empty image and updates no pod (Kruise 1.9)',
  'updated-not-ready': 'every matched pod updated, some not ready yet (restarting, or stuck: the kubelet\'s waiting reasons are named)',
  paused: 'updateStrategy.paused is true',
  'max-unavailable': 'maxUnavailable updated pods are (or, after this reconcile, will be) not ready',
  partition: 'the remaining pods are held back by updateStrategy.partition',
  'nothing-waiting': 'the pods left are not upgradable, outside updateStrategy.selector, or still restarting',
  'invalid-strategy': 'partition or maxUnavailable is neither an integer nor a percentage',
};

const REVISIONS = `  --revisions FILE   the ControllerRevisions a set that pins a revision (injectionStrategy.revision) is
                     decided with: one object, an array, a List or several YAML documents, all in one
                     namespace. Without it such a set cannot be decided (exit 1).`;

const NAMESPACE = `  --namespace NS     the namespace of a plain %KIND% that names none (default "default")`;

/**
 * One admission function's help, from its descriptor: the options are those
 * of what it reviews and reads, so a function added to the list has its
 * help without an entry here.
 */
function admissionUsage(d: AdmissionDescriptor): string {
  const ops = new Set(d.caller.rules.flatMap((rule) => rule.operations));
  const namespaced = d.caller.rules.some((rule) => rule.scope === 'Namespaced');
  const readsObjects = d.reads.sidecarSets || d.reads.namespaces;
  const options = [
    '[-f|--event FILE]',
    ...(ops.has('UPDATE') ? ['[--operation CREATE|UPDATE --old FILE]'] : []),
    ...(namespaced ? ['[--namespace NS]'] : []),
    ...(readsObjects ? ['[--sidecarsets FILE] [--namespaces FILE]'] : []),
    ...(d.reads.revisions ? ['[--revisions FILE]'] : []),
    // Taken (and checked) by every admission function that reads the cluster, as CLUSTER_FILES says.
    ...(readsObjects ? ['[--pods FILE]'] : []),
    '[-o|--output yaml|json]',
  ];
  const head = `usage: invoke ${d.name} `;
  // Wrapped as a terminal shows it: continuation lines start under the first option.
  const lines: string[] = [];
  let line = head;
  for (const option of options) {
    if (line.length + option.length > 110 && line.trim() !== head.trim()) {
      lines.push(line.trimEnd());
      line = ' '.repeat(head.length);
    }
    line += `${option} `;
  }
  lines.push(line.trimEnd());
  const before = FUNCTION_DESCRIPTORS.filter((m) => d.caller.in === 'ValidatingWebhookConfiguration' && m.caller.in === 'MutatingWebhookConfiguration' && m.reviews === d.reviews);
  const about = [
    FUNCTION_HELP[d.name].about,
    ...(before.length > 0
      ? [`A plain ${d.reviews} (and a plain --old one) goes through ${before.map((m) => m.name).join(', ')} first, as the API server runs mutating webhooks before validating ones.`]
      : []),
  ].join(' ');
  return [
    lines.join('\n'),
    wrap(about),
    '',
    EVENT.replace('%KIND%', d.reviews),
    ...(ops.has('UPDATE') ? [UPDATE] : []),
    ...(namespaced ? [NAMESPACE.replace('%KIND%', d.reviews)] : []),
    ...(readsObjects ? [CLUSTER_FILES] : []),
    ...(d.reads.revisions ? [REVISIONS] : []),
    OUTPUT,
    '',
    ADMISSION_EXIT,
  ].join('\n');
}

/** Text broken into lines of at most 105 characters. */
function wrap(text: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > 105) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines.join('\n');
}

const STATUS_SYNC_USAGE = `usage: invoke ${STATUS_SYNC} --sidecarsets FILE --pods FILE [--namespaces FILE]
Prints the statuses one resync would write, nothing written anywhere:
  [{"name": <SidecarSet>, "status": <its new status>}] for the sets whose status would change.

${CLUSTER_FILES}

${PLAN_EXIT}`;

const ROLLOUT_USAGE = `usage: invoke ${ROLLOUT} --sidecarsets FILE --pods FILE [--namespaces FILE]
Prints what one in-place rollout reconcile would do, sets by name, nothing written anywhere:
  {"flips": [{"sidecarSet", "namespace", "name", "container"}]  (HotUpgrade containers reset to the empty
             image because their new twin runs ready; written first, even when paused or NotUpdate),
   "updates": [{"sidecarSet", "namespace", "name", "images": {<container>: <new image>}}]  (in write order),
   "notUpgradable": [{"sidecarSet", "namespace", "name"}]  (sidecars changed in more than the image),
   "waiting": [{"sidecarSet", "reason", "message"}]}  (sets updating nothing more this reconcile)
waiting reasons:
${Object.entries(WAITING_REASONS)
  .map(([reason, meaning]) => `  ${reason.padEnd(17)}${meaning}`)
  .join('\n')}
Pods need their status (readiness, image IDs), as kubectl get pods -o yaml shows it.

${CLUSTER_FILES}

${PLAN_EXIT}`;

const CONVERT_USAGE = `usage: invoke ${SIDECARSET_CONVERT.name} [-f|--event FILE] [--to v1alpha1|v1beta1] [-o|--output yaml|json]
${wrap(FUNCTION_HELP[SIDECARSET_CONVERT.name].about)}
The mapping is OpenKruise 1.9's, made lossless (docs/CONVERSION.md).

  -f, --event FILE   the request, JSON or YAML (standard input when absent or "-"): a ConversionReview
                     (apiextensions.k8s.io/v1) request, or a plain SidecarSet of apps.kruise.io/v1alpha1 or
                     v1beta1, which is wrapped in the review the API server would send
  --to v1alpha1|v1beta1
                     the version to convert a plain SidecarSet to (required for one; a review names its own)
${OUTPUT.replace('the resulting object instead of the review', 'the converted object instead of the review (several as YAML documents or a JSON array)').replace('; warnings and a denial\'s reasons go to\n                     standard error', ';\n                     why a review failed goes to standard error')}

exit codes: 0 the review printed (converted or failed), or with -o the converted objects printed;
            2 bad input (usage, unreadable file, not JSON/YAML, neither a ConversionReview nor a SidecarSet);
            3 with -o, the review failed (an object cannot be converted: the message names it).`;

const EXPLAIN_USAGE = `usage: invoke ${EXPLAIN} [-f|--event FILE] --sidecarsets FILE [--namespaces FILE] [--revisions FILE] [--pods FILE]
                     [--namespace NS] [-o|--output text|json]
For each SidecarSet: whether pod-inject injects it into the pod and, if not, exactly why (the selector term and
the label it wants, the namespace or namespaceSelector, a canary in its place, injection paused); what it injects
(containers, init containers, volumes, the revision). The pod goes through pod-inject as invoke pod-inject sends it.
A pod that already carries injections (kubectl get pod -o yaml) also gets its rollout standing: whether it runs
each set's current sidecars and, if not, what holds it, planned over it and the pods of --pods.

${EVENT.replace('%KIND%', 'Pod')}
${NAMESPACE.replace('%KIND%', 'Pod')}
${CLUSTER_FILES}
${REVISIONS}
  -o, --output json  the explanation as JSON (default: text)

exit codes: 0 explained; 1 pod-inject could not decide (a namespaceSelector needs a Namespace missing from
            --namespaces, a pinned revision missing from --revisions); 2 bad input (usage, unreadable file,
            not a Pod); 3 pod-inject would refuse the pod (the explanation says why).`;

/** `invoke --help`, and the text after a usage error: every function, one line each. */
export const USAGE = `usage: invoke <function> [options]      (invoke <function> --help for its options)
functions:
${FUNCTION_DESCRIPTORS.map((d) => `  ${d.name.padEnd(21)}${FUNCTION_HELP[d.name].summary}`).join('\n')}
  ${STATUS_SYNC.padEnd(21)}the statuses one resync would write
  ${ROLLOUT.padEnd(21)}what one in-place rollout reconcile would do
  ${EXPLAIN.padEnd(21)}why each SidecarSet injects a pod or not, and what holds its rollout`;

/** The help of one function, or the general one for a name that is none. */
export function usageOf(fn: string | undefined): string {
  if (fn === STATUS_SYNC) return STATUS_SYNC_USAGE;
  if (fn === ROLLOUT) return ROLLOUT_USAGE;
  if (fn === EXPLAIN) return EXPLAIN_USAGE;
  const descriptor = FUNCTION_DESCRIPTORS.find((d) => d.name === fn);
  if (descriptor === undefined) return USAGE;
  return descriptor.answers === 'ConversionReview' ? CONVERT_USAGE : admissionUsage(descriptor);
}
