/**
 * Automatic rotation of the webhook caller secret, one step per resync
 * (status-sync on AWS, the status loop of `npm start`). The state lives in
 * the secret itself, beside `current` and `previous`, so each step is a
 * function of what is stored and what the cluster shows, and a crash or a
 * repeated resync at any point only repeats a step:
 *
 * 1. idle, due, and every webhook on `current`: store the new secret as
 *    `current`, the old as `previous`, and `rotation: propagating`, in one
 *    write. Functions accept both from their next re-read on.
 * 2. propagating, once the functions' re-read interval plus a margin has
 *    passed (all accept the new secret): point each webhook on the old secret
 *    at the new one (a conditional patch), read them back, and when all carry
 *    it store `rotation: draining`.
 * 3. draining, once the margin has passed again (API servers pick up webhook
 *    changes within seconds): check again, then drop `previous`; a webhook
 *    still on the old secret is repointed and the wait starts over.
 *
 * "Webhooks" include the SidecarSet CRD's conversion webhook, whose URL
 * carries the same secret.
 *
 * Before any step, every resync repairs a webhook of a deployed URL whose
 * secret segment is neither secret (a saved copy re-applied after a rotation,
 * or any text a stolen reconciler credential wrote): it would refuse every
 * pod creation and SidecarSet write until someone noticed, so it is pointed
 * at once at the secret every function accepts now, with a Warning Event
 * (`recordRepaired`; the WebhooksRepointed metric and its alarm count them).
 *
 * A secret is only ever written into a URL the deployment made (`deployed`).
 * A webhook pointing anywhere else is never given one: it is refused and
 * reported (`refused`), and no rotation starts while one is there, since
 * finishing it would leave that webhook on a dropped secret. A resync that
 * does not know what was deployed writes nothing. The current secret is never
 * lost: the new one is stored with the old before anything points at it. A
 * failure is reported and the step tried again next resync. Messages never
 * carry a secret.
 */
import { randomBytes } from 'node:crypto';
import { errorMessage } from '../errors.ts';
import { isObject } from '../kube/json.ts';
import { CallerSecretError, MIN_SECRET_LENGTH } from './caller-auth.ts';
import { parseJudgedSecretValue } from './secret-strength.ts';

/** Where the secret is kept: Secrets Manager on AWS, a file for `npm start`. */
export interface SecretStore {
  read(signal?: AbortSignal): Promise<string>;
  write(text: string, signal?: AbortSignal): Promise<void>;
}

/** One webhook of the project's own configurations, or the SidecarSet CRD's conversion webhook. */
export interface WebhookEndpoint {
  configuration: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration' | 'CustomResourceDefinition';
  /** The webhook's name, e.g. `pod-inject.sidecarset.kruise.io`. */
  webhook: string;
  /** Its position in the configuration's `webhooks` list. */
  index: number;
  /** `clientConfig.url`; undefined for a service reference. */
  url: string | undefined;
}

/** The project's webhook configurations in the cluster, and the CRD's conversion webhook. */
export interface WebhookUrls {
  /**
   * Every webhook of the project's configurations, then the SidecarSet
   * CRD's conversion webhook when it names a URL; undefined when neither
   * configuration exists.
   */
  list(signal?: AbortSignal): Promise<readonly WebhookEndpoint[] | undefined>;
  /** Sets one webhook's URL on condition that it still is `endpoint.url`. */
  setUrl(endpoint: WebhookEndpoint, url: string, signal?: AbortSignal): Promise<void>;
}

// In a file of their own so that the admission functions' configuration (caller-config.ts) reads them without
// importing rotation, which judges secrets with dictionaries those functions do not carry.
export { DEFAULT_ROTATION_MARGIN_MS, DEFAULT_ROTATION_PERIOD_MS, type RotationSettings } from './rotation-settings.ts';
import type { RotationSettings } from './rotation-settings.ts';

