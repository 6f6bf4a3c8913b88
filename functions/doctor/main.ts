/**
 * Entry point of `npm run -s doctor -- [--kubeconfig FILE] [--outputs outputs.json] [-n NS] [--pod-labels k=v,...]`:
 * the stack is the one outputs.json names (its Function URLs), else the running npm start's (its port and secret).
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { kubeConfigClient } from '../../lib/adapters/kubeconfig.ts';
import { revisionNamespaceFromEnv } from '../../lib/adapters/revision-namespace.ts';
import type { ExpectedStack } from '../../lib/doctor/checks.ts';
import { errorMessage } from '../../lib/errors.ts';
import { arrayOf, objectOf, stringOf } from '../../lib/kube/json.ts';
import { functionUrlsFromOutputs } from '../../lib/webhook-config/targets.ts';
import { ADMISSION_FUNCTIONS } from '../../lib/webhooks/registry.ts';
import { runningServerPort } from '../server/serving-file.ts';
import { chooseCluster, connectChosen } from '../status-view/compose.ts';
import { runDoctor } from './run.ts';

export const DOCTOR_USAGE = `usage: npm run -s doctor -- [--kubeconfig FILE] [--outputs outputs.json] [-n NS] [--pod-labels k=v,...]
  --kubeconfig FILE  the cluster (default as npm run status chooses it)
  --outputs FILE     the deployed stack's cdk outputs (its Function URLs); default: the running npm start
  -n NS              the namespace of the dry-run pod (default "default")
  --pod-labels k=v   the dry-run pod's labels (default: the first SidecarSet's selector.matchLabels)
exit codes: 0 every check holds; 1 a check failed; 2 bad usage, or no stack to check.`;

class UsageError extends Error {}

function parse(argv: readonly string[]): Map<string, string> {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] === '-n' ? '--namespace' : (argv[i] ?? '');
    if (!['--kubeconfig', '--outputs', '--namespace', '--pod-labels'].includes(flag)) throw new UsageError(`unknown option ${argv[i] ?? ''}`);
    const value = argv[++i];
    if (value === undefined || value === '') throw new UsageError(`${flag} needs a value`);
    values.set(flag, value);
  }
  return values;
}

async function expectedStack(outputs: string | undefined): Promise<ExpectedStack> {
  if (outputs !== undefined) {
    const urls = functionUrlsFromOutputs(JSON.parse(await readFile(outputs, 'utf8')) as unknown);
    // The secret lives in Secrets Manager: the URLs are compared, and the webhooks answering proves the secret.
    return { urls: Object.fromEntries(Object.entries(urls).map(([fn, url]) => [fn, `${url.replace(/\/+$/, '')}/`])) };
  }
  const tlsDir = resolve('.cache/local-server');
  const port = runningServerPort(tlsDir);
  if (port === undefined) throw new UsageError('no stack to check: give --outputs outputs.json (a deployed stack), or run npm start');
  const secret = stringOf(objectOf(JSON.parse(await readFile(join(tlsDir, 'webhook-secret'), 'utf8')) as unknown)?.current);
  return { urls: Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, `https://127.0.0.1:${port}/${fn}/`])), ...(secret === undefined ? {} : { secret }) };
}

function labelsOf(text: string): Record<string, string> {
  return Object.fromEntries(text.split(',').map((pair) => {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--pod-labels takes k=v pairs, got ${JSON.stringify(pair)}`);
    return [pair.slice(0, eq), pair.slice(eq + 1)];
  }));
}

async function main(argv: readonly string[]): Promise<number> {
  try {
    const values = parse(argv);
    const expected = await expectedStack(values.get('--outputs'));
    const client = kubeConfigClient(await connectChosen(chooseCluster(values.get('--kubeconfig'), process.env), (text) => process.stderr.write(text)));
    let podLabels: Record<string, string> = {};
    const given = values.get('--pod-labels');
    if (given !== undefined) podLabels = labelsOf(given);
    else {
      const sets = await client.request({ method: 'GET', path: '/apis/apps.kruise.io/v1beta1/sidecarsets', query: { limit: '1' }, operation: 'list SidecarSets' });
      const first = objectOf(arrayOf(objectOf(sets.body)?.items)[0]);
      podLabels = Object.fromEntries(Object.entries(objectOf(objectOf(objectOf(first?.spec)?.selector)?.matchLabels) ?? {}).map(([k, v]) => [k, String(v)]));
    }
    const revisionNamespace = revisionNamespaceFromEnv(process.env);
    const ok = await runDoctor(client, { expected, namespace: values.get('--namespace') ?? 'default', podLabels, revisionNamespace }, (line) => process.stdout.write(`${line}\n`));
    return ok ? 0 : 1;
  } catch (error) {
    process.stderr.write(`doctor: ${errorMessage(error)}${error instanceof UsageError ? `\n${DOCTOR_USAGE}` : ''}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}

const code = await main(process.argv.slice(2));
process.stdout.write('', () => process.exit(code));
