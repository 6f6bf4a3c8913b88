/**
 * What Kubernetes 1.32's pod validation (Kruise 1.9's) checks and 1.30's
 * (Kruise 1.8's) did not know: `image` volumes (an OCI image mounted
 * read-only; no subPath on their mounts; Kruise's options leave `reference`
 * optional, and nothing defaults `pullPolicy`) and the `request` a resource
 * claim may name. Whole messages, as Kubernetes words them; each row was
 * checked against Kruise v1.9.0's defaulting and validating webhooks (the
 * conformance reference, control-plane/tools/kruise-reference): the same
 * verdict and the same errors.
 */
import { describe, expect, it } from '@jest/globals';
import { errorsFor, startingWith } from './validate-fixture.ts';

type Row = [string, Record<string, unknown>, string[]];

/** An image volume spec.volumes[2], mounted by the second container. */
const imageVolume = (image: unknown, mount: Record<string, unknown> = {}, more: Record<string, unknown> = {}): Record<string, unknown> => ({
  'spec.volumes.2': { name: 'model', image, ...more },
  'spec.containers.1.volumeMounts': [{ name: 'model', mountPath: '/model', readOnly: true, ...mount }],
});
const modelGone = 'spec.containers[1].volumeMounts[0].name: Not found: "model"';

describe('image volumes (Kubernetes 1.32)', () => {
  it.each<Row>([
    ['accepts an image volume with a reference and a pull policy', imageVolume({ reference: 'registry.example.com/models/llm:v1', pullPolicy: 'IfNotPresent' }), []],
    ['accepts one without a reference (a SidecarSet is validated as a template, not a pod)', imageVolume({ pullPolicy: 'Always' }), []],
    ['accepts pull policy Never', imageVolume({ reference: 'm:1', pullPolicy: 'Never' }), []],
    [
      'requires a pull policy (nothing defaults it: Kubernetes does only behind its ImageVolume gate)',
      imageVolume({ reference: 'm:1' }),
      ['spec.volumes[2].image.pullPolicy: Required value', modelGone],
    ],
    [
      'refuses an unknown pull policy',
      imageVolume({ reference: 'm:1', pullPolicy: 'Sometimes' }),
      ['spec.volumes[2].image.pullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"', modelGone],
    ],
    [
      'refuses an image beside another source',
      imageVolume({ reference: 'm:1', pullPolicy: 'Always' }, {}, { emptyDir: {} }),
      ['spec.volumes[2].image: Forbidden: may not specify more than 1 volume type', modelGone],
    ],
    [
      'refuses a subPath on a mount of an image volume',
      imageVolume({ reference: 'm:1', pullPolicy: 'Always' }, { subPath: 'weights' }),
      ['spec.containers[1].volumeMounts[0].subPath: Invalid value: "weights": not allowed in image volume sources'],
    ],
    [
      'refuses a subPathExpr on a mount of an image volume',
      imageVolume({ reference: 'm:1', pullPolicy: 'Always' }, { subPathExpr: '$(POD_NAME)' }),
      ['spec.containers[1].volumeMounts[0].subPathExpr: Invalid value: "$(POD_NAME)": not allowed in image volume sources'],
    ],
    ['still accepts a subPath on a mount of another volume', { 'spec.containers.1.volumeMounts': [{ name: 'logging-logs', mountPath: '/logs', subPath: 'metrics' }] }, []],
    [
      'refuses an image volume as a block device',
      { 'spec.volumes.2': { name: 'model', image: { reference: 'm:1', pullPolicy: 'Always' } }, 'spec.containers.1.volumeDevices': [{ name: 'model', devicePath: '/dev/xvdb' }] },
      ['spec.containers[1].volumeDevices[0].name: Invalid value: "model": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode'],
    ],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(expected);
  });
});

const claims = 'spec.containers.0.resources.claims';
const notFound = (i: number, name: string): string =>
  `spec.containers[0].resources.claims[${i}]: Not found: "${name}": must be one of the names in pod.spec.resourceClaims which is empty`;

describe("resource claims' request (Kubernetes 1.32)", () => {
  it.each<Row>([
    // The pod Kruise validates in declares no resource claims: every named claim is not found, whatever else.
    ['takes a request of a claim (the claim itself is still not found)', { [claims]: [{ name: 'gpu', request: 'large' }] }, [notFound(0, 'gpu')]],
    ['takes two requests of one claim', { [claims]: [{ name: 'gpu', request: 'a' }, { name: 'gpu', request: 'b' }] }, [notFound(0, 'gpu'), notFound(1, 'gpu')]],
    [
      'refuses the same request twice',
      { [claims]: [{ name: 'gpu', request: 'a' }, { name: 'gpu', request: 'a' }] },
      [notFound(0, 'gpu'), 'spec.containers[0].resources.claims[1]: Duplicate value: "gpu/a"', notFound(1, 'gpu')],
    ],
    [
      // Kubernetes adds one error per request named before, all alike; Kruise's message (an aggregate) prints it once.
      'refuses the whole claim after its requests, once',
      { [claims]: [{ name: 'gpu', request: 'a' }, { name: 'gpu', request: 'b' }, { name: 'gpu' }] },
      [notFound(0, 'gpu'), notFound(1, 'gpu'), 'spec.containers[0].resources.claims[2]: Duplicate value: "gpu"', notFound(2, 'gpu')],
    ],
    [
      'refuses a request after the whole claim',
      { [claims]: [{ name: 'gpu' }, { name: 'gpu', request: 'a' }] },
      [notFound(0, 'gpu'), 'spec.containers[0].resources.claims[1]: Duplicate value: "gpu"', notFound(1, 'gpu')],
    ],
    [
      'refuses the whole claim twice',
      { [claims]: [{ name: 'gpu' }, { name: 'gpu' }] },
      [notFound(0, 'gpu'), 'spec.containers[0].resources.claims[1]: Duplicate value: "gpu"', notFound(1, 'gpu')],
    ],
    ['requires a name, whatever the request', { [claims]: [{ request: 'a' }] }, ['spec.containers[0].resources.claims[0]: Required value']],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(expected);
  });

  it('refuses a request that is not a DNS-1123 label', () => {
    expect(errorsFor({ [claims]: [{ name: 'gpu', request: 'Large_1' }] })).toEqual(
      startingWith(['spec.containers[0].resources.claims[0].request: Invalid value: "Large_1": a lowercase RFC 1123 label must consist of', notFound(0, 'gpu')]),
    );
  });

  it('reads a long list once: the whole claim after many of its requests is one duplicate', () => {
    const many = Array.from({ length: 2_000 }, (_v, i) => ({ name: 'gpu', request: `r${i % 1_000}` }));
    const errors = errorsFor({ [claims]: [...many, { name: 'gpu' }, { name: 'gpu' }] });
    expect(errors.filter((e) => e.includes('Duplicate value: "gpu/')).length).toBe(1_000);
    expect(errors.filter((e) => e.startsWith('spec.containers[0].resources.claims[2000]: Duplicate value: "gpu"')).length).toBe(1);
    expect(errors.filter((e) => e.startsWith('spec.containers[0].resources.claims[2001]: Duplicate value: "gpu"')).length).toBe(1);
  });
});
