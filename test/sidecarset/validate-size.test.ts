import { describe, expect, it } from '@jest/globals';
import { MAX_SIDECARSET_SPEC_BYTES } from '../../lib/sidecarset/validate-size.ts';
import { errorsFor, validSidecarSet } from './validate-fixture.ts';

/** An env value that brings the fixture's spec to exactly `bytes` bytes of JSON. */
function envOfSpecBytes(bytes: number): unknown[] {
  const spec = validSidecarSet().spec as Record<string, unknown>;
  const containers = spec.containers as { env?: unknown[] }[];
  const env = [...(containers[0]?.env ?? []), { name: 'PAD', value: '' }];
  const base = Buffer.byteLength(JSON.stringify({ ...spec, containers: [{ ...containers[0], env }, ...containers.slice(1)] }));
  return [...env.slice(0, -1), { name: 'PAD', value: 'x'.repeat(bytes - base) }];
}

describe('rule 15: the size of a set', () => {
  it('admits a spec of exactly the limit', () => {
    expect(errorsFor({ 'spec.containers.0.env': envOfSpecBytes(MAX_SIDECARSET_SPEC_BYTES) })).toEqual([]);
  });

  it('refuses a spec one byte over the limit, saying why every pod-inject cares', () => {
    expect(errorsFor({ 'spec.containers.0.env': envOfSpecBytes(MAX_SIDECARSET_SPEC_BYTES + 1) })).toEqual([
      `spec: Too long: may not be more than ${MAX_SIDECARSET_SPEC_BYTES} bytes as JSON (it is ${MAX_SIDECARSET_SPEC_BYTES + 1}): every pod-inject reads every set before it answers`,
    ]);
  });
});
