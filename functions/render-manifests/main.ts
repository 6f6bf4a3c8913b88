/**
 * `npm run manifests -- ...`: the Kubernetes manifests for one deployment,
 * as YAML on standard output: the CRD, the RBAC for the functions' two
 * identities (the webhooks' read-only one, status-sync's writer) with the
 * policy that narrows the writer's pod patches, and the webhook
 * configurations pointing at the functions; the CRD's conversion webhook
 * points at the sidecarset-convert function (its URL plus the secret).
 *
 *   Lambda:  --function-urls FILE (CDK outputs JSON) | --url-<function> URL ...,
 *            with the caller secret from --secret-file FILE or $WEBHOOK_SECRET
 *   Local:   --local [--port N] [--tls-dir DIR]  (the npm start server)
 *   Both:    [--pod-failure-policy Fail|Ignore] [--timeout SECONDS] [--exclude-namespace NS ...] [--only webhooks]
 *            [--injection policy|webhook] (default policy: the MutatingAdmissionPolicy injects the sets it can, Kubernetes 1.36
 *            or later; webhook: pod-inject for every pod, for older clusters; docs/INJECTION-POLICY.md)
 *            [--revision-namespace NS] (default $SIDECARSET_REVISION_NAMESPACE, else kruise-system:
 *            where the RBAC lets the functions keep ControllerRevisions)
 *            [--no-namespace] (leave out the Namespace object: where Kruise, or anyone
 *            else, owns the revision namespace, so that `kubectl delete -f` cannot delete it)
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Document } from 'yaml';
import { SourceOptionsError } from '../../lib/adapters/kube-sources.ts';
import { ENV_REVISION_NAMESPACE, inRevisionNamespace, revisionNamespaceFromEnv } from '../../lib/adapters/revision-namespace.ts';
import { checkSecretStrength, parseJudgedSecretValue } from '../../lib/auth/secret-strength.ts';
import { isObject } from '../../lib/kube/json.ts';
import { parseObjects } from '../../lib/kube/yaml-objects.ts';
import { excludedNamespaces, injectableNamespaces, renderWebhookConfigurations, withEvictionNamespaces } from '../../lib/webhook-config/webhook-configurations.ts';
import { renderInjectionPolicy } from '../../lib/webhook-config/injection-policy.ts';
import { functionUrlsFromOutputs, ManifestsCliError, webhookUrl } from '../../lib/webhook-config/targets.ts';
import { ADMISSION_FUNCTIONS, FUNCTION_NAMES, type AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { SIDECARSET_CONVERT, type FunctionName } from '../../lib/webhooks/descriptors.ts';
import { CRD_NAME, withConversionClientConfig } from '../../lib/crd/sidecarset-crd.ts';
import type { JsonObject } from '../../lib/kube/types.ts';
import { CA_FILE } from '../server/tls.ts';
import { runningServerPort } from '../server/serving-file.ts';

const projectRoot = resolve(import.meta.dirname, '..', '..');

/** One URL flag per function: --url-<function> (the conversion function's too: the CRD points at it). */
const URL_FLAGS = FUNCTION_NAMES.map((fn) => `--url-${fn}`);

export const MANIFESTS_USAGE = `usage: npm run -s manifests -- (--function-urls FILE | ${URL_FLAGS.map((flag) => `${flag} URL`).join(' ')} | --local [--port N] [--tls-dir DIR])
       [--secret-file FILE] [--pod-failure-policy Fail|Ignore] [--timeout SECONDS] [--exclude-namespace NS]... [--only webhooks]
       [--revision-namespace NS]  (default $${ENV_REVISION_NAMESPACE}, else kruise-system) [--no-namespace] [--injection policy|webhook]`;

