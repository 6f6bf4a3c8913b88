import { describe, expect, it } from '@jest/globals';
import { kruiseManagerOf } from '../../lib/migrate/kruise-manager.ts';
import { kruiseEntries, ourEntries } from '../../lib/migrate/webhook-entries.ts';

const sidecarSetRule = { apiGroups: ['apps.kruise.io'], apiVersions: ['v1alpha1'], resources: ['sidecarsets'], operations: ['CREATE', 'UPDATE'] };
const podCreate = { apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'] };
const msidecarset = { name: 'msidecarset.kb.io', rules: [sidecarSetRule] };
const mpod = { name: 'mpod.kb.io', rules: [podCreate] };
const mcloneset = { name: 'mcloneset.kb.io', rules: [{ apiGroups: ['apps.kruise.io'], resources: ['clonesets'], operations: ['CREATE'] }] };

function configuration(webhooks: unknown[], template?: unknown[]) {
  return { metadata: { name: 'kruise-mutating-webhook-configuration', ...(template ? { annotations: { template: JSON.stringify(template) } } : {}) }, webhooks };
}

const running = (args: string[] = []) => kruiseManagerOf({ spec: { replicas: 1, template: { spec: { containers: [{ name: 'manager', image: 'k:v1.8.2', args }] } } } });
const stopped = kruiseManagerOf({ spec: { replicas: 0, template: { spec: { containers: [{ name: 'manager', image: 'k:v1.8.2' }] } } } });

describe("Kruise's SidecarSet and pod-injection entries", () => {
  it('finds the SidecarSet and pod-injection entries by their rules and leaves the others', () => {
    const entries = kruiseEntries(configuration([msidecarset, mpod, mcloneset]), true, running());
    expect(entries.map((e) => [e.name, e.kind, e.active])).toEqual([
      ['mpod.kb.io', 'pod-inject', true],
      ['msidecarset.kb.io', 'sidecarset', true],
    ]);
  });

  it('an entry removed from webhooks but kept in the template returns while the manager runs', () => {
    const entries = kruiseEntries(configuration([mcloneset], [msidecarset, mpod, mcloneset]), true, running());
    expect(entries.map((e) => [e.name, e.active, e.inTemplate, e.returns])).toEqual([
      ['mpod.kb.io', false, true, true],
      ['msidecarset.kb.io', false, true, true],
    ]);
  });

  it('an entry gone from both webhooks and the template stays away', () => {
    expect(kruiseEntries(configuration([mcloneset], [mcloneset]), true, running())).toEqual([]);
  });

  it('nothing returns when the manager is stopped, writes no configuration (EnableExternalCerts) or has no pod handler (PodWebhook=false)', () => {
    const removed = configuration([mcloneset], [msidecarset, mpod, mcloneset]);
    expect(kruiseEntries(removed, true, stopped).some((e) => e.returns)).toBe(false);
    expect(kruiseEntries(removed, true, running(['--feature-gates=EnableExternalCerts=true'])).some((e) => e.returns)).toBe(false);
    const noPodHandler = kruiseEntries(removed, true, running(['--feature-gates=PodWebhook=false']));
    expect(noPodHandler.map((e) => [e.name, e.returns])).toEqual([
      ['mpod.kb.io', false],
      ['msidecarset.kb.io', true],
    ]);
  });

  it('without a template annotation the manager makes one from webhooks: the active entries count as in it', () => {
    expect(kruiseEntries(configuration([msidecarset]), true, running())).toEqual([
      { configuration: 'kruise-mutating-webhook-configuration', name: 'msidecarset.kb.io', kind: 'sidecarset', active: true, inTemplate: true, returns: false },
    ]);
  });

  it("pods in a validating configuration are not injection; a missing configuration has no entries", () => {
    expect(kruiseEntries({ webhooks: [{ name: 'vpod.kb.io', rules: [{ ...podCreate, operations: ['UPDATE', 'DELETE'] }] }] }, false, running())).toEqual([]);
    expect(kruiseEntries(undefined, true, running())).toEqual([]);
  });

  it("names this project's installed entries", () => {
    expect(ourEntries({ webhooks: [{ name: 'pod-inject.sidecarset.kruise.io' }] }, undefined)).toEqual({ podInject: true, sidecarSetDefault: false, sidecarSetValidate: false });
  });
});
