import { describe, expect, it } from '@jest/globals';
import type { Container, Pod } from '../../lib/kube/types.ts';
import { declaredImages, fenceDecision, type FenceContext, type FenceDecision } from '../../lib/migrate/fence-backfill.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { ANNOTATION_FENCE_CONTAINERS, ANNOTATION_FENCE_KEYS, withoutFence } from '../../lib/sidecarset/rollout-fence.ts';
import type { ControllerRevision } from '../../lib/sidecarset/revisions.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';

const OLD_IMAGE = 'centos:6.7';

const HASH = 'kruise.io/sidecarset-hash';

/** A set named `name` selecting app=web, with `containers`, native `initContainers` and patchPodMetadata `keys`. */
function set(name: string, containers: Container[], opts: { init?: Container[]; keys?: string[] } = {}): SidecarSet {
  return defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers,
      ...(opts.init === undefined ? {} : { initContainers: opts.init }),
      ...(opts.keys === undefined ? {} : { patchPodMetadata: [{ patchPolicy: 'Overwrite', annotations: Object.fromEntries(opts.keys.map((k) => [k, 'v'])) }] }),
    },
  });
}

const hot = (name: string): Container => ({ name, image: OLD_IMAGE, upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } });
const cold = (name: string): Container => ({ name, image: OLD_IMAGE });

/** A pod pod-inject injects with `sets` today (so with the fence it writes), and the same pod as Kruise left it: no fence. */
function injected(sets: SidecarSet[], init: Container[] = []): { fenced: Pod; unfenced: Pod } {
  const plain: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-1', namespace: 'shop', uid: 'u1', resourceVersion: '42', labels: { app: 'web' }, annotations: { 'example.com/mine': 'x' } },
    spec: { containers: [{ name: 'app', image: 'nginx:1' }], ...(init.length === 0 ? {} : { initContainers: init }) },
  };
  const fenced = injectPod({ pod: plain, namespace: 'shop', sidecarSets: sets, namespaceLabels: new Map(), now: new Date('2026-01-01T00:00:00Z') }).pod;
  return { fenced, unfenced: withoutFence(fenced) };
}

/** The sets by name (and `revisions`), in a cluster whose pod-inject serves every namespace but kube-system (as rendered). */
const withRevisions = (sets: SidecarSet[], revisions: ControllerRevision[]): FenceContext => ({
  sets: new Map(sets.map((s) => [s.metadata?.name ?? '', s])),
  namespaceLabels: new Map<string, Record<string, string>>([['shop', { team: 'shop' }], ['kube-system', { 'kubernetes.io/metadata.name': 'kube-system' }], ['quiet', { 'sidecarset.kruise.io/injection': 'disabled' }]]),
  webhook: { namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] }, { key: 'sidecarset.kruise.io/injection', operator: 'NotIn', values: ['disabled'] }] } },
  declaredImages: declaredImages(sets.map((s) => [s.metadata?.name ?? '', s] as const), revisions),
});
const byName = (...sets: SidecarSet[]): FenceContext => withRevisions(sets, []);

/** The pod with its hash annotation replaced. */
function withHash(pod: Pod, value: unknown): Pod {
  return { ...pod, metadata: { ...pod.metadata, annotations: { ...pod.metadata?.annotations, [HASH]: typeof value === 'string' ? value : JSON.stringify(value) } } };
}

const a = set('a', [cold('agent')]);
const base = injected([a]).unfenced;
const entry = (sidecarList: unknown) => ({ a: { updateTimestamp: '2026-01-01T00:00:00Z', hash: 'h', sidecarSetName: 'a', sidecarList } });

