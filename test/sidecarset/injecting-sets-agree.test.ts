/**
 * pod-inject's choice (injectingSets) and explain's verdicts (injectionVerdicts)
 * are one decision: over the conformance generator's injection cases, the
 * sets the verdicts say inject are exactly the sets injectingSets returns.
 */
import { describe, expect, it } from '@jest/globals';
import { injectingSets, injectionVerdicts } from '../../lib/sidecarset/injecting-sets.ts';
import { sidecarSetName } from '../../lib/sidecarset/match.ts';
import { generateCases, selectedBy } from '../../testkit/conformance/generator.ts';

describe('injectingSets and injectionVerdicts', () => {
  it('agree on every generated injection case, paused sets, canaries and namespace selectors included', () => {
    const cases = generateCases(1_500, 20261207, '1.9').flatMap((c) => (c.class === 'inject' ? [c] : []));
    expect(cases.length).toBeGreaterThan(300);
    let injected = 0;
    for (const c of cases) {
      const namespaceLabels = new Map(c.cluster.namespaces.map((ns) => [ns.metadata?.name ?? '', { ...ns.metadata?.labels }]));
      // The pod as generated, and moved and relabelled so that each set in turn selects it.
      for (const pod of [c.pod, ...c.cluster.sidecarSets.map((set) => selectedBy(c.pod, set))]) {
        const place = { labels: { ...pod.metadata?.labels }, namespace: pod.metadata?.namespace ?? c.namespace, namespaceLabels };
        const chosen = injectingSets(c.cluster.sidecarSets, place).map(sidecarSetName);
        expect(injectionVerdicts(c.cluster.sidecarSets, place).filter((v) => v.injects).map((v) => v.set)).toEqual(chosen);
        injected += chosen.length;
      }
    }
    expect(injected).toBeGreaterThan(150);
  });
});
