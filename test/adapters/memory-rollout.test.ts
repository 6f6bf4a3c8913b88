/**
 * The rollout's in-memory ports behave as the API server does for what the
 * rollout tables rely on (test/adapters/kube-rollout.integration.test.ts
 * checks the same against the real one): guarded writes, conflicts, gone
 * objects, and a watch from a resourceVersion.
 */
import { describe, expect, it } from '@jest/globals';
import { memoryPods, memoryRevisionStore } from '../../lib/adapters/memory-rollout.ts';
import { JsonPatchError } from '../../lib/admission/json-patch.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { LABEL_SIDECARSET_NAME, type ControllerRevision } from '../../lib/sidecarset/revisions.ts';
import { ObjectExistsError, WriteConflictError } from '../../lib/ports/errors.ts';

const pod = (name: string, labels: Record<string, string>, namespace = 'default'): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels }, spec: { containers: [{ name: 'app', image: 'a:1' }] } });
const WEB = { labelSelector: 'app=web' };
const rv = (p: Pod | undefined) => p?.metadata?.resourceVersion ?? '';

describe('memoryPods', () => {
  const cluster = () => memoryPods([pod('w1', { app: 'web' }), pod('w2', { app: 'web' }), pod('d1', { app: 'db' }), pod('w3', { app: 'web' }, 'other')]);

  it('lists the pods of a scope with the cluster’s resourceVersion', async () => {
    const c = cluster();
    const listed = await c.source.list(WEB);
    expect(listed.pods.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`)).toEqual(['default/w1', 'default/w2', 'other/w3']);
    expect(listed.resourceVersion).toBe('4');
    expect((await c.source.list({ namespace: 'other', labelSelector: 'app in (web,db)' })).pods).toHaveLength(1);
  });

  it('applies a JSON Patch whose test holds, refuses one whose test fails with WriteConflictError, and answers gone for a missing pod', async () => {
    const c = cluster();
    const [w1] = (await c.source.list(WEB)).pods;
    const ops = [
      { op: 'test', path: '/metadata/resourceVersion', value: rv(w1) },
      { op: 'replace', path: '/spec/containers/0/image', value: 'a:2' },
    ] as const;
    expect(await c.writer.patch('default', 'w1', [...ops])).toEqual({ outcome: 'written', resourceVersion: '5' });
    expect(c.pods()[0]?.spec?.containers[0]?.image).toBe('a:2');
    await expect(c.writer.patch('default', 'w1', [...ops])).rejects.toBeInstanceOf(WriteConflictError);
    expect(await c.writer.patch('default', 'gone', [...ops])).toEqual({ outcome: 'gone' });
    expect(c.writes).toEqual([{ kind: 'patch', target: 'default/w1' }]);
  });

  it('refuses a patch that fails other than by its test as the patch error it is (a bug in the patch, not a conflict)', async () => {
    const c = cluster();
    await expect(c.writer.patch('default', 'w1', [{ op: 'remove', path: '/spec/nothing' }])).rejects.toBeInstanceOf(JsonPatchError);
  });

  it('merges a status patch’s conditions by type', async () => {
    const c = memoryPods([{ ...pod('w1', { app: 'web' }), status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }]);
    await c.writer.patchStatus('default', 'w1', { status: { conditions: [{ type: 'SidecarSetUpgradable', status: 'False' }] } });
    await c.writer.patchStatus('default', 'w1', { status: { conditions: [{ type: 'SidecarSetUpgradable', status: 'True' }] } });
    expect(c.pods()[0]?.status).toEqual({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }, { type: 'SidecarSetUpgradable', status: 'True' }] });
  });

  describe('changed', () => {
    it("resolves 'changed' on another writer's change in scope, also one made before the call", async () => {
      const c = cluster();
      const { resourceVersion } = await c.source.list(WEB);
      const waiting = c.source.changed(WEB, resourceVersion, new Set(), 10_000);
      c.update('default', 'w2', (p) => void (p.metadata = { ...p.metadata, annotations: { a: 'b' } }));
      expect(await waiting).toBe('changed');
      expect(await c.source.changed(WEB, resourceVersion, new Set(), 10_000)).toBe('changed');
    });

    it('sees a pod leaving the scope and a pod deleted', async () => {
      const c = cluster();
      const { resourceVersion } = await c.source.list(WEB);
      c.update('default', 'w1', (p) => void (p.metadata = { ...p.metadata, labels: { app: 'api' } }));
      expect(await c.source.changed(WEB, resourceVersion, new Set(), 10_000)).toBe('changed');
      const after = c.resourceVersion();
      c.remove('default', 'w2');
      expect(await c.source.changed(WEB, after, new Set(), 10_000)).toBe('changed');
    });

    it("ignores the given resourceVersions and changes out of scope, and answers 'timeout'", async () => {
      const c = cluster();
      const { resourceVersion } = await c.source.list(WEB);
      const own = c.update('default', 'w1', (p) => void (p.metadata = { ...p.metadata, annotations: { own: 'yes' } }));
      c.update('default', 'd1', (p) => void (p.metadata = { ...p.metadata, annotations: { x: 'y' } }));
      expect(await c.source.changed(WEB, resourceVersion, new Set([own]), 50)).toBe('timeout');
    });

    it('with a predicate, wakes only for the changes it says are worth it, telling each as a watch of the scope would', async () => {
      const c = cluster();
      const told: string[] = [];
      const onlyLabelled = (type: string, p: Pod) => {
        told.push(`${type} ${p.metadata?.name ?? ''}`);
        return type !== 'MODIFIED' || p.metadata?.annotations?.news === 'yes';
      };
      const { resourceVersion } = await c.source.list(WEB);
      c.update('default', 'w1', (p) => void (p.metadata = { ...p.metadata, annotations: { news: 'no' } }));
      expect(await c.source.changed(WEB, resourceVersion, new Set(), 50, undefined, onlyLabelled)).toBe('timeout');
      c.update('default', 'w1', (p) => void (p.metadata = { ...p.metadata, annotations: { news: 'yes' } }));
      expect(await c.source.changed(WEB, resourceVersion, new Set(), 10_000, undefined, onlyLabelled)).toBe('changed');
      const after = c.resourceVersion();
      c.update('default', 'w2', (p) => void (p.metadata = { ...p.metadata, labels: { app: 'api' } }));
      expect(await c.source.changed(WEB, after, new Set(), 10_000, undefined, onlyLabelled)).toBe('changed');
      expect(told).toContain('DELETED w2');
    });

    it("answers 'timeout' when the signal ends the wait, and 'error' for a version it cannot read", async () => {
      const c = cluster();
      const controller = new AbortController();
      const waiting = c.source.changed(WEB, c.resourceVersion(), new Set(), 600_000, controller.signal);
      controller.abort();
      expect(await waiting).toBe('timeout');
      expect(await c.source.changed(WEB, 'not-a-version', new Set(), 10)).toBe('error');
    });
  });
});

describe('memoryRevisionStore', () => {
  const revision = (name: string, set = 'agent'): ControllerRevision => ({ metadata: { name, labels: { [LABEL_SIDECARSET_NAME]: set } }, data: { spec: {} }, revision: 1 });

  it('stamps a created revision and refuses a taken name with ObjectExistsError', async () => {
    const store = memoryRevisionStore();
    const created = await store.create(revision('agent-1'));
    expect(created.metadata).toMatchObject({ namespace: 'kruise-system', uid: expect.any(String), resourceVersion: expect.any(String), creationTimestamp: expect.any(String) });
    await expect(store.create(revision('agent-1'))).rejects.toBeInstanceOf(ObjectExistsError);
  });

  it('renumbers only the version read, and deletes only the uid read', async () => {
    const store = memoryRevisionStore();
    const created = await store.create(revision('agent-1'));
    const renumbered = await store.setNumber(created, 5);
    await expect(store.setNumber(created, 6)).rejects.toBeInstanceOf(WriteConflictError);
    await store.delete({ ...renumbered, metadata: { ...renumbered.metadata, uid: 'someone-else' } });
    expect(await store.get('agent-1')).toMatchObject({ revision: 5 });
    await store.delete(renumbered);
    expect(await store.get('agent-1')).toBeUndefined();
    await expect(store.delete(renumbered)).resolves.toBeUndefined();
  });

  it("lists a set's revisions by labels, and every set's", async () => {
    const store = memoryRevisionStore([revision('agent-1'), revision('other-1', 'other'), { metadata: { name: 'unlabelled' } }]);
    await store.patchLabels('agent-1', { version: 'v1' });
    expect((await store.list('agent')).map((r) => r.metadata?.name)).toEqual(['agent-1']);
    expect((await store.list('agent', { version: 'v2' })).map((r) => r.metadata?.name)).toEqual([]);
    expect((await store.listAll()).map((r) => r.metadata?.name)).toEqual(['agent-1', 'other-1']);
  });
});
