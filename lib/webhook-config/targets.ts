/** Where the webhooks point: Function URLs (from CDK outputs) plus the caller secret as the last path segment. */
import { isObject } from '../kube/json.ts';
import { FUNCTION_NAMES } from '../webhooks/registry.ts';
import type { FunctionName } from '../webhooks/descriptors.ts';

/** A problem with the manifests command's input. */
export class ManifestsCliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestsCliError';
  }
}

const normalize = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');

/**
 * The Function URL of each function (the conversion function's too) from `cdk deploy --outputs-file`
 * JSON (`{"<Stack>": {"<OutputKey>": "<value>"}}`) or a flat
 * `{"<function>": "<url>"}` map: an output whose key names the function
 * (case and punctuation ignored) and whose value is an https URL.
 */
export function functionUrlsFromOutputs(outputs: unknown): Partial<Record<FunctionName, string>> {
  if (!isObject(outputs)) throw new ManifestsCliError('the outputs file is not a JSON object');
  const entries: [string, unknown][] = [];
  for (const [key, value] of Object.entries(outputs)) {
    if (isObject(value)) entries.push(...Object.entries(value));
    else entries.push([key, value]);
  }
  const urls: Partial<Record<FunctionName, string>> = {};
  for (const fn of FUNCTION_NAMES) {
    const matches = entries.filter(([key, value]) => normalize(key).includes(normalize(fn)) && typeof value === 'string' && value.startsWith('https://'));
    if (matches.length > 1) throw new ManifestsCliError(`the outputs file has several URLs for ${fn}: ${matches.map(([k]) => k).join(', ')}`);
    const match = matches[0];
    if (match) urls[fn] = match[1] as string;
  }
  return urls;
}

/** `<function-url>/<secret>`: the path the function accepts (wire.md). */
export function webhookUrl(functionUrl: string, secret: string): string {
  let url: URL;
  try {
    url = new URL(functionUrl);
  } catch {
    throw new ManifestsCliError(`${JSON.stringify(functionUrl)} is not a URL`);
  }
  if (url.protocol !== 'https:') throw new ManifestsCliError(`${functionUrl} is not https`);
  if (url.search !== '' || url.hash !== '') throw new ManifestsCliError(`${functionUrl} may not have a query or fragment`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}/${secret}`;
}
