/** The signs of OpenKruise's own SidecarSet controller in a cluster, from the two objects its installation creates. */
import { describe, expect, it } from '@jest/globals';
import { kruiseControllerSigns, kruiseRefusal } from '../../lib/status-sync/kruise-controller.ts';

const deployment = (replicas?: number) => ({ metadata: { name: 'kruise-controller-manager', namespace: 'kruise-system' }, spec: replicas === undefined ? {} : { replicas } });
const webhooks = (...names: string[]) => ({ metadata: { name: 'kruise-mutating-webhook-configuration' }, webhooks: names.map((name) => ({ name })) });

describe('kruiseControllerSigns', () => {
  it.each<[string, unknown, unknown, RegExp[]]>([
    ['neither object', undefined, undefined, []],
    ['the manager Deployment (replicas defaulted to 1)', deployment(), undefined, [/Deployment kruise-system\/kruise-controller-manager \(1 replica\(s\)\)/]],
    ['the manager Deployment scaled to 0, no webhooks', deployment(0), undefined, []],
    ['the webhooks for SidecarSets and pods', undefined, webhooks('mcloneset.kb.io', 'msidecarset.kb.io', 'mpod.kb.io'), [/holds Kruise's SidecarSet webhooks \(msidecarset\.kb\.io, mpod\.kb\.io\)/]],
    ['a webhook configuration without SidecarSet entries', undefined, webhooks('mcloneset.kb.io'), []],
    ['both', deployment(3), webhooks('mpod.kb.io'), [/\(3 replica\(s\)\)/, /\(mpod\.kb\.io\)/]],
  ])('%s', (_what, d, w, expected) => {
    const signs = kruiseControllerSigns(d, w);
    expect(signs).toHaveLength(expected.length);
    expected.forEach((pattern, i) => { expect(signs[i]).toMatch(pattern); });
  });

  it('the refusal names the cluster, the signs and the way out', () => {
    const text = kruiseRefusal('https://127.0.0.1:6443', ['sign one', 'sign two']);
    expect(text).toMatch(/^refusing to reconcile https:\/\/127\.0\.0\.1:6443: OpenKruise's own SidecarSet controller runs there \(sign one; sign two\)/);
    expect(text).toContain('start without --reconcile to serve the webhooks only');
  });
});