/** `--help`: the usage, what is rendered, and what each option does. */
export const MANIFESTS_HELP = `${MANIFESTS_USAGE}

Prints, as YAML on standard output, the Kubernetes manifests of one deployment, to apply with
kubectl apply --server-side -f (the CRD is over client-side apply's 256 KiB):
  - the SidecarSet CRD (infra/k8s/crd.yaml, both versions), its conversion webhook pointing at
    sidecarset-convert's URL with the caller secret;
  - the RBAC: the webhooks' read-only identity, status-sync's writer, the ValidatingAdmissionPolicy
    narrowing the writer's pod patches, and a Namespace, Role and RoleBinding for the ControllerRevisions;
  - the MutatingWebhookConfiguration (sidecarset-default, pod-inject) and the ValidatingWebhookConfiguration
    (sidecarset-validate, pod-change, and pod-eviction at pod-change's URL), each webhook at <its Function URL>/<secret>;
  - the injection MutatingAdmissionPolicy and its binding (admissionregistration.k8s.io/v1: Kubernetes 1.36 or
    later), unless --injection webhook.

Where the functions are (one of):
  --function-urls FILE         the JSON of cdk deploy --outputs-file (all five Function URLs)
${URL_FLAGS.map((flag) => `  ${flag} URL`).join('\n')}
                               each function's URL by hand (overrides --function-urls)
  --local                      the npm start server on this machine: https://127.0.0.1:<port>/<function>/<secret>,
                               its generated CA as caBundle and its secret, read from --tls-dir
  --port N                     with --local: the server's port (default: the running npm start's, else 8443)
  --tls-dir DIR                with --local: where npm start keeps its CA and secret (default .cache/local-server)

Options:
  --secret-file FILE           the caller secret (a bare secret or {"current": ...}); else $WEBHOOK_SECRET
  --pod-failure-policy Fail|Ignore
                               pod-inject's failurePolicy (default Fail: no pod created while it is unreachable;
                               Ignore: pods created without sidecars, which status-sync reports)
  --timeout SECONDS            every webhook's timeoutSeconds (default 10)
  --exclude-namespace NS       never send pods of NS to pod-inject (repeatable; kube-system, kube-public and
                               kube-node-lease always are)
  --only webhooks              the two webhook configurations (and the injection policy, unless --injection webhook)
                               alone, no CRD and no RBAC (needs only the admission functions' URLs)
  --revision-namespace NS      where the RBAC lets the functions keep ControllerRevisions (default
                               $${ENV_REVISION_NAMESPACE}, else kruise-system): the namespace the functions use
  --no-namespace               leave that namespace's Namespace object out, where it is not yours (so that
                               kubectl delete -f cannot delete it)
  --injection policy|webhook   which path injects (default policy: the MutatingAdmissionPolicy and its binding
                               inject the sets they can with no webhook call, and pod-inject is called only for the
                               pods they mark; it needs Kubernetes 1.36 or later, EKS included);
                               webhook: pod-inject for every pod, no policy, for clusters older than 1.36 or without
                               admissionregistration.k8s.io/v1 MutatingAdmissionPolicy (docs/INJECTION-POLICY.md)
  -h, --help                   this text

Exit codes: 0 printed; 2 bad usage, an unreadable file or a missing URL or secret (the problem, then the usage).`;

interface Args {
  values: Map<string, string>;
  excluded: string[];
  local: boolean;
  /** Leave the revision namespace's Namespace object out. */
  noNamespace: boolean;
}

const VALUE_FLAGS = [
  '--function-urls', ...URL_FLAGS, '--port', '--tls-dir',
  '--secret-file', '--pod-failure-policy', '--timeout', '--only', '--revision-namespace', '--injection',
];

