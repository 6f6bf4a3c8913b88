import { describe, expect, it } from '@jest/globals';
import { featureGatesOf, imageTag, kruiseManagerOf, managerActive, parseKruiseVersion, supportedLine } from '../../lib/migrate/kruise-manager.ts';

function deployment(container: Record<string, unknown>, replicas = 2, readyReplicas = 2) {
  return { spec: { replicas, template: { spec: { containers: [{ name: 'manager', ...container }] } } }, status: { readyReplicas } };
}

describe("Kruise's manager Deployment", () => {
  it.each<[string, string | undefined]>([
    ['openkruise/kruise-manager:v1.8.2', 'v1.8.2'],
    ['registry.example:5000/openkruise/kruise-manager:v1.9.0@sha256:0123', 'v1.9.0'],
    ['registry.example:5000/openkruise/kruise-manager@sha256:0123', undefined],
    ['openkruise/kruise-manager', undefined],
  ])('the tag of %s is %s', (image, tag) => {
    expect(imageTag(image)).toBe(tag);
  });

  it.each<[string, string | undefined]>([
    ['v1.8.2', '1.8'],
    ['1.9.0', '1.9'],
    ['v1.9.0-rc.1', '1.9'],
    ['v1.7.3', undefined],
    ['v2.0.0', undefined],
    ['latest', undefined],
  ])('version %s is of the covered line %s', (tag, line) => {
    expect(supportedLine(parseKruiseVersion(tag))).toBe(line);
  });

  it('reads feature gates as pflag does: comma-separated, either flag form, the last setting wins', () => {
    const gates = featureGatesOf(['--feature-gates=PodWebhook=false,ResourcesDeletionProtection=true', '--other', '--feature-gates', 'PodWebhook=true,Bad=maybe']);
    expect(Object.fromEntries(gates)).toEqual({ PodWebhook: true, ResourcesDeletionProtection: true });
  });

  it('says the version, the replicas and whether the pod webhook handler is registered', () => {
    const manager = kruiseManagerOf(deployment({ image: 'openkruise/kruise-manager:v1.8.2', args: ['--feature-gates=PodWebhook=false'] }, 2, 1));
    expect(manager).toMatchObject({ image: 'openkruise/kruise-manager:v1.8.2', version: { major: 1, minor: 8, patch: 2 }, replicas: 2, readyReplicas: 1, podWebhook: false });
    expect(managerActive(manager)).toBe(true);
  });

  it('CUSTOM_RESOURCE_ENABLE without SidecarSet turns the pod webhook off unless the flag turns it on', () => {
    const env = [{ name: 'CUSTOM_RESOURCE_ENABLE', value: 'CloneSet,BroadcastJob' }];
    expect(kruiseManagerOf(deployment({ image: 'k:v1.8.2', env })).podWebhook).toBe(false);
    expect(kruiseManagerOf(deployment({ image: 'k:v1.8.2', env, args: ['--feature-gates=PodWebhook=true'] })).podWebhook).toBe(true);
    expect(kruiseManagerOf(deployment({ image: 'k:v1.8.2', env: [{ name: 'CUSTOM_RESOURCE_ENABLE', value: 'SidecarSet,CloneSet' }] })).podWebhook).toBe(true);
  });

  it('a manager scaled to zero with nothing ready is stopped', () => {
    expect(managerActive(kruiseManagerOf(deployment({ image: 'k:v1.8.2' }, 0, 0)))).toBe(false);
    expect(managerActive(undefined)).toBe(false);
  });
});
