import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../lib/kube/types.ts';
import { assessMigration, type MigrationSnapshot } from '../../lib/migrate/assess.ts';
import { recognisePod } from '../../lib/migrate/pod-recognition.ts';
import { formatReport } from '../../lib/migrate/report-text.ts';
import { currentRevisionName, newRevision } from '../../lib/sidecarset/revisions.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { NOW, pod, sidecarSet } from '../../testkit/sidecarset-objects.ts';

/** A pod injected with the set and running ready, each container on the image its spec names. */
function runningPod(set: SidecarSet, name: string): Pod {
  const injected = injectPod({ pod: { ...pod(), metadata: { ...pod().metadata, name } }, namespace: 'default', sidecarSets: [set], namespaceLabels: new Map(), now: NOW }).pod;
  const containers = injected.spec?.containers ?? [];
  return {
    ...injected,
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: containers.map((c) => ({ name: c.name, image: c.image, imageID: `${c.image ?? ''}-id`, ready: true })),
    },
  };
}

function withImage(set: SidecarSet, image: string): SidecarSet {
  const spec = structuredClone(set.spec ?? {});
  const first = spec.containers?.[0];
  if (first !== undefined) first.image = image;
  return defaultSidecarSet({ ...set, metadata: { ...set.metadata, annotations: {} }, spec });
}

const manager = (image: string, replicas = 1) => ({ spec: { replicas, template: { spec: { containers: [{ name: 'manager', image }] } } }, status: { readyReplicas: replicas } });
const kruiseCrd = { metadata: { name: 'sidecarsets.apps.kruise.io' }, spec: { versions: [{ name: 'v1alpha1', served: true, storage: true }] }, status: { storedVersions: ['v1alpha1'] } };
const kruise19Crd = {
  metadata: { name: 'sidecarsets.apps.kruise.io' },
  spec: { conversion: { strategy: 'Webhook' }, versions: [{ name: 'v1alpha1', served: true, storage: false }, { name: 'v1beta1', served: true, storage: true }] },
  status: { storedVersions: ['v1alpha1', 'v1beta1'] },
};
const ourCrd = { ...kruiseCrd, metadata: { ...kruiseCrd.metadata, labels: { 'app.kubernetes.io/part-of': 'serverless-sidecarset' } } };
const kruiseMutating = { webhooks: [{ name: 'msidecarset.kb.io', rules: [{ apiGroups: ['apps.kruise.io'], resources: ['sidecarsets'], operations: ['CREATE'] }] }, { name: 'mpod.kb.io', rules: [{ apiGroups: [''], resources: ['pods'], operations: ['CREATE'] }] }] };
const ourMutating = { webhooks: [{ name: 'sidecarset-default.sidecarset.kruise.io' }, { name: 'pod-inject.sidecarset.kruise.io' }] };
const ourValidating = { webhooks: [{ name: 'sidecarset-validate.sidecarset.kruise.io' }] };

const base = sidecarSet('log');
/** The set as Kruise's controller leaves it after the pods were injected: status written, its revision registered. */
function settled(set: SidecarSet, pods: readonly Pod[]): SidecarSet {
  return { ...set, status: { observedGeneration: 1, matchedPods: pods.length, updatedPods: pods.length, readyPods: pods.length, updatedReadyPods: pods.length, latestRevision: currentRevisionName(set) } };
}

function snapshot(overrides: Partial<MigrationSnapshot> = {}): MigrationSnapshot {
  const pods = [runningPod(base, 'a'), runningPod(base, 'b')];
  return {
    kruiseNamespace: 'kruise-system',
    revisionNamespace: 'kruise-system',
    manager: manager('openkruise/kruise-manager:v1.8.2'),
    kruiseMutating,
    kruiseValidating: undefined,
    ourMutating: undefined,
    ourValidating: undefined,
    crd: kruiseCrd,
    sets: [settled(base, pods)],
    revisions: [newRevision(base, 'kruise-system', 1, 0)],
    pods,
    namespaceLabels: new Map(),
    ...overrides,
  };
}