export type RotationStep =
  /** Nothing to do yet (not due, or waiting for the functions or the API servers). */
  | 'waiting'
  /** Stored a new secret beside the old one. */
  | 'started'
  /** Pointed the webhooks at the new secret. */
  | 'webhooks-updated'
  /** Dropped the old secret: the rotation is complete. */
  | 'finished'
  /** Not rotating: the webhooks are not where the secret says (not installed, or pointing elsewhere). */
  | 'skipped'
  | 'failed';

export interface RotationResult {
  step: RotationStep;
  /**
   * The webhooks this resync repointed because they carried a secret no
   * function accepts (stale configurations re-applied), described without
   * their URLs; absent when none did.
   */
  repaired?: string[];
  /**
   * The webhooks pointing at a URL the deployment did not make: none of
   * them was given a secret; absent when none does.
   */
  refused?: RefusedWebhook[];
  /** What is awaited or why nothing was done. */
  detail?: string;
  /** When the next step may run (ISO 8601), when waiting. */
  nextStepAt?: string;
}

export interface RotationPorts {
  store: SecretStore;
  webhooks: WebhookUrls;
  now: () => Date;
  /** A new secret; 32 random bytes in base64url unless a test fixes it. */
  newSecret?: () => string;
  /**
   * The URL prefixes the deployment made (origin and path up to the
   * secret, ending in `/`): the only URLs a secret is written into.
   * Undefined when this resync does not know them: then nothing is written.
   */
  deployed: readonly string[] | undefined;
  /** Tells the webhooks this resync repaired (lib/webhook-config/refused-webhooks.ts: a Warning Event on each configuration). */
  recordRepaired?: (repaired: readonly RepairedWebhook[], signal?: AbortSignal) => Promise<void>;
}

/** A webhook the resync pointed back at an accepted secret. */
export interface RepairedWebhook {
  configuration: WebhookEndpoint['configuration'];
  webhook: string;
}

type Phase = 'propagating' | 'draining';

/** The stored secret with its rotation state; other fields are kept as they are. */
interface SecretDocument {
  current: string;
  previous?: string;
  rotatedAt?: string;
  rotation?: { phase: Phase; since: string };
  [field: string]: unknown;
}

const WHAT = 'the webhook secret';

function without(doc: Record<string, unknown>, ...fields: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(doc).filter(([field]) => !fields.includes(field)));
}

/** Reads the stored value: a bare secret or the JSON form, keeping unknown fields. */
export function parseSecretDocument(text: string): SecretDocument {
  // Judged on every resync that rotates: the secret the admission functions serve (they check its form only) is refused here when guessable.
  const secrets = parseJudgedSecretValue(text, WHAT);
  const trimmed = text.trim();
  const raw: Record<string, unknown> = trimmed.startsWith('{') ? (JSON.parse(trimmed) as Record<string, unknown>) : {};
  const { rotation, rotatedAt } = raw;
  const doc: SecretDocument = { ...without(raw, 'previous', 'rotation', 'rotatedAt'), current: secrets.current };
  if (secrets.previous !== undefined) doc.previous = secrets.previous;
  if (typeof rotatedAt === 'string' && !Number.isNaN(Date.parse(rotatedAt))) doc.rotatedAt = rotatedAt;
  if (isObject(rotation) && (rotation.phase === 'propagating' || rotation.phase === 'draining') && typeof rotation.since === 'string' && !Number.isNaN(Date.parse(rotation.since))) {
    doc.rotation = { phase: rotation.phase, since: rotation.since };
  }
  return doc;
}