describe('fenceDecision: the fence pod-inject would have written', () => {
  it.each<[string, SidecarSet[], Container[]]>([
    ['one cold sidecar', [set('a', [cold('agent')])], []],
    ['a HotUpgrade sidecar: both containers of its pair', [set('a', [hot('proxy')])], []],
    ['a native-sidecar init container, not a plain one', [set('a', [cold('agent')], { init: [{ name: 'native', image: OLD_IMAGE, restartPolicy: 'Always' }, { name: 'setup', image: OLD_IMAGE }] })], []],
    ['two sets, their patchPodMetadata keys', [set('a', [cold('agent')], { keys: ['example.com/team'] }), set('b', [hot('proxy'), cold('log')], { keys: ['example.com/owner', 'example.com/team'] })], []],
    ['a set whose patchPodMetadata names an injection annotation (never listed)', [set('a', [cold('agent')], { keys: ['example.com/k', 'kruise.io/sidecarset-injected-list'] })], []],
  ])('for %s, equals what pod-inject writes today', (_what, sets, init) => {
    const { fenced, unfenced } = injected(sets, init);
    const annotations = fenced.metadata?.annotations ?? {};
    expect(fenceDecision(unfenced, byName(...sets))).toEqual({ kind: 'fence', containers: annotations[ANNOTATION_FENCE_CONTAINERS], keys: annotations[ANNOTATION_FENCE_KEYS] });
  });

  it('names the HotUpgrade pair, the native sidecar and the sets’ current keys', () => {
    const sets = [set('a', [hot('proxy')], { init: [{ name: 'native', image: OLD_IMAGE, restartPolicy: 'Always' }], keys: ['example.com/team'] })];
    const { unfenced } = injected(sets);
    // A key the set names now, after the pod's injection, is listed too: the current keys.
    const now = set('a', [hot('proxy')], { init: [{ name: 'native', image: OLD_IMAGE, restartPolicy: 'Always' }], keys: ['example.com/team', 'example.com/added'] });
    expect(fenceDecision(unfenced, byName(now))).toEqual({ kind: 'fence', containers: 'native,proxy-1,proxy-2', keys: 'example.com/added,example.com/team' });
  });

  it.each<[string, Pod, FenceContext, FenceDecision]>([
    ['a pod without kruise.io/sidecarset-hash is not the tool’s', { ...base, metadata: { name: 'p', annotations: {} } }, byName(a), { kind: 'not-injected' }],
    ['a pod already fenced is left alone', injected([a]).fenced, byName(a), { kind: 'fenced' }],
    ['a pod carrying one fence key only is left alone (a fence is never changed)', { ...base, metadata: { ...base.metadata, annotations: { ...base.metadata?.annotations, [ANNOTATION_FENCE_KEYS]: '' } } }, byName(a), { kind: 'fenced' }],
    ['a pod being deleted', { ...base, metadata: { ...base.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }, byName(a), { kind: 'skip', reason: 'being deleted' }],
    ['a sidecarList naming a container the pod lacks', withHash(base, entry(['agent', 'gone'])), byName(set('a', [cold('agent'), cold('gone')])), { kind: 'skip', reason: 'sidecarList of a names gone, but the pod has no container gone' }],
    ['a HotUpgrade sidecar whose pair the pod lacks', withHash(base, entry(['agent'])), byName(set('a', [hot('agent')])), { kind: 'skip', reason: 'sidecarList of a names agent, but the pod has no container agent-1, agent-2' }],
    ['a sidecarList naming the application container (the set does not declare it)', withHash(base, entry(['agent', 'app'])), byName(a), { kind: 'skip', reason: 'sidecarList of a names app, which SidecarSet a does not declare as a sidecar' }],
    ['a set that no longer exists', base, byName(), { kind: 'skip', reason: 'SidecarSet a, which its kruise.io/sidecarset-hash names, does not exist' }],
    ['the old string form (no sidecarList)', withHash(base, { a: 'h' }), byName(a), { kind: 'skip', reason: 'its kruise.io/sidecarset-hash entry for a has no sidecarList (the old form)' }],
    ['an empty hash map', withHash(base, {}), byName(a), { kind: 'skip', reason: 'its kruise.io/sidecarset-hash names no SidecarSet' }],
    ['an unreadable hash annotation', withHash(base, '{oops'), byName(a), { kind: 'skip', reason: expect.stringContaining('is not a JSON object of SidecarSet entries') as unknown as string }],
  ])('%s', (_what, pod, sets, expected) => {
    expect(fenceDecision(pod, sets)).toEqual(expected);
  });

  it('fences nothing when the sidecarList is empty, not even the set’s patchPodMetadata keys', () => {
    const keyed = set('a', [cold('agent')], { keys: ['iam.amazonaws.com/role'] });
    expect(fenceDecision(withHash(base, entry([])), byName(keyed))).toEqual({ kind: 'skip', reason: 'its kruise.io/sidecarset-hash lists no sidecar (every sidecarList is empty): nothing to fence' });
  });
});

// Issue 45, item 1: the hash annotation is text anyone who can write the pod could have forged; the fence vouches only for what pod-inject would inject today.
describe('fenceDecision: only where pod-inject would have injected', () => {
  const inNamespace = (pod: Pod, namespace: string, labels?: Record<string, string>): Pod => ({ ...pod, metadata: { ...pod.metadata, namespace, ...(labels === undefined ? {} : { labels }) } });
  const withImage = (pod: Pod, image: string): Pod => ({ ...pod, spec: { ...pod.spec, containers: (pod.spec?.containers ?? []).map((c) => (c.name === 'agent' ? { ...c, image } : c)) } });
  const revision = (setName: string, image: string) => ({ metadata: { name: `${setName}-r1`, labels: { 'kruise.io/sidecarset-name': setName } }, data: { spec: { containers: [{ name: 'agent', image }] } } });

  it.each<[string, Pod, FenceContext, string]>([
    ['a pod in a namespace the rendered namespaceSelector excludes (kube-system)', inNamespace(base, 'kube-system'), byName(a), 'pod-inject is never called for pods of namespace kube-system (its registered namespaceSelector or objectSelector leaves the pod out)'],
    ['a pod in a namespace labelled sidecarset.kruise.io/injection=disabled', inNamespace(base, 'quiet'), byName(a), 'pod-inject is never called for pods of namespace quiet (its registered namespaceSelector or objectSelector leaves the pod out)'],
    ['a pod in a namespace that does not exist (labels unknown)', inNamespace(base, 'gone'), byName(a), 'pod-inject is never called for pods of namespace gone (its registered namespaceSelector or objectSelector leaves the pod out)'],
    ['a pod the named set’s selector does not select', inNamespace(base, 'shop', { app: 'db' }), byName(a), 'SidecarSet a, which its kruise.io/sidecarset-hash names, does not select the pod (its selector)'],
    ['a pod of another namespace than the set’s', base, byName({ ...a, spec: { ...a.spec, namespace: 'other' } }), 'SidecarSet a, which its kruise.io/sidecarset-hash names, does not select the pod (its namespace)'],
    ['a pod whose namespace the set’s namespaceSelector leaves out', base, byName({ ...a, spec: { ...a.spec, namespaceSelector: { matchLabels: { team: 'payments' } } } }), 'SidecarSet a, which its kruise.io/sidecarset-hash names, does not select the pod (its namespace-selector)'],
    ['a named container running an image neither the set nor its revisions declare (the pod’s own container of that name)', withImage(base, 'tenant/own-agent:1'), byName(a), 'container agent runs an image neither SidecarSet a nor its revisions declare for agent'],
  ])('skips %s', (_what, pod, context, reason) => {
    expect(fenceDecision(pod, context)).toEqual({ kind: 'skip', reason });
  });

  it('skips every pod while pod-inject is not registered', () => {
    expect(fenceDecision(base, { ...byName(a), webhook: undefined })).toEqual({ kind: 'skip', reason: expect.stringContaining('pod-inject webhook is not registered') as unknown as string });
  });

  it('fences a container running an image one of the set’s revisions declares (a rollout not yet done), and not one of another set’s revisions', () => {
    const old = withImage(base, 'agent:0');
    expect(fenceDecision(old, withRevisions([a], [revision('a', 'agent:0')]))).toEqual({ kind: 'fence', containers: 'agent', keys: '' });
    expect(fenceDecision(old, withRevisions([a], [revision('b', 'agent:0')]))).toMatchObject({ kind: 'skip' });
  });

  it('fences a HotUpgrade pair whose idle container runs the empty image', () => {
    const hotSet = set('a', [hot('agent')]);
    const { unfenced } = injected([hotSet]);
    expect(fenceDecision(unfenced, byName(hotSet))).toEqual({ kind: 'fence', containers: 'agent-1,agent-2', keys: '' });
  });
});
