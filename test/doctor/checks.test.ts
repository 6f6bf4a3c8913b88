import { describe, expect, it } from '@jest/globals';
import { findingLine, injectionFinding, injectionPathFindings, leaseFinding, missingWebhookFindings, policyFindings, webhookFindings } from '../../lib/doctor/checks.ts';
import { webhookNamesIn } from '../../lib/webhook-config/webhook-configurations.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { ANNOTATION_INJECTION_PATH } from '../../lib/sidecarset/injection-path.ts';

const expected = { urls: { 'pod-inject': 'https://h/pod-inject/', 'sidecarset-validate': 'https://h/sidecarset-validate/' }, secret: 's1' };
const config = (...urls: string[]) => ({ webhooks: urls.map((url, i) => ({ name: `w${i}`, clientConfig: { url } })) });

describe('doctor findings', () => {
  it('a webhook: the stack\'s URL with the current secret, another secret, another URL', () => {
    const lines = webhookFindings('MutatingWebhookConfiguration', 'x', config('https://h/pod-inject/s1', 'https://h/pod-inject/s0', 'https://elsewhere/pod-inject/s1'), expected).map(findingLine);
    expect(lines[0]).toBe('OK    MutatingWebhookConfiguration x webhook w0: calls pod-inject with the current secret');
    expect(lines[1]).toMatch(/^FAIL {2}MutatingWebhookConfiguration x webhook w1: calls pod-inject with a secret that is not the current one; /);
    expect(lines[2]).toMatch(/^FAIL {2}MutatingWebhookConfiguration x webhook w2: calls https:\/\/elsewhere\/pod-inject\/…, no function URL of this stack; /);
  });

  it('a missing configuration, and one whose secret cannot be compared', () => {
    expect(webhookFindings('ValidatingWebhookConfiguration', 'x', undefined, expected)[0]?.ok).toBe(false);
    expect(webhookFindings('ValidatingWebhookConfiguration', 'x', config('https://h/sidecarset-validate/zz'), { urls: expected.urls })[0]?.detail).toBe('calls sidecarset-validate (the secret was not compared: not readable here)');
  });

  it('a webhook the rendering adds but the applied configuration lacks: the pod-eviction fence of an older rendering', () => {
    const older = { webhooks: [{ name: 'sidecarset-validate.sidecarset.kruise.io' }, { name: 'pod-change.sidecarset.kruise.io' }] };
    expect(webhookNamesIn('ValidatingWebhookConfiguration')).toEqual(['sidecarset-validate.sidecarset.kruise.io', 'pod-change.sidecarset.kruise.io', 'pod-eviction.sidecarset.kruise.io']);
    expect(missingWebhookFindings('ValidatingWebhookConfiguration', 'x', older, webhookNamesIn('ValidatingWebhookConfiguration')).map(findingLine)).toEqual([
      'FAIL  ValidatingWebhookConfiguration x webhook pod-eviction.sidecarset.kruise.io: missing: the configuration was rendered by an older version; apply freshly rendered manifests (npm run -s manifests)',
    ]);
    expect(missingWebhookFindings('ValidatingWebhookConfiguration', 'x', { webhooks: [...older.webhooks, { name: 'pod-eviction.sidecarset.kruise.io' }] }, webhookNamesIn('ValidatingWebhookConfiguration'))).toEqual([]);
    // A configuration not found is the URL check's finding already.
    expect(missingWebhookFindings('ValidatingWebhookConfiguration', 'x', undefined, ['a'])).toEqual([]);
  });

  it('policies: missing, unbound, bound; a MutatingAdmissionPolicy is one more entry', () => {
    const want = [
      { kind: 'ValidatingAdmissionPolicy' as const, name: 'a' },
      { kind: 'ValidatingAdmissionPolicy' as const, name: 'b' },
      { kind: 'MutatingAdmissionPolicy' as const, name: 'm' },
    ];
    const policies = new Map([['ValidatingAdmissionPolicy', [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }]], ['MutatingAdmissionPolicy', []]]);
    const bindings = new Map([['ValidatingAdmissionPolicy', [{ metadata: { name: 'a-binding' }, spec: { policyName: 'a' } }]]]);
    expect(policyFindings(want, policies, bindings).map((f) => [f.check, f.ok, f.detail])).toEqual([
      ['ValidatingAdmissionPolicy a', true, 'bound by a-binding'],
      ['ValidatingAdmissionPolicy b', false, 'exists but no binding names it: it holds nothing'],
      ['MutatingAdmissionPolicy m', false, 'not found'],
    ]);
  });

  it('the dry-run pod: injected, not injected, refused', () => {
    expect(injectionFinding('d', 201, { metadata: { annotations: { 'kruise.io/sidecarset-injected-list': 'log-agent' } } }, 12).detail).toBe('injected by log-agent in 12 ms');
    expect(injectionFinding('d', 201, { metadata: {} }, 12).ok).toBe(false);
    expect(injectionFinding('d', 500, { message: 'failed calling webhook' }, 12).detail).toBe('refused in 12 ms: failed calling webhook');
  });

  describe('which path injects each set', () => {
    // As stored: defaulted, with its hashes and the rule's verdict; `annotation` replaces the verdict (undefined removes it).
    const plain = (annotation?: string) => {
      const set = defaultSidecarSet({ apiVersion: 'apps.kruise.io/v1beta1', kind: 'SidecarSet', metadata: { name: 'log-agent' }, spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'log-agent', image: 'busybox:1' }] } });
      const others = Object.entries({ ...set.metadata?.annotations }).filter(([key]) => key !== ANNOTATION_INJECTION_PATH);
      const annotations: Record<string, string> = Object.fromEntries(annotation === undefined ? others : [...others, [ANNOTATION_INJECTION_PATH, annotation]]);
      return { ...set, metadata: { ...set.metadata, annotations } };
    };
    const hot = { metadata: { name: 'hot', annotations: { [ANNOTATION_INJECTION_PATH]: 'webhook' } }, spec: { selector: {}, containers: [{ name: 'h', image: 'a:1', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'e:1' } }] } };

    it.each([
      ['no pod webhook: nothing injects', plain('policy'), { podWebhook: false, policy: false }, false, /^no path injects it/],
      ['the webhook path alone: pod-inject', plain(), { podWebhook: true, policy: false }, true, /^injected by the pod-inject webhook$/],
      ['the policy path, a set the rule sends to the policy', plain('policy'), { podWebhook: true, policy: true }, true, /^injected by the injection policy/],
      ['the policy path, a set the rule keeps with pod-inject', hot, { podWebhook: true, policy: true }, true, /^injected by the pod-inject webhook: .+/],
      ['the policy path, an annotation that disagrees with the rule', plain(), { podWebhook: true, policy: true }, false, /annotation says nothing, the rule says policy/],
    ])('%s', (_, set, paths, ok, detail) => {
      const [finding] = injectionPathFindings([set], paths);
      expect(finding).toMatchObject({ ok, detail: expect.stringMatching(detail) });
    });
  });

  describe('the reconciler\'s last resync, from its Lease', () => {
    const NOW = Date.parse('2026-12-07T07:00:00Z');
    const lease = (renewTime: unknown, leaseDurationSeconds: unknown = 90) => ({ spec: { holderIdentity: 'status-sync@host', renewTime, leaseDurationSeconds } });
    it.each([
      ['renewed 12 s ago, valid 90 s', lease('2026-12-07T06:59:48.000000Z'), 'OK    status-sync reconciler: last resync 12 s ago (Lease kruise-system/serverless-sidecarset-status-sync renewTime 2026-12-07T06:59:48.000000Z by status-sync@host, valid 90 s)'],
      ['renewed exactly its duration ago: still recent', lease('2026-12-07T06:58:30.000000Z'), /^OK {4}status-sync reconciler: last resync 90 s ago/],
      ['renewed a clock skew ahead: 0 s ago', lease('2026-12-07T07:00:01.000000Z'), /^OK {4}status-sync reconciler: last resync 0 s ago/],
      ['renewed longer ago than its duration: stopped', lease('2026-12-07T06:58:29.000000Z'), /^FAIL {2}status-sync reconciler: last resync 91 s ago \(.*\), longer than its 90 s: the reconciler stopped; check its schedule/],
      ['absent: never ran here, or predates the Lease', undefined, /^FAIL {2}status-sync reconciler: no Lease kruise-system\/serverless-sidecarset-status-sync: the reconciler never finished a resync against this cluster, or predates the Lease; check that its schedule/],
      ['no renewTime', lease(undefined), /carries no renewTime or leaseDurationSeconds; delete it/],
      ['a renewTime that is no time', lease('yesterday'), /carries no renewTime/],
      ['no duration', lease('2026-12-07T06:59:48.000000Z', '90'), /carries no renewTime or leaseDurationSeconds/],
    ])('%s', (_, stored, line) => {
      const got = findingLine(leaseFinding('kruise-system', stored, NOW));
      if (typeof line === 'string') expect(got).toBe(line);
      else expect(got).toMatch(line);
    });
  });
});
