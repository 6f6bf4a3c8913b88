/**
 * Canary SidecarSets through the webhooks' handlers, with the sources the
 * functions read: validation looks the base up among the cluster's sets
 * (one list, even when the canary is wrong on its own, so the base's error
 * stands beside the others as Kruise lists it), and the pod webhook injects
 * the canary instead of its base.
 */
import { describe, expect, it } from '@jest/globals';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import type { AdmissionRequest } from '../../lib/admission/review.ts';
import { wrapInReview } from '../../lib/admission/wrap.ts';
import { memoryNamespaceSource, memoryRevisionSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import type { JsonObject, Pod } from '../../lib/kube/types.ts';
import type { SidecarSetSource } from '../../lib/ports.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import type { HandlerDeps, HandlerResult } from '../../lib/webhooks/handler.ts';
import { podInjectHandler } from '../../lib/webhooks/pod-inject.ts';
import { sidecarSetValidateHandler } from '../../lib/webhooks/sidecarset-validate.ts';
import { appPod } from '../../testkit/reviews.ts';
import { NOW } from '../../testkit/sidecarset-objects.ts';

/** Kruise's e2e sets: one nginx sidecar, NotUpdate; the canary's image newer. */
function nginxSet(name: string, image: string, annotations: Record<string, string> = {}, type = 'NotUpdate'): SidecarSet {
  return defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'SidecarSet',
    metadata: { name, annotations },
    spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'nginx-sidecar', image }], updateStrategy: { type } },
  });
}
const canaryAnnotations = { 'apps.kruise.io/sidecarset-canary': 'true', 'apps.kruise.io/sidecarset-base': 'stable' };
const stable = nginxSet('stable', 'nginx:1.20.1');
const canary = nginxSet('canary', 'nginx:1.21.1', canaryAnnotations);

function deps(sidecarSets: SidecarSetSource): HandlerDeps {
  return { sidecarSets, namespaces: memoryNamespaceSource([]), revisions: memoryRevisionSource([]), clock: { now: () => NOW } };
}

/** A source that counts its lists. */
function countingSource(sets: readonly SidecarSet[]): { source: SidecarSetSource; lists: () => number } {
  let lists = 0;
  const inner = memorySidecarSetSource(sets);
  return {
    source: {
      list: (signal) => {
        lists++;
        return inner.list(signal);
      },
    },
    lists: () => lists,
  };
}

function request(object: JsonObject): AdmissionRequest {
  return wrapInReview({ object, operation: 'CREATE', uid: 'uid-1' }).request as AdmissionRequest;
}

function message(result: HandlerResult): string {
  return 'response' in result ? (result.response.status?.message ?? '') : '';
}

describe('validating a canary SidecarSet', () => {
  it('admits it beside its base, reading the sets once', async () => {
    const { source, lists } = countingSource([stable]);
    expect(await sidecarSetValidateHandler(request(canary), deps(source))).toMatchObject({ response: { allowed: true } });
    expect(lists()).toBe(1);
  });

  it("refuses a missing base beside the set's own errors (a RollingUpdate canary), in one answer", async () => {
    const rolling = nginxSet('canary', 'nginx:1.21.1', { ...canaryAnnotations, 'apps.kruise.io/sidecarset-base': 'gone' }, 'RollingUpdate');
    const result = await sidecarSetValidateHandler(request(rolling), deps(memorySidecarSetSource([stable])));
    expect(result).toMatchObject({ response: { allowed: false, status: { code: 422 } } });
    expect(message(result)).toContain('fetch base sidecarSet[gone] failed: sidecarsets.apps.kruise.io "gone" not found');
    expect(message(result)).toContain('RollingUpdate is not supported for canary sidecarSet');
  });

  it('compares it with the other sets only once every other rule passed, as Kruise: a pin that does not resolve is told, a clash with another set is not', async () => {
    const pinned = defaultSidecarSet({ ...canary, spec: { ...canary.spec, injectionStrategy: { revision: { revisionName: 'canary-missing' } } } });
    const other = nginxSet('other', 'nginx:1.19');
    const result = await sidecarSetValidateHandler(request(pinned), deps(memorySidecarSetSource([stable, other])));
    expect(result).toMatchObject({ response: { allowed: false, status: { code: 422 } } });
    expect(message(result)).toContain('Cannot find specific ControllerRevision');
    expect(message(result)).not.toContain('already exist in other');
    // Without the pin, the clash with the set that is not its base is what is wrong.
    expect(message(await sidecarSetValidateHandler(request(canary), deps(memorySidecarSetSource([stable, other]))))).toContain('container nginx-sidecar already exist in other');
  });

  it('fails the call (503) when the sets cannot be read: the base cannot be looked up', async () => {
    const broken: SidecarSetSource = { list: () => Promise.reject(new Error('connection refused')) };
    const result = await sidecarSetValidateHandler(request(canary), deps(broken));
    expect(result).toMatchObject({ outcome: 'failed', failure: { status: 503, message: "cannot look up the canary's base SidecarSet: connection refused" } });
  });

  it('reads no sets for a set that is not a canary and is wrong on its own', async () => {
    const { source, lists } = countingSource([stable]);
    const wrong = nginxSet('plain', '', {});
    expect(await sidecarSetValidateHandler(request(wrong), deps(source))).toMatchObject({ response: { allowed: false } });
    expect(lists()).toBe(0);
  });
});

describe('injecting a pod beside a canary', () => {
  it("gives the pod the canary's sidecar, and the base's when the canary is paused", async () => {
    const injectedImages = async (sets: SidecarSet[]) => {
      const pod = appPod() as JsonObject;
      const result = await podInjectHandler(wrapInReview({ object: pod, operation: 'CREATE', uid: 'uid-2' }).request as AdmissionRequest, deps(memorySidecarSetSource(sets)));
      const patch = 'response' in result ? result.response.patch : undefined;
      const injected = (patch === undefined ? pod : applyPatch(pod, decodePatch(patch))) as Pod;
      return injected.spec?.containers.map((c) => c.image);
    };
    expect(await injectedImages([stable, canary])).toContain('nginx:1.21.1');
    expect(await injectedImages([stable, canary])).not.toContain('nginx:1.20.1');
    const paused = defaultSidecarSet({ ...canary, spec: { ...canary.spec, injectionStrategy: { paused: true } } });
    expect(await injectedImages([stable, paused])).toContain('nginx:1.20.1');
  });
});
