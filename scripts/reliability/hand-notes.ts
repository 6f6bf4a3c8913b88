/**
 * What docs/RELIABILITY.md says beside the generated figures: measurements
 * taken outside a full `npm run reliability` run (a case's history, runs at
 * other loads) and the sections written from integration suites. Kept here,
 * in the generator's source, so that regenerating the document keeps them
 * (they were written into the document by hand and dropped by each rerun).
 * Update them here when a measurement is taken again.
 */

/** Notes printed after a case's claim, by case name. */
export const CASE_NOTES: Readonly<Record<string, string>> = {
  '40 MiB of SidecarSets': `Measured outside full runs, through the short form \`test/e2e/large-sidecarsets.integration.test.ts\` (the same rows; \`npm run reliability -- --only load\` runs it with the other load cases), on the two cores the sessions share, so the durations follow the load:

| date (UTC), commit | load average | first SidecarSet page | cold pod-inject | its peak RSS | cold resync | its peak RSS |
|---|---|---|---|---|---|---|
| 2026-12-06 before bd6bc7c (whole list bounded by 5 s) | 34–37 | 100 sets | 503 with the default; 5,413 ms with \`KUBE_API_TIMEOUT_MS=60000\` | 249 MiB | 82.5 s | 344 MiB |
| 2026-12-06, bd6bc7c (each page bounded by 5 s) | 38–40 | 100 sets | failed twice: the first page (100 sets) passed the 16 MiB cap, was thrown away and asked again for 12 sets (12 MiB), which the API server did not send within 5 s; once the review's own 9 s deadline passed | | | |
| 2026-12-06 06:38, whole integration run | ~3 | 100 sets | 3,254 ms | 255 MiB | 19.9 s | 365 MiB |
| 2026-12-06 07:30, h-fence (first page of 4 sets, spec at most 1 MiB) | 7–15 | 4 sets | 3,483 ms | 244 MiB | 46.4 s | 360 MiB |

So, as of the last row: a set's spec is at most 1 MiB of JSON (validation rule 15, docs/SIDECARSET.md), and the whole list's first page asks for 4 sets (4 of the largest sets validation admits fit a page's 4 MiB target), not 100: no page of this scenario passes the 16 MiB cap, none is read twice, and every page is about 4 MiB, which a loaded API server sends well within the 5 s a call may take. A cluster of small sets reads 4, then 4 (asked for as soon as the first page's head arrives), then 100 a page. The scenario's sets are 41 of just under 1 MiB (40.8 MiB), each valid under the new rule. What a cold pod-inject still does is read every set before it answers: its time grows with the sets' total bytes (about 3.5 s for 40 MiB here); the bound that keeps it inside the review's deadline is now the sets' count times 1 MiB, which the docs state. The resync's time is mostly the ControllerRevision of about 1 MiB it writes for each set on its first resync. Each function reads as its own identity (pod-inject as \`sidecarset-webhooks\`, the resync as \`sidecarset-status-sync\`). Before the lists were paged, one list of these sets was refused at the client's 32 MiB answer cap (\`cannot list SidecarSets: the answer is larger than 33554432 bytes; nothing cached\`, as first reported).`,
};

