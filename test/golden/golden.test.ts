/**
 * Injection golden files (Istio style): each directory under inject/ holds a
 * pod, the cluster's SidecarSets (as users write them; defaulted here as the
 * API server would store them) and optionally Namespaces, and the expected
 * injected pod. The same case runs through the core and through the
 * pod-inject handler (patch applied to the pod), and the output is injected
 * again to prove reinvocation changes nothing.
 *
 * UPDATE_GOLDEN=1 (npm run golden:update) rewrites expected.yaml on purpose.
 */
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { stringMapOf, stringOf } from '../../lib/kube/json.ts';
import { parseObjects, parseSingleObject } from '../../lib/kube/yaml-objects.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { runReview } from '../../lib/webhooks/registry.ts';

const NOW = new Date('2026-11-30T12:00:00Z');
const root = join(dirname(fileURLToPath(import.meta.url)), 'inject');
const update = process.env.UPDATE_GOLDEN === '1';

function loadCase(dir: string) {
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  const pod = parseSingleObject(read('pod.yaml'), 'pod.yaml') as Pod;
  const sets = parseObjects(read('sidecarsets.yaml'), 'sidecarsets.yaml').map(defaultSidecarSet);
  const namespaces = existsSync(join(dir, 'namespaces.yaml')) ? parseObjects(read('namespaces.yaml'), 'namespaces.yaml') : [];
  const namespaceLabels = new Map(namespaces.map((n) => [stringOf((n.metadata as { name?: unknown }).name) ?? '', stringMapOf((n.metadata as { labels?: unknown }).labels)]));
  const namespace = pod.metadata?.namespace ?? 'default';
  return { pod, sets, namespaces, namespaceLabels, namespace };
}

const cases = readdirSync(root).sort();

describe('injection golden files', () => {
  it('has cases', () => {
    expect(cases.length).toBeGreaterThan(5);
  });

  describe.each(cases)('%s', (name) => {
    const dir = join(root, name);
    const c = loadCase(dir);
    const expectedPath = join(dir, 'expected.yaml');
    const injected = injectPod({ pod: c.pod, namespace: c.namespace, sidecarSets: c.sets, namespaceLabels: c.namespaceLabels, now: NOW }).pod;

    it('the core gives the expected pod', () => {
      if (update) writeFileSync(expectedPath, stringify(injected, { lineWidth: 0, aliasDuplicateObjects: false }));
      expect(injected).toEqual(parseSingleObject(readFileSync(expectedPath, 'utf8'), expectedPath));
    });

    it('the pod-inject handler patch gives the same pod', async () => {
      const outcome = await runReview(
        'pod-inject',
        {
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          request: {
            uid: `uid-${name}`,
            kind: { group: '', version: 'v1', kind: 'Pod' },
            resource: { group: '', version: 'v1', resource: 'pods' },
            namespace: c.namespace,
            operation: 'CREATE',
            object: c.pod,
          },
        },
        { sidecarSets: memorySidecarSetSource(c.sets), namespaces: memoryNamespaceSource(c.namespaces), clock: { now: () => NOW } },
      );
      if (outcome.kind !== 'review') throw new Error(`expected a review, got ${JSON.stringify(outcome)}`);
      const { response } = outcome.review;
      expect(response.uid).toBe(`uid-${name}`);
      expect(response.allowed).toBe(true);
      const patched = response.patch === undefined ? c.pod : applyPatch(c.pod, decodePatch(response.patch));
      expect(patched).toEqual(injected);
    });

    it('injecting the output again changes nothing', () => {
      const later = new Date('2026-12-24T00:00:00Z');
      const again = injectPod({ pod: injected, namespace: c.namespace, sidecarSets: c.sets, namespaceLabels: c.namespaceLabels, now: later }).pod;
      expect(again).toEqual(injected);
    });
  });
});