describe('the migration preflight', () => {
  it('a settled Kruise 1.8 cluster is ready, restarts no pod, and the next step puts the CRD and RBAC in place', () => {
    const report = assessMigration(snapshot());
    expect(report.blockers).toEqual([]);
    expect(report.notes).toEqual([]);
    expect(report.kruise.line).toBe('1.8');
    expect(report.kruise.controllerActive).toBe(true);
    expect(report.sets[0]).toMatchObject({ name: 'log', wouldUpdate: [], wouldFlip: [], statusDiffers: [], revisionsIn: { 'kruise-system': 1 } });
    expect(report.next.step).toBe(3);
    const text = formatReport(report);
    expect(text).toContain('A switch now would restart no pod');
    expect(text).toContain('READY');
    expect(text).toContain('Next: step 3');
  });

  it('a rollout in flight blocks: the reconciler would update pods now, named', () => {
    const pods = [runningPod(base, 'a'), runningPod(base, 'b')];
    const newer = withImage(base, 'log:2.0');
    const report = assessMigration(snapshot({ sets: [{ ...settled(newer, pods), status: { ...settled(newer, pods).status, updatedPods: 0, updatedReadyPods: 0 } }], pods }));
    expect(report.sets[0]?.wouldUpdate).toEqual(['default/a']);
    expect(report.blockers).toEqual([expect.stringContaining('SidecarSet log: a reconcile now would update 1 pod(s) in place (default/a)')]);
    expect(formatReport(report)).toContain('A switch now would restart 1 pod');
  });

  it('the same rollout paused restarts nothing now: ready, and the plan says why', () => {
    const pods = [runningPod(base, 'a')];
    const paused = withImage(sidecarSet('log', { updateStrategy: { type: 'RollingUpdate', paused: true } }), 'log:2.0');
    const report = assessMigration(snapshot({ sets: [{ ...settled(paused, pods), status: { ...settled(paused, pods).status, updatedPods: 0, updatedReadyPods: 0 } }], pods }));
    expect(report.blockers).toEqual([]);
    expect(report.sets[0]?.why).toContain('paused');
  });

  it("a stored status that differs from the reconciler's is a note (it is rewritten, no pod is touched)", () => {
    const pods = [runningPod(base, 'a')];
    const report = assessMigration(snapshot({ sets: [{ ...settled(base, pods), status: { ...settled(base, pods).status, readyPods: 0 } }], pods }));
    expect(report.blockers).toEqual([]);
    expect(report.notes).toEqual([expect.stringContaining('readyPods 0 → 1')]);
  });

  it('pods whose annotations cannot be read block, named; the early string form is recognised', () => {
    const good = runningPod(base, 'a');
    const broken: Pod = { ...runningPod(base, 'b'), metadata: { ...runningPod(base, 'b').metadata, annotations: { 'kruise.io/sidecarset-hash': '{"log":"abc","x":{"hash":"d"}}' } } };
    const old: Pod = { ...runningPod(base, 'c'), metadata: { ...runningPod(base, 'c').metadata, annotations: { 'kruise.io/sidecarset-hash': JSON.stringify({ log: 'abc' }) } } };
    expect(recognisePod(good).kind).toBe('current');
    expect(recognisePod(old).kind).toBe('old-form');
    expect(recognisePod(broken)).toMatchObject({ kind: 'unrecognised', annotation: 'kruise.io/sidecarset-hash' });
    expect(recognisePod({ metadata: { annotations: { 'kruise.io/sidecarset-hash-without-image': 'not json' } } }).kind).toBe('unrecognised');
    expect(recognisePod(pod()).kind).toBe('none');
    const report = assessMigration(snapshot({ pods: [good, broken, old], sets: [settled(base, [good])] }));
    expect(report.unrecognisedPods.map((p) => p.pod)).toEqual(['default/b']);
    expect(report.oldFormPods.map((p) => p.pod)).toEqual(['default/c']);
    expect(report.blockers).toEqual(expect.arrayContaining([expect.stringContaining('1 pod(s) carry SidecarSet annotations this project cannot read (default/b)')]));
  });

  it("Kruise 1.9 storing v1beta1 does not block the CRD step: this project's CRD stores v1beta1 too", () => {
    const report = assessMigration(snapshot({ manager: manager('openkruise/kruise-manager:v1.9.0'), crd: kruise19Crd }));
    expect(report.kruise.line).toBe('1.9');
    expect(report.crd).toMatchObject({ ours: false, storage: 'v1beta1', storedVersions: ['v1alpha1', 'v1beta1'], conversionWebhook: true });
    expect(report.blockers).toEqual([]);
    expect(report.next).toMatchObject({ step: 3, text: expect.stringContaining('sidecarset-convert answering first') });
  });

  it("this project's CRD over objects a v1alpha1 CRD stored notes that their v1beta1 reads convert until they are rewritten", () => {
    const ours19 = { ...kruise19Crd, metadata: { ...kruise19Crd.metadata, labels: { 'app.kubernetes.io/part-of': 'serverless-sidecarset' } } };
    const report = assessMigration(snapshot({ crd: ours19 }));
    expect(report.blockers).toEqual([]);
    expect(report.notes).toEqual([expect.stringContaining('may still be stored as v1alpha1')]);
    expect(assessMigration(snapshot({ crd: { ...ours19, status: { storedVersions: ['v1beta1'] } } })).notes).toEqual([]);
  });

  it('another Kruise line blocks; an image without a version tag is a note', () => {
    expect(assessMigration(snapshot({ manager: manager('openkruise/kruise-manager:v1.6.0') })).blockers).toEqual([expect.stringContaining('Kruise v1.6.0 is neither 1.8 nor 1.9')]);
    const digest = assessMigration(snapshot({ manager: manager('openkruise/kruise-manager@sha256:00') }));
    expect(digest.blockers).toEqual([]);
    expect(digest.notes).toEqual([expect.stringContaining("Kruise's version is unknown")]);
  });

  it('revisions kept in another namespace than the one this project reads block, with the setting that fixes it', () => {
    const report = assessMigration(snapshot({ revisions: [newRevision(base, 'kruise', 1, 0)] }));
    expect(report.blockers).toEqual([expect.stringContaining('SIDECARSET_REVISION_NAMESPACE=kruise')]);
  });

  it('a pinned revision this project cannot find blocks: new pods would be refused', () => {
    const pinned = sidecarSet('log', { injectionStrategy: { revision: { revisionName: 'log-gone', policy: 'Always' } } });
    const report = assessMigration(snapshot({ sets: [settled(pinned, [])], pods: [] }));
    expect(report.blockers).toEqual([expect.stringContaining('pins revision log-gone')]);
  });

  it.each<[string, number, Partial<MigrationSnapshot>]>([
    ["Kruise's CRD still in place", 3, {}],
    ["this project's CRD, its webhooks not yet installed", 4, { crd: ourCrd }],
    ["both installed, Kruise's entries still answer", 5, { crd: ourCrd, ourMutating, ourValidating }],
    [
      "Kruise's entries removed from webhooks but still in the template of a running manager",
      5,
      { crd: ourCrd, ourMutating, ourValidating, kruiseMutating: { metadata: { annotations: { template: JSON.stringify(kruiseMutating.webhooks) } }, webhooks: [] } },
    ],
    ["Kruise's entries gone for good, its manager still running", 6, { crd: ourCrd, ourMutating, ourValidating, kruiseMutating: { metadata: { annotations: { template: '[]' } }, webhooks: [] } }],
    ['the manager scaled to zero: done', 7, { crd: ourCrd, ourMutating, ourValidating, kruiseMutating: undefined, manager: manager('openkruise/kruise-manager:v1.8.2', 0) }],
  ])('%s: the next step is %d', (_d, step, overrides) => {
    expect(assessMigration(snapshot(overrides)).next.step).toBe(step);
  });
});
