/**
 * cdk-nag's AWS Solutions rule pack over the synthesized stack, public and
 * private ingress: no finding that infra/aws/nag-acknowledgements.ts does not
 * acknowledge with its reason. Stand-in bundles: the rules read the template,
 * never the code.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Validations } from 'aws-cdk-lib';
import { CfnSecret } from 'aws-cdk-lib/aws-secretsmanager';
import { AwsSolutionsChecks } from 'cdk-nag';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../infra/aws/app.ts';
import type { BundleDirectories } from '../../infra/aws/bundles.ts';
import { standInBundles } from './bundles.ts';

const PRIVATE = {
  webhookIngress: 'private',
  webhookVpcId: 'vpc-0123456789abcdef0',
  webhookSubnetIds: 'subnet-0123456789abcdef0,subnet-0fedcba9876543210',
  webhookCallerSecurityGroupId: 'sg-0aaaaaaaaaaaaaaaa',
};

let scratch: string;
let bundles: BundleDirectories;
let outdirs = 0;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'sidecarset-nag-'));
  bundles = await standInBundles(join(scratch, 'bundles'));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** The app with the AWS Solutions checks plugged in, as `cdk synth` would run them. */
async function checkedApp(context: Record<string, unknown>) {
  const made = await createApp({ context, bundles, outdir: join(scratch, `out-${++outdirs}`) });
  Validations.of(made.app).addPlugins(new AwsSolutionsChecks(made.app));
  return made;
}

describe('cdk-nag AwsSolutions', () => {
  it.each([
    ['public Function URLs (the default)', {}],
    ['the private ingress with the dedicated caller security group', PRIVATE],
    ['the private ingress with a security group of the user\'s own', { ...PRIVATE, webhookCallerSecurityGroupId: undefined, webhookSecurityGroupId: 'sg-0123456789abcdef0' }],
  ])('finds nothing unacknowledged in the stack with %s', async (_what, context) => {
    const { app } = await checkedApp(context);
    // A finding fails synth with "Validation failed" and the report's path.
    expect(() => app.synth()).not.toThrow();
  }, 120_000);

  it('fails synth on a finding nobody acknowledged (the checks run)', async () => {
    const { app, stack } = await checkedApp({});
    // Made after the stack acknowledged its own secrets: an unrotated secret nobody gave a reason for.
    new CfnSecret(stack, 'UnreasonedSecret', { generateSecretString: {} });
    expect(() => app.synth()).toThrow(/UnreasonedSecret[\s\S]*AwsSolutions-SMG4/);
  }, 120_000);
});
