/** Every consumer of the function descriptors follows the list: nothing about a function is written anywhere else. */
import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FUNCTION_SPECS, STACK_FUNCTIONS } from '../../infra/aws/functions.ts';
import { BUNDLE_ENTRIES } from '../../scripts/bundle.ts';
import { needsCluster, triggersRollout } from '../../functions/shared/compose.ts';
import { FUNCTION_HELP } from '../../functions/invoke/function-help.ts';
import { usageOf, USAGE } from '../../functions/invoke/usage.ts';
import { renderWebhookConfigurations } from '../../lib/webhook-config/webhook-configurations.ts';
import { FUNCTION_DESCRIPTORS, readsCluster, SIDECARSET_CONVERT } from '../../lib/webhooks/descriptors.ts';
import { ADMISSION_FUNCTIONS, descriptorOf, FUNCTION_NAMES, isAdmissionFunction, isFunctionName, type AdmissionDescriptor } from '../../lib/webhooks/registry.ts';
import { CRD_NAME } from '../../lib/crd/sidecarset-crd.ts';

const projectRoot = join(import.meta.dirname, '..', '..');
const names = FUNCTION_DESCRIPTORS.map((d) => d.name);
const admission = FUNCTION_DESCRIPTORS.filter((d): d is AdmissionDescriptor => d.answers === 'AdmissionReview');
const admissionNames = admission.map((d) => d.name);

