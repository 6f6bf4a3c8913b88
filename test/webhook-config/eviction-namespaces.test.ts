import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parseObjects } from '../../lib/kube/yaml-objects.ts';
import { EVICTION_POLICY_NAME, excludedNamespaces, ManifestOptionsError, withEvictionNamespaces } from '../../lib/webhook-config/webhook-configurations.ts';

const rbac = async () => parseObjects(await readFile(join(process.cwd(), 'infra', 'k8s', 'rbac.yaml'), 'utf8'), 'rbac.yaml');
const evictionVariables = (objects: unknown[]) =>
  (objects.find((o) => (o as { kind?: string; metadata?: { name?: string } }).kind === 'ValidatingAdmissionPolicy' && (o as { metadata: { name: string } }).metadata.name === EVICTION_POLICY_NAME) as { spec: { variables: { name: string; expression: string }[] } }).spec.variables;

describe('the eviction policy’s namespaces, rendered from the list pod-inject’s namespaceSelector gets (issue 45, item 5)', () => {
  it('writes the system namespaces and every --exclude-namespace into the policy, and changes nothing else', async () => {
    const objects = await rbac();
    const rendered = withEvictionNamespaces(objects, excludedNamespaces(['tools', 'kube-system']));
    expect(evictionVariables(rendered)).toEqual([{ name: 'excludedNamespaces', expression: "['kube-system', 'kube-public', 'kube-node-lease', 'tools']" }]);
    expect(rendered.filter((o, i) => o !== objects[i]).length).toBe(1);
  });

  it('keeps rbac.yaml’s own list the same as the rendering without exclusions (npm start applies it as it is)', async () => {
    expect(evictionVariables(await rbac())).toEqual(evictionVariables(withEvictionNamespaces(await rbac(), excludedNamespaces())));
  });

  it('refuses a name that cannot be a namespace’s (nothing of it reaches the CEL)', () => {
    expect(() => excludedNamespaces(["x'] || true || ['"])).toThrow(ManifestOptionsError);
  });

  it('refuses an rbac.yaml without the policy’s variable', () => {
    expect(() => withEvictionNamespaces([], ['kube-system'])).toThrow(/has no ValidatingAdmissionPolicy sidecarset-status-sync-evictions with a variable excludedNamespaces/);
  });
});
