import { describe, expect, it } from '@jest/globals';
import { ENV_SORT_SIDECARS_BY_NAME, InjectionOrderSettingError, sortSidecarsByNameFromEnv } from '../../lib/webhooks/injection-order.ts';
import { admissionRuntime, ConfigurationError, withInjectionOrder } from '../../functions/shared/compose.ts';
import { podInjectHandler } from '../../lib/webhooks/pod-inject.ts';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { NOW, pod, sidecar, sidecarSet } from '../../testkit/sidecarset-objects.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { applyPatch } from '../../lib/admission/json-patch-apply.ts';

describe('the injection order setting (SORT_SIDECAR_CONTAINERS_BY_NAME)', () => {
  it.each<[string | undefined, boolean]>([
    [undefined, false],
    ['', false],
    ['false', false],
    ['true', true],
  ])('%j reads as %s', (value, sorted) => {
    expect(sortSidecarsByNameFromEnv({ [ENV_SORT_SIDECARS_BY_NAME]: value })).toBe(sorted);
  });

  it('refuses anything else, naming the variable', () => {
    expect(() => sortSidecarsByNameFromEnv({ [ENV_SORT_SIDECARS_BY_NAME]: 'yes' })).toThrow(InjectionOrderSettingError);
    expect(() => sortSidecarsByNameFromEnv({ [ENV_SORT_SIDECARS_BY_NAME]: 'TRUE' })).toThrow(/SORT_SIDECAR_CONTAINERS_BY_NAME must be "true" or "false", got "TRUE"/);
    const runtime = admissionRuntime('pod-inject', { current: 'x'.repeat(32) }, undefined, { info: () => undefined, warn: () => undefined, error: () => undefined });
    expect(() => withInjectionOrder(runtime, { [ENV_SORT_SIDECARS_BY_NAME]: '1' })).toThrow(ConfigurationError);
  });

  it('reaches the pod webhook through the runtime the functions compose', async () => {
    const sets = [sidecarSet('s', { containers: [sidecar('zz'), sidecar('aa')] })];
    const deps = { sidecarSets: memorySidecarSetSource(sets), namespaces: memoryNamespaceSource([]), clock: { now: () => NOW } };
    const request = { uid: 'u', kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, operation: 'CREATE', namespace: 'default', object: pod() };
    const order = async (sorted: boolean): Promise<string[]> => {
      const result = await podInjectHandler(request as never, { ...deps, ...(sorted ? { sortSidecarsByName: true } : {}) });
      const text = (result as { response: { patch?: string } }).response.patch ?? '';
      const patch: unknown = JSON.parse(Buffer.from(text, 'base64').toString('utf8'));
      return (applyPatch(pod(), patch as never) as Pod).spec!.containers.map((c) => c.name);
    };
    expect(await order(false)).toEqual(['zz', 'aa', 'app']);
    expect(await order(true)).toEqual(['aa', 'zz', 'app']);
  });
});