function parseArgs(argv: readonly string[]): Args {
  const values = new Map<string, string>();
  const excluded: string[] = [];
  let local = false;
  let noNamespace = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--local') {
      local = true;
      continue;
    }
    if (arg === '--no-namespace') {
      noNamespace = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const value = eq > 0 ? arg.slice(eq + 1) : argv[i + 1];
    if (flag === '--exclude-namespace' || VALUE_FLAGS.includes(flag)) {
      if (eq <= 0) i++;
      if (value === undefined || value === '') throw new ManifestsCliError(`${flag} needs a value`);
      if (flag === '--exclude-namespace') excluded.push(value);
      else if (values.has(flag)) throw new ManifestsCliError(`${flag} given twice`);
      else values.set(flag, value);
      continue;
    }
    throw new ManifestsCliError(`unknown argument ${arg}`);
  }
  return { values, excluded, local, noNamespace };
}

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new ManifestsCliError(`cannot read ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** The current secret of a secret file: a bare secret or the stored JSON form (`{"current": …}`, as Secrets Manager and the local server keep it). */
function currentSecretOf(text: string): string {
  try {
    return parseJudgedSecretValue(text, 'the caller secret').current;
  } catch (error) {
    throw new ManifestsCliError((error as Error).message);
  }
}

async function callerSecret(args: Args): Promise<string> {
  const file = args.values.get('--secret-file');
  const secret = file !== undefined ? (await readText(file, 'secret file')).trim() : (process.env.WEBHOOK_SECRET ?? '');
  if (secret === '') throw new ManifestsCliError('the caller secret is needed: --secret-file FILE or $WEBHOOK_SECRET');
  if (file !== undefined) return currentSecretOf(secret);
  try {
    checkSecretStrength(secret, 'the caller secret');
  } catch (error) {
    throw new ManifestsCliError((error as Error).message);
  }
  return secret;
}

/**
 * The Function URLs each function needs, for the functions the render names:
 * `--only webhooks` renders the two webhook configurations, so only the
 * admission functions' URLs are asked for (the CRD, which carries the
 * conversion function's URL, is left out).
 */
async function targetsAndCa(args: Args, needed: readonly FunctionName[]): Promise<{ targets: Partial<Record<FunctionName, { url: string }>>; caPem?: string }> {
  if (args.local) {
    const tlsDir = resolve(args.values.get('--tls-dir') ?? '.cache/local-server');
    // The running npm start's own port (it may have been started with --port 0), else its default.
    const port = args.values.get('--port') ?? String(runningServerPort(tlsDir) ?? 8443);
    const caPem = await readText(join(tlsDir, CA_FILE), 'the local server CA (run npm start once to create it, with the same --tls-dir)');
    const fileSecret = await readFile(join(tlsDir, 'webhook-secret'), 'utf8').then((s) => s.trim(), () => undefined);
    const secret = args.values.has('--secret-file') || fileSecret === undefined ? await callerSecret(args) : currentSecretOf(fileSecret);
    const targets = Object.fromEntries(needed.map((fn) => [fn, { url: `https://127.0.0.1:${port}/${fn}/${secret}` }]));
    return { targets, caPem };
  }
  const outputsFile = args.values.get('--function-urls');
  const urls: Partial<Record<FunctionName, string>> = outputsFile !== undefined ? functionUrlsFromOutputs(JSON.parse(await readText(outputsFile, 'outputs file')) as unknown) : {};
  for (const fn of FUNCTION_NAMES) {
    const flag = args.values.get(`--url-${fn}`);
    if (flag !== undefined) urls[fn] = flag;
  }
  const missing = needed.filter((fn) => urls[fn] === undefined);
  if (missing.length > 0) throw new ManifestsCliError(`no Function URL for ${missing.join(', ')}: give --function-urls FILE or --url-<function> URL`);
  const secret = await callerSecret(args);
  const targets = Object.fromEntries(needed.map((fn) => [fn, { url: webhookUrl(urls[fn] ?? '', secret) }]));
  return { targets };
}

function urlOf(targets: Partial<Record<FunctionName, { url: string }>>, fn: FunctionName): string {
  const target = targets[fn];
  // targetsAndCa refuses a render that lacks a URL it needs; reaching here without one is a bug of this file.
  if (target === undefined) throw new Error(`internal: no URL for ${fn}`);
  return target.url;
}

function admissionTargets(targets: Partial<Record<FunctionName, { url: string }>>): Record<AdmissionFunctionName, { url: string }> {
  return Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, { url: urlOf(targets, fn) }])) as Record<AdmissionFunctionName, { url: string }>;
}

/** The revision namespace: the flag, else the functions' variable, else Kruise's; checked as the functions check it. */
function revisionNamespace(args: Args, env: Readonly<Record<string, string | undefined>>): string {
  const flag = args.values.get('--revision-namespace');
  try {
    return revisionNamespaceFromEnv({ [ENV_REVISION_NAMESPACE]: flag ?? env[ENV_REVISION_NAMESPACE] });
  } catch (error) {
    if (error instanceof SourceOptionsError && flag !== undefined) throw new ManifestsCliError(`--revision-namespace ${error.message.slice(error.variable.length + 1)}`);
    if (error instanceof SourceOptionsError) throw new ManifestsCliError(error.message);
    throw error;
  }
}

