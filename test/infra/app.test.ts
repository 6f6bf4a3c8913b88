/**
 * The synth entry point as `npm run synth` and the CDK CLI run it: a fresh
 * Node process, offline, with stand-in bundles (the template tests use the
 * real ones).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseArgs, UsageError } from '../../infra/aws/app.ts';
import { projectRoot, standInBundles } from './bundles.ts';

const scratch = join(projectRoot, '.cache', `infra-app-test-${process.pid}`);
const app = join(projectRoot, 'infra', 'aws', 'app.ts');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the app in a fresh Node 22 process with only the given environment (no AWS credentials, no CDK settings). */
async function runApp(args: string[], env: Record<string, string> = {}): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [app, ...args], {
      cwd: projectRoot,
      env: { PATH: process.env.PATH ?? '', HOME: scratch, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

async function scheduleOf(templateFile: string): Promise<unknown> {
  const template = JSON.parse(await readFile(templateFile, 'utf8')) as { Resources: Record<string, { Type: string; Properties: { ScheduleExpression?: string } }> };
  return Object.values(template.Resources).find((r) => r.Type === 'AWS::Events::Rule')?.Properties.ScheduleExpression;
}

beforeAll(async () => {
  await mkdir(scratch, { recursive: true });
  await standInBundles(join(scratch, 'bundles'));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('parseArgs', () => {
  it('reads context values the way the CDK CLI spells them', () => {
    expect(parseArgs(['-c', 'a=1', '--context', 'b=x=y', '--context=c=', '--outdir', 'out', '--bundles=b'])).toEqual({
      context: { a: '1', b: 'x=y', c: '' },
      outdir: join(process.cwd(), 'out'),
      bundles: join(process.cwd(), 'b'),
      build: false,
    });
    expect(parseArgs(['--build']).build).toBe(true);
  });

  it.each([
    [['--verbose'], /unknown argument "--verbose"/],
    [['-c'], /-c needs a value/],
    [['-c', 'rate'], /-c takes key=value, not "rate"/],
    [['--context', '=1'], /--context takes key=value/],
  ])('rejects %j with the usage', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(UsageError);
    expect(() => parseArgs(argv)).toThrow(message);
    expect(() => parseArgs(argv)).toThrow(/usage: npm run synth -- \[-c key=value \.\.\.\]/);
  });
});

describe('synth in a fresh process', () => {
  // One run covers both ways in: a synth costs seconds (the template checks of
  // @aws-cdk/core:validateAgainstDefaultRules load a WebAssembly engine).
  it('synthesizes offline with context from the command line and from the CDK CLI environment, as cdk.json runs it', async () => {
    const outdir = join(scratch, 'out');
    const run = await runApp(['--bundles', join(scratch, 'bundles'), '-c', 'statusSyncRateMinutes=5'], {
      CDK_OUTDIR: outdir,
      CDK_CONTEXT_JSON: JSON.stringify({ stackName: 'SidecarSetStaging', statusSyncRateMinutes: '7' }),
    });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^synthesized SidecarSetStaging in \d+\.\d s: .*SidecarSetStaging\.template\.json\n$/);
    // The command line wins, as with the CLI's own -c.
    expect(await scheduleOf(join(outdir, 'SidecarSetStaging.template.json'))).toBe('rate(5 minutes)');
  }, 60_000);

  it('stops with the key and the problem for a bad context value, without a stack trace', async () => {
    const run = await runApp(['-c', 'statusSyncRateMinutes=0']);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'synth: context "statusSyncRateMinutes" must be a whole number of minutes from 1 to 1440; got "0" (set it with -c statusSyncRateMinutes=VALUE)\n',
    );
  });

  it('names every missing bundle and how to build them', async () => {
    const run = await runApp(['--bundles', join(scratch, 'empty'), '--outdir', join(scratch, 'out-missing')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^synth: no bundle for sidecarset-default \(.*\), sidecarset-validate \(.*\), pod-inject \(.*\), status-sync \(.*\): run `npm run build`/);
  });

  it('with --build (npm run synth), says what the context lacks before bundling anything', async () => {
    const bundles = join(scratch, 'not-built');
    const run = await runApp(['--build', '--bundles', bundles, '--outdir', join(scratch, 'out-private'), '-c', 'webhookIngress=private']);
    expect(run.code).toBe(1);
    // Every missing value at once, each with what it is.
    expect(run.stderr).toMatch(/^synth: context "webhookVpcId", "webhookSubnetIds", "webhookCallerSecurityGroupId" must be set with webhookIngress=private: webhookVpcId, the cluster's VPC id .*; webhookSubnetIds, .*; webhookCallerSecurityGroupId, .* \(set them with -c webhookVpcId=VALUE -c webhookSubnetIds=VALUE -c webhookCallerSecurityGroupId=VALUE\)/);
    expect(run.stdout).toBe('');
    expect(existsSync(bundles)).toBe(false);
  });

  it('exits 2 with the usage for an unknown argument', async () => {
    const run = await runApp(['--profile', 'prod']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^synth: unknown argument "--profile"\nusage:/);
  });
});