describe('the function descriptors', () => {
  it('are the functions the entry points serve: four admission functions and the CRD conversion function', () => {
    expect([...ADMISSION_FUNCTIONS]).toEqual(['sidecarset-default', 'sidecarset-validate', 'pod-inject', 'pod-change']);
    expect([...FUNCTION_NAMES]).toEqual([...ADMISSION_FUNCTIONS, 'sidecarset-convert']);
    for (const d of FUNCTION_DESCRIPTORS) {
      expect(isAdmissionFunction(d.name)).toBe(d.answers === 'AdmissionReview');
      expect(isFunctionName(d.name)).toBe(true);
      expect(descriptorOf(d.name)).toBe(d);
    }
  });

  it('register the conversion function as the SidecarSet CRD\'s conversion webhook, reading nothing from the cluster', () => {
    expect(SIDECARSET_CONVERT).toMatchObject({ answers: 'ConversionReview', caller: { in: 'CustomResourceDefinition', crd: CRD_NAME }, triggersReconcile: false });
    expect(readsCluster(SIDECARSET_CONVERT)).toBe(false);
  });

  it('give the stack one function per descriptor, then the reconciler', () => {
    expect([...STACK_FUNCTIONS]).toEqual([...names, 'status-sync']);
    for (const d of FUNCTION_DESCRIPTORS) {
      expect(FUNCTION_SPECS[d.name]).toMatchObject({ trigger: 'function-url', readsCluster: readsCluster(d), takesKubeSettings: readsCluster(d) });
      expect(FUNCTION_SPECS[d.name].description).toMatch(/ webhook \(/);
    }
  });

  it('give the bundler one entry per descriptor, each a one-line handler naming its function', () => {
    expect(BUNDLE_ENTRIES.map((b) => b.fn)).toEqual([...names, 'status-sync']);
    for (const d of FUNCTION_DESCRIPTORS) {
      const entry = BUNDLE_ENTRIES.find((b) => b.fn === d.name)?.entry ?? '';
      expect(entry).toBe(`functions/${d.name}/handler.ts`);
      expect(existsSync(join(projectRoot, entry))).toBe(true);
      expect(readFileSync(join(projectRoot, entry), 'utf8')).toContain(`admissionLambda('${d.name}'`);
    }
  });

  it('give the composition what each function reads and whether it starts a reconcile', () => {
    for (const d of FUNCTION_DESCRIPTORS) {
      expect(needsCluster(d.name)).toBe(readsCluster(d));
      expect(triggersRollout(d.name)).toBe(d.triggersReconcile);
    }
    for (const d of admission) {
      // A side effect is declared to the API server exactly where there is one.
      expect(d.caller.sideEffects).toBe(d.triggersReconcile ? 'NoneOnDryRun' : 'None');
    }
  });

  it('are the webhooks of the rendered configurations, with their rules and policies', () => {
    const targets = Object.fromEntries(admissionNames.map((n) => [n, { url: `https://127.0.0.1:8443/${n}/s` }])) as Parameters<typeof renderWebhookConfigurations>[0]['targets'];
    const configs = renderWebhookConfigurations({ targets, podFailurePolicy: 'Ignore' }) as { kind: string; webhooks: Record<string, unknown>[] }[];
    const rendered: Record<string, unknown>[] = configs.flatMap((c) => c.webhooks.map((w) => ({ in: c.kind, ...w })));
    // The conversion function is no webhook of theirs: the CRD names it. A function's further webhooks (alsoAs) follow its own.
    const further = admission.flatMap((d) => (d.caller.alsoAs ?? []).map((w) => `${w.name}.sidecarset.kruise.io`));
    expect(rendered.map((w) => w.name).sort()).toEqual([...admissionNames.map((n) => `${n}.sidecarset.kruise.io`), ...further].sort());
    for (const d of admission) {
      const webhook = rendered.find((w) => w.name === `${d.name}.sidecarset.kruise.io`);
      expect(webhook).toMatchObject({
        in: d.caller.in,
        rules: d.caller.rules,
        failurePolicy: d.caller.failurePolicy === 'deployment' ? 'Ignore' : d.caller.failurePolicy,
        sideEffects: d.caller.sideEffects,
        clientConfig: { url: targets[d.name].url },
      });
      expect(webhook?.reinvocationPolicy).toBe(d.caller.reinvocationPolicy);
      expect(webhook?.namespaceSelector !== undefined).toBe(d.caller.skipsExcludedNamespaces);
      for (const named of d.caller.alsoAs ?? []) {
        // Same configuration, same URL (no Function URL of its own), its own rules and policies.
        const also = rendered.find((w) => w.name === `${named.name}.sidecarset.kruise.io`);
        expect(also).toMatchObject({ in: d.caller.in, rules: named.rules, failurePolicy: named.failurePolicy, sideEffects: named.sideEffects, clientConfig: { url: targets[d.name].url } });
        expect(also?.matchConditions).toEqual(named.matchConditions);
      }
    }
  });

  it('render the pod-eviction webhook after pod-change, for the reconciler\'s evictions only, failing closed within 5 s', () => {
    const targets = Object.fromEntries(admissionNames.map((n) => [n, { url: `https://127.0.0.1:8443/${n}/s` }])) as Parameters<typeof renderWebhookConfigurations>[0]['targets'];
    const validating = renderWebhookConfigurations({ targets }).find((c) => c.kind === 'ValidatingWebhookConfiguration') as { webhooks: Record<string, unknown>[] };
    expect(validating.webhooks.map((w) => w.name)).toEqual(['sidecarset-validate.sidecarset.kruise.io', 'pod-change.sidecarset.kruise.io', 'pod-eviction.sidecarset.kruise.io']);
    expect(validating.webhooks[2]).toMatchObject({
      clientConfig: { url: targets['pod-change'].url },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods/eviction'], operations: ['CREATE'], scope: 'Namespaced' }],
      failurePolicy: 'Fail',
      sideEffects: 'None',
      timeoutSeconds: 5,
      matchConditions: [{ name: 'is-status-sync', expression: expect.stringContaining("'sidecarset-status-sync'") }],
    });
    expect(validating.webhooks[2]?.namespaceSelector).toBeUndefined();
  });

  it('give invoke a help text and a line in its list for every function', () => {
    for (const d of FUNCTION_DESCRIPTORS) {
      expect(USAGE).toContain(`  ${d.name.padEnd(21)}${FUNCTION_HELP[d.name].summary}`);
      expect(usageOf(d.name)).toMatch(new RegExp(`^usage: invoke ${d.name} `));
      expect(usageOf(d.name).includes('--revisions FILE')).toBe(d.reads.revisions);
      expect(usageOf(d.name)).toContain(`a plain ${d.reviews}`);
      expect(usageOf(d.name).includes('--to v1alpha1|v1beta1')).toBe(d.answers === 'ConversionReview');
    }
  });
});