/** Sections after the generated ones, whole (each starts with its \`##\` heading). */
export const APPENDIX: readonly string[] = [
  `## The reconciler's credential against admission and pods

Written from the integration suites named below, not by a case of \`npm run
reliability\` (this text lives in scripts/reliability/hand-notes.ts, so a
rerun keeps it). Run on kube-apiserver v1.36.3 (the project's control plane),
2026-12-06, on the two shared cores.

**Admission configuration** (load average 35–49). Tried as
\`sidecarset-status-sync\` (and as another user in its group), each with the
JSON Patch an attacker would send
(\`test/identities/admission-config-policy.integration.test.ts\`, 23 cases):
pod-inject repointed at another host (same path and secret; another
secret), another path before the secret, another caBundle, a service instead
of the URL, an emptied namespaceSelector, an objectSelector,
\`failurePolicy: Ignore\`, another timeout, other rules, a matchCondition, the
validating configuration emptied, a second webhook added, a label added; on
the SidecarSet CRD: the stored version flipped, the schema opened up
(\`x-kubernetes-preserve-unknown-fields\`), the conversion webhook repointed
at another host, given another CA, turned off (\`strategy: None\`); DELETE of
both configurations and the CRD with RBAC widened to allow it. **Held**:
each refused with 422 naming \`sidecarset-status-sync-admission-config\` and
its rule, the object's resourceVersion unchanged. Before the policy every
one of them was admitted. The admin's own changes pass.

What still works through that policy: the rotation's patches (the adapter
status-sync uses) of the three webhooks and the 650 KB CRD's conversion URL,
in 4.4 s for the four patches at that load; the CRD's patch is judged by
comparing its whole spec in CEL, charged by cel-go as an equality of short
lists (the cost model counts top-level elements), far inside the
per-expression limit of 1,000,000 and the policy's 10,000,000. The
end-to-end rotation with pods created throughout
(\`test/e2e/rotation.integration.test.ts\`), whose reconciler runs as
\`sidecarset-status-sync\` under both policies: no pod refused, none without
its sidecar, the old secret refused afterwards.

Rotation against a webhook pointing at a URL the deployment did not make
(\`test/auth/rotation.test.ts\`): the repair does not write the secret into
it, a rotation does not start, a rotation under way keeps the old secret
instead of handing the new one over; each resync tells it (Event, metric,
alarm). **Held.**

**Pods** (load average 16–19;
\`test/identities/writer-policy.integration.test.ts\`, 26 cases, pods injected
by the core injection pod-inject runs, so carrying the rollout fence it
writes). As the reconciler: adding \`iam.amazonaws.com/role\` (kube2iam and
kiam switch the pod's AWS role on it), \`karpenter.sh/do-not-disrupt\`, or any
key no injected set's \`patchPodMetadata\` named; widening or removing the
fence (\`serverless-sidecarset/rollout-containers\`,
\`rollout-annotations\`); re-imaging a container its creator marked with
\`IS_INJECTED\` that pod-inject did not inject; re-imaging the sidecar of a pod
without the fence (created before it). **Held**: each refused with 422 naming
\`sidecarset-status-sync-pod-writes\` and its rule. Against the previous
\`infra/k8s/rbac.yaml\` (commit bd2df7f) the same suite fails 11 of 26: 7
attacks were admitted (200: the AWS role, karpenter, the unnamed key, both
widenings of the fence, the IS_INJECTED container, the pre-fence pod's
sidecar), and 4 refusals came with the old rule's words (the fence's
removal, an application image, an annotation's removal, a kubernetes.io
annotation). Still admitted: the rollout's own patch
(images, bookkeeping, a recorded \`patchPodMetadata\` key), a native
sidecar's and a HotUpgrade pair's images, the SidecarSetUpgradable
condition, and the reconciler's patch for a set that named a key after the
pod was created (the image rolls, the key is left out and reported in a
\`PatchPodMetadataHeld\` Event).`,
  `## Forged bookkeeping, secret segments, gated pods and evictions

Written from the integration suites named below (kube-apiserver v1.36.3,
2026-12-07, the two shared cores at load average 15–19), not by a case of
\`npm run reliability\`.

**Forged bookkeeping fenced by the administrator**
(\`test/migrate/fence.integration.test.ts\`, an attack chain). As
\`sidecarset-status-sync\`: \`kruise.io/sidecarset-hash\` written on two
unfenced pods of \`tenant-b\` (one naming a set whose \`patchPodMetadata\`
writes \`iam.amazonaws.com/role\`, one naming the log-agent set for a pod
carrying its own \`log-agent\` container) and one of \`kube-system\`; then the
same text written by the administrator and \`migrate fence\` run as the
administrator; then, as the reconciler, \`iam.amazonaws.com/role:
…:role/admin\` on all three and a new image for the tenant's \`log-agent\`.
**Held** at every step: the forgery refused with 422 (bookkeeping only on
a pod carrying the fence), the three pods skipped by \`migrate fence\` with
their reasons (the set does not select the pod; pod-inject is never called
for kube-system), the role and the re-image refused with 422. Before: all
three fenced, the role written, the container re-imaged.
\`migrate fence\` now also skips a container running an image
neither the set nor its ControllerRevisions declare, and a hash entry whose
\`sidecarList\` is empty (\`test/migrate/fence-backfill.test.ts\`).

**Secret segments**
(\`test/identities/admission-config-policy.integration.test.ts\`). As the
reconciler, pod-inject's and the CRD conversion's last URL segment set to
\`x\`, \`..\`, \`.\`, the empty string, \`a@evil.example.com\`,
\`..%2Fpod-change%2F<secret>\` and 1,025 base64url characters: **held**, each
refused with 422 naming \`sidecarset-status-sync-admission-config\`. (A query
string is refused by the API server's own validation.) Still possible: a
well-shaped wrong secret, admitted; one resync as the reconciler points it
back at the current secret and records a \`WebhookSecretRepaired\` Event
(write, resync and Event 687 ms here), and counts it in \`WebhooksRepointed\`,
whose alarm fires on the first. The outage is therefore the time to the
next resync: at most \`statusSyncRateMinutes\` (default 1 minute) on AWS,
\`STATUS_SYNC_INTERVAL_MS\` (30 s) on \`npm start\`, plus about a second.
The repair now takes any segment that is neither the current nor the
previous secret in a URL the deployment made (\`test/auth/rotation.test.ts\`);
before, it took secret-shaped ones only, and \`x\` stood for 80 s and more.

**Triggers a pod names for itself**
(\`test/e2e/pod-trigger-names.integration.test.ts\`, on the local stack, the
reconciler's API requests counted by its HTTP client as the pod-trigger
bench counts them). 100 pods created and deleted, 33 SidecarSets stored: 32
(\`other-00\`…\`other-31\`) select none of them. Pods no set selects that name
all 32 in \`kruise.io/sidecarset-injected-list\`, written by their creator
after creation (pod-inject runs on CREATE only, and now removes the
annotation at creation from pods no set injects): **held**, 0 requests and
no trigger, as for the same pods naming none (0); before, 256 requests.
Pods the \`real\` set injects that name the 32 others beside it (pod-inject
merges the list, as Kruise does): **held**, only \`real\` is triggered, as
for the same pods naming only it; before, 33 sets were triggered a change
(337 requests here against 167 for the pods naming only \`real\`; the count
of the same run varies from about 170 to 340 with how the reconciles
coalesce, which is why the test checks the sets triggered). A pod change
also costs one hand-over whatever the pod names: on AWS one
SendMessageBatch of at most ten sets (\`test/adapters/sqs-set-queue.integration.test.ts\`,
against goaws), where each set was its own asynchronous invoke of
status-sync: a readiness probe flapping on a pod naming 32 sets cost 32
invokes a flap, and now costs none when no named set selects the pod.

**Pods** (\`test/identities/writer-policy.integration.test.ts\`). As the
reconciler: a \`nodeSelector\` and a node affinity on a pod that still has
scheduling gates, and any bookkeeping change on a pod without the fence:
**held**, 422. The pod policy's spec rule is an allow-list now: every spec
field, and every field of each container but the fenced containers'
images, stays as it is.

**Evictions** (\`test/identities/eviction-policy.integration.test.ts\`, the
policy as \`npm run manifests -- --exclude-namespace tools\` renders it): an
eviction with a uid precondition in \`tools\`, \`kube-system\`,
\`kube-public\` and \`kube-node-lease\`: **held**, 422; one in a served
namespace is admitted. Evicting a pod without a controller, which the
policy cannot see (it sees the Eviction, not the pod), is now **held** by
the \`pod-eviction.sidecarset.kruise.io\` webhook
(\`test/identities/eviction-webhook.integration.test.ts\`, on the local
stack, kube-apiserver v1.36.3, 2026-12-07, load average about 15): as
\`sidecarset-status-sync\`, and as another member of its group, the eviction
of a pod with no ownerReference is refused with 403 \`admission webhook
"pod-eviction.sidecarset.kruise.io" denied the request:
sidecarset-status-sync may not evict pod shop/p-0: it has no controller
(no ownerReference with controller: true), so nothing would recreate it\`,
and the pod stays; ten evictions of pods a ReplicaSet controls are
admitted, each through the webhook in 9 ms at the median and 10 ms at
most (one GET of the pod, as \`sidecarset-webhooks\`); an administrator's
eviction of a pod without a controller is admitted without a call to the
webhook (its matchConditions keep it at the API server); with the
functions stopped, the reconciler's eviction is refused with 500 \`failed
calling webhook\` (\`failurePolicy: Fail\`) and the pod stays. The
reconciler's own repair (\`test/e2e/repair-missing.integration.test.ts\`)
evicts through it unchanged. A gone pod, a namesake of another uid, no uid
precondition and an unreadable pod are refused too
(\`test/webhooks/pod-eviction.test.ts\`). The admission-config policy holds
the new webhook as the others: removing it, its \`failurePolicy\` set to
\`Ignore\`, its matchConditions matching nothing, another host or other
rules, as the reconciler: 422.

**Descriptive secrets** (\`test/auth/secret-strength.test.ts\`):
\`sidecarset-webhook-secret-prod-eu-west-1-cluster-a\` (141 bits whole) and
\`my_company_name_kubernetes_webhook_secret_2026_v2\` (130 bits whole) are
refused by their first 43 characters (123 and 111 bits), where a generated
secret's 32 random bytes are; of 300 generated secrets of 32 and 64 bytes,
the lowest first-43 estimate was 137 bits.

Against the previous \`infra/k8s/rbac.yaml\` (commit 0ddafb6), the three suites
above fail 37 of 74: the 18 attacks added here are admitted with 200 (14
secret segments, the chain's forgery, bookkeeping on an unfenced pod, the
gated pod's nodeSelector and affinity), and 19 refusals come with the old
rules' words.`,
];