export async function renderManifests(argv: readonly string[], env: Readonly<Record<string, string | undefined>> = process.env): Promise<string> {
  const args = parseArgs(argv);
  const namespace = revisionNamespace(args, env);
  const policy = args.values.get('--pod-failure-policy') ?? 'Fail';
  if (policy !== 'Fail' && policy !== 'Ignore') throw new ManifestsCliError(`--pod-failure-policy must be Fail or Ignore, not ${policy}`);
  const timeoutText = args.values.get('--timeout') ?? '10';
  const timeoutSeconds = /^\d+$/.test(timeoutText) ? Number(timeoutText) : Number.NaN;
  const only = args.values.get('--only');
  if (only !== undefined && only !== 'webhooks') throw new ManifestsCliError(`--only takes "webhooks", not ${only}`);
  // The policy path by default: a cluster older than 1.36 must be rendered for with --injection webhook (docs/INJECTION-POLICY.md).
  const injection = args.values.get('--injection') ?? 'policy';
  if (injection !== 'webhook' && injection !== 'policy') throw new ManifestsCliError(`--injection must be policy or webhook, not ${injection}`);
  const { targets, caPem } = await targetsAndCa(args, only === 'webhooks' ? ADMISSION_FUNCTIONS : FUNCTION_NAMES);
  const webhooks = renderWebhookConfigurations({
    injection,
    targets: admissionTargets(targets),
    ...(caPem !== undefined ? { caPem } : {}),
    podFailurePolicy: policy,
    timeoutSeconds,
    excludedNamespaces: args.excluded,
  });
  const docs: unknown[] = [];
  if (only === undefined) {
    // The CRD converts through the sidecarset-convert function, at its URL with the secret, as the webhooks call theirs.
    const conversion = { url: urlOf(targets, SIDECARSET_CONVERT.name), ...(caPem !== undefined ? { caBundle: Buffer.from(caPem).toString('base64') } : {}) };
    docs.push(
      ...parseObjects(await readText(join(projectRoot, 'infra', 'k8s', 'crd.yaml'), 'crd.yaml'), 'crd.yaml').map((object: JsonObject) =>
        isObject(object.metadata) && object.metadata.name === CRD_NAME ? withConversionClientConfig(object, conversion) : object,
      ),
    );
    // The reconciler may evict in no namespace the webhook configurations keep from pod-inject: the same list.
    const rbac = withEvictionNamespaces(inRevisionNamespace(parseObjects(await readText(join(projectRoot, 'infra', 'k8s', 'rbac.yaml'), 'rbac.yaml'), 'rbac.yaml'), namespace), excludedNamespaces(args.excluded));
    docs.push(...(args.noNamespace ? rbac.filter((object) => !isNamespace(object)) : rbac));
  }
  const yaml = docs.map((d) => new Document(d, { aliasDuplicateObjects: false }).toString({ lineWidth: 0 }));
  for (const config of webhooks) {
    const doc = new Document(config, { aliasDuplicateObjects: false });
    doc.commentBefore = MANAGED_URL_COMMENT;
    yaml.push(doc.toString({ lineWidth: 0 }));
  }
  // The policy and its binding: pods of the namespaces pod-inject would be sent (docs/INJECTION-POLICY.md).
  const injectionPolicy = injection === 'policy' ? renderInjectionPolicy(injectableNamespaces(excludedNamespaces(args.excluded))) : [];
  for (const object of injectionPolicy) yaml.push(new Document(object, { aliasDuplicateObjects: false }).toString({ lineWidth: 0 }));
  return yaml.join('---\n');
}

/**
 * Said above each webhook configuration: the reconciler owns the secret in
 * the URLs (it rotates it, and repoints a configuration that carries neither
 * the current nor the previous secret on its next resync), so a saved copy
 * re-applied later is repaired, not trusted.
 */
export const MANAGED_URL_COMMENT =
  ' The clientConfig.url secrets are managed by status-sync: it rotates the webhook secret and, on every resync,\n' +
  ' repoints a webhook whose URL carries neither the current nor the previous secret. Re-applying this file\n' +
  ' (by hand or by GitOps) is repaired within one resync; render afresh with `npm run manifests` rather than editing.';

function isNamespace(object: unknown): boolean {
  return isObject(object) && object.kind === 'Namespace';
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  if (process.argv.includes('--help') || process.argv.includes('-h')) process.stdout.write(`${MANIFESTS_HELP}\n`);
  else renderManifests(process.argv.slice(2)).then(
    (yaml) => process.stdout.write(yaml),
    (error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(`manifests: ${message}\n${error instanceof ManifestsCliError ? `${MANIFESTS_USAGE}\n` : ''}`);
      process.exitCode = 2;
    },
  );
}