/** The secret a webhook URL carries: its last path segment. */
export function secretOfUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const path = url.split(/[?#]/)[0] ?? '';
  const segment = path.slice(path.lastIndexOf('/') + 1);
  return segment === '' ? undefined : segment;
}

function withSecret(url: string, secret: string): string {
  return `${urlPrefixOf(url)}${secret}${url.slice((url.split(/[?#]/)[0] ?? '').length)}`;
}

/** A webhook URL's origin and path up to its secret, ending in `/`: what the deployment chose. */
export function urlPrefixOf(url: string): string {
  const path = url.split(/[?#]/)[0] ?? '';
  return path.slice(0, path.lastIndexOf('/') + 1);
}

/** Whether a secret may be written into this webhook's URL: one the deployment made. */
function isDeployed(endpoint: WebhookEndpoint, deployed: readonly string[]): endpoint is WebhookEndpoint & { url: string } {
  return endpoint.url !== undefined && deployed.includes(urlPrefixOf(endpoint.url));
}

/** A webhook pointing at a URL the deployment did not make. */
export interface RefusedWebhook {
  configuration: WebhookEndpoint['configuration'];
  webhook: string;
  /** Its URL's origin and path up to the secret (never the secret), or `a service` for a service reference. */
  pointsAt: string;
}

function refusedOf(endpoint: WebhookEndpoint): RefusedWebhook {
  return { configuration: endpoint.configuration, webhook: endpoint.webhook, pointsAt: endpoint.url === undefined ? 'a service' : urlPrefixOf(endpoint.url) };
}

/** One line for a refused webhook, as logs and Events say it. */
export function describeRefused(refused: RefusedWebhook): string {
  return `${refused.configuration} webhook "${refused.webhook}" points at ${refused.pointsAt}${refused.pointsAt.endsWith('/') ? '…' : ''}, which the deployment did not make`;
}

function describe(endpoint: Pick<WebhookEndpoint, 'configuration' | 'webhook'>): string {
  return `${endpoint.configuration} webhook "${endpoint.webhook}"`;
}

/** Messages may quote a URL (an API server's error); the secrets in it are replaced. */
function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) if (s !== undefined && s !== '') out = out.split(s).join('<secret>');
  return out;
}

const elapsed = (now: Date, since: string) => now.getTime() - Date.parse(since);
const later = (since: string, ms: number) => new Date(Date.parse(since) + ms).toISOString();

/**
 * Points every webhook carrying `from` at `to`; the others are left alone.
 * @returns the webhooks that carry neither (pointing elsewhere: not ours to change).
 */
async function repoint(webhooks: WebhookUrls, endpoints: readonly WebhookEndpoint[], from: string, to: string, deployed: readonly string[], signal?: AbortSignal): Promise<WebhookEndpoint[]> {
  const foreign: WebhookEndpoint[] = [];
  for (const endpoint of endpoints) {
    const secret = secretOfUrl(endpoint.url);
    if (secret === from && isDeployed(endpoint, deployed)) await webhooks.setUrl(endpoint, withSecret(endpoint.url, to), signal);
    else if (secret !== to || !isDeployed(endpoint, deployed)) foreign.push(endpoint);
  }
  return foreign;
}

/** A last path segment that may be a secret (so is redacted from messages): base64url, as long as the shortest secret the functions accept. */
const SECRET_SHAPED = new RegExp(`^[A-Za-z0-9_-]{${MIN_SECRET_LENGTH},}$`);

/**
 * Points every webhook of a deployed URL whose last segment is not
 * `accepted` (whatever it holds, empty included) at `target`, adding each
 * one it repointed to `repaired` and each stale secret it saw to `known`
 * (for redaction) as it goes. Webhooks pointing elsewhere are added to
 * `refused` and never written.
 */
async function repairStale(ports: RotationPorts & { deployed: readonly string[] }, accepted: readonly string[], target: string, told: { repaired: RepairedWebhook[]; refused: RefusedWebhook[] }, known: (string | undefined)[], signal?: AbortSignal): Promise<void> {
  const endpoints = (await ports.webhooks.list(signal)) ?? [];
  for (const endpoint of endpoints) {
    if (!isDeployed(endpoint, ports.deployed)) {
      told.refused.push(refusedOf(endpoint));
      continue;
    }
    const secret = secretOfUrl(endpoint.url) ?? '';
    if (accepted.includes(secret)) continue;
    if (SECRET_SHAPED.test(secret)) known.push(secret);
    await ports.webhooks.setUrl(endpoint, withSecret(endpoint.url, target), signal);
    told.repaired.push({ configuration: endpoint.configuration, webhook: endpoint.webhook });
  }
}

/** Records the repairs' Events (never throws: a failure is said in the result's detail). */
async function tellRepairs(ports: RotationPorts, repaired: readonly RepairedWebhook[], signal?: AbortSignal): Promise<string | undefined> {
  if (repaired.length === 0 || ports.recordRepaired === undefined) return undefined;
  try {
    await ports.recordRepaired(repaired, signal);
    return undefined;
  } catch (error) {
    return `the repair Event could not be recorded: ${errorMessage(error)}`;
  }
}

/**
 * Repairs stale webhooks, then runs the rotation step that is due, if any.
 * Never throws: a failure is the result.
 */
export async function rotateWebhookSecret(ports: RotationPorts, settings: RotationSettings, signal?: AbortSignal): Promise<RotationResult> {
  const known: (string | undefined)[] = [];
  const told = { repaired: [] as RepairedWebhook[], refused: [] as RefusedWebhook[] };
  const withRepairs = async (result: RotationResult): Promise<RotationResult> => {
    const untold = await tellRepairs(ports, told.repaired, signal);
    const detail = [result.detail, untold].filter((d) => d !== undefined).join('; ');
    return {
      ...result,
      ...(detail === '' ? {} : { detail: redact(detail, known) }),
      ...(told.repaired.length > 0 ? { repaired: told.repaired.map(describe) } : {}),
      ...(told.refused.length > 0 ? { refused: told.refused } : {}),
    };
  };
  try {
    const doc = parseSecretDocument(await ports.store.read(signal));
    known.push(doc.current, doc.previous);
    // Off means off: without rotation the reconciler is not given the secret on AWS, and here it touches nothing.
    if (settings.periodMs === 0 && doc.previous === undefined) return { step: 'waiting', detail: 'rotation is off' };
    const { deployed } = ports;
    if (deployed === undefined) return { step: 'waiting', detail: 'the deployed webhook URLs are not known to this resync: no secret is written' };
    // While a new secret propagates, some warm function may not know it yet: the previous one is the one all accept.
    const target = doc.previous !== undefined && doc.rotation?.phase === 'propagating' ? doc.previous : doc.current;
    await repairStale({ ...ports, deployed }, [doc.current, ...(doc.previous === undefined ? [] : [doc.previous])], target, told, known, signal);
    return await withRepairs(await rotationStep({ ...ports, deployed }, settings, doc, known, told.refused, signal));
  } catch (error) {
    const problem = error instanceof CallerSecretError ? error.message : errorMessage(error);
    return withRepairs({ step: 'failed', detail: redact(problem, known) });
  }
}

type DeployedPorts = RotationPorts & { deployed: readonly string[] };

function writeDocument(ports: RotationPorts, next: SecretDocument, signal: AbortSignal | undefined): Promise<void> {
  return ports.store.write(JSON.stringify(next), signal);
}

/** The rotation step that is due, for the stored `doc`; `known` collects secrets to redact. */
async function rotationStep(ports: DeployedPorts, settings: RotationSettings, doc: SecretDocument, known: (string | undefined)[], refused: readonly RefusedWebhook[], signal?: AbortSignal): Promise<RotationResult> {
  if (doc.previous === undefined) return startRotation(ports, settings, doc, known, refused, signal);
  if (doc.rotation === undefined) {
    // An old secret without a state: a rotation by hand, or one begun before this version; finish it.
    const at = ports.now().toISOString();
    await writeDocument(ports, { ...doc, rotation: { phase: 'propagating', since: at } }, signal);
    return { step: 'started', detail: 'adopted a rotation in progress', nextStepAt: later(at, settings.refreshMs + settings.marginMs) };
  }
  return advanceRotation(ports, settings, { ...doc, previous: doc.previous, rotation: doc.rotation }, signal);
}

/** With no old secret: a new one when the period has passed and every webhook carries the current one. */
async function startRotation(ports: DeployedPorts, settings: RotationSettings, doc: SecretDocument, known: (string | undefined)[], refused: readonly RefusedWebhook[], signal: AbortSignal | undefined): Promise<RotationResult> {
  const now = ports.now();
  if (settings.periodMs === 0) return { step: 'waiting', detail: 'rotation is off' };
  if (doc.rotation !== undefined) {
    // A state without an old secret has nothing left to do.
    await writeDocument(ports, without(doc, 'rotation') as SecretDocument, signal);
    return { step: 'finished' };
  }
  if (doc.rotatedAt !== undefined && elapsed(now, doc.rotatedAt) < settings.periodMs) {
    return { step: 'waiting', detail: 'not due', nextStepAt: later(doc.rotatedAt, settings.periodMs) };
  }
  const endpoints = await ports.webhooks.list(signal);
  if (endpoints === undefined || endpoints.length === 0) return { step: 'skipped', detail: 'the webhook configurations are not installed' };
  // A new secret would never reach a webhook pointing elsewhere, which the drop of the old one would then cut off: reported, not rotated.
  if (refused.length > 0) return { step: 'skipped', detail: 'webhooks point at URLs the deployment did not make: re-render and apply the manifests' };
  const elsewhere = endpoints.filter((e) => secretOfUrl(e.url) !== doc.current);
  if (elsewhere.length > 0) {
    return { step: 'skipped', detail: `${elsewhere.map(describe).join(', ')} do not carry the current secret: re-render and apply the manifests` };
  }
  const next = (ports.newSecret ?? (() => randomBytes(32).toString('base64url')))();
  known.push(next);
  const at = now.toISOString();
  await writeDocument(ports, { ...doc, current: next, previous: doc.current, rotatedAt: at, rotation: { phase: 'propagating', since: at } }, signal);
  return { step: 'started', nextStepAt: later(at, settings.refreshMs + settings.marginMs) };
}

/** A rotation under way: once its phase has waited long enough, the webhooks moved to the new secret, then the old one dropped. */
async function advanceRotation(ports: DeployedPorts, settings: RotationSettings, doc: SecretDocument & { previous: string; rotation: { phase: Phase; since: string } }, signal: AbortSignal | undefined): Promise<RotationResult> {
  const now = ports.now();
  const { since, phase } = doc.rotation;
  const wait = phase === 'propagating' ? settings.refreshMs + settings.marginMs : settings.marginMs;
  if (elapsed(now, since) < wait) {
    return { step: 'waiting', detail: phase === 'propagating' ? 'for every function to re-read the secret' : 'for the API servers to use the new URLs', nextStepAt: later(since, wait) };
  }
  const endpoints = await ports.webhooks.list(signal);
  if (endpoints === undefined) return { step: 'failed', detail: 'the webhook configurations are gone; the old secret is kept until they are back' };
  const carryingOld = endpoints.filter((e) => secretOfUrl(e.url) === doc.previous);
  const foreign = await repoint(ports.webhooks, endpoints, doc.previous, doc.current, ports.deployed, signal);
  if (foreign.some((e) => !isDeployed(e, ports.deployed))) {
    return { step: 'failed', detail: 'webhooks point at URLs the deployment did not make; the new secret is not written into them and the old one is kept' };
  }
  if (foreign.length > 0) {
    return { step: 'failed', detail: `${foreign.map(describe).join(', ')} carry neither the old nor the new secret; not touched` };
  }
  const after = (await ports.webhooks.list(signal)) ?? [];
  const unchanged = after.filter((e) => secretOfUrl(e.url) !== doc.current);
  if (unchanged.length > 0) return { step: 'failed', detail: `${unchanged.map(describe).join(', ')} still do not carry the new secret after the patch` };
  if (phase === 'propagating' || carryingOld.length > 0) {
    const at = now.toISOString();
    await writeDocument(ports, { ...doc, rotation: { phase: 'draining', since: at } }, signal);
    return { step: 'webhooks-updated', nextStepAt: later(at, settings.marginMs) };
  }
  await writeDocument(ports, without(doc, 'previous', 'rotation') as SecretDocument, signal);
  return { step: 'finished' };
}
