/**
 * OpenKruise 1.9's `resourcesPolicy` at pod creation: a sidecar's limits and
 * requests computed from the pod's own containers, as Kruise's
 * pkg/webhook/pod/mutating/sidecarset_resources.go does.
 *
 * - The targets are the pod's native sidecars (init containers with
 *   `restartPolicy: Always`), then its containers, whose names match
 *   `targetContainersNameRegex` (unanchored, RE2), leaving out every
 *   container named like a sidecar of a set injecting this pod. Here an
 *   already injected sidecar (`IS_INJECTED=true`) is left out too, so that a
 *   reinvocation, which sees the sidecars of the first call, computes the
 *   same; on a pod as created there is none.
 * - No target: the pod is refused.
 * - `sum` adds the targets' values, `max` takes the largest (the first of
 *   equals). A limit is "unlimited" as soon as one target has none, and then
 *   the sidecar gets no such limit; a missing request counts as 0.
 * - Each non-empty expression is evaluated with its variable bound to that
 *   aggregate (lib/sidecarset/resources-expr.ts); a plain number is cores for
 *   cpu (thousandths kept) and bytes for memory (truncated).
 * - The sidecar's `resources` become exactly what was computed (claims too
 *   are dropped, as Kruise replaces the whole field).
 *
 * Which variable an expression gets is Kruise's rule: `memory` when the
 * text holds the word `memory`, `cpu` otherwise, whatever field it is in
 * (validation keeps each field to its own variable).
 */
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import { canonicalQuantity, compareQuantities, quantityFromJson, type Quantity } from '../kube/quantity.ts';
import { addQuantities, goInt64, milliQuantity, wholeQuantity } from '../kube/quantity-arith.ts';
import type { Container, EnvVar, JsonObject, Pod } from '../kube/types.ts';
import { evaluateResourceExpr } from './resources-expr.ts';
import { targetRegex } from './target-regex.ts';
import type { SidecarContainer, SidecarSet } from './types.ts';

/** The env var marking an injected sidecar (inject.ts SIDECAR_ENV; repeated to keep the import one-way). */
const INJECTED_ENV = 'IS_INJECTED';

/** The pod cannot get this sidecar's resources: no target container, a bad pattern or an expression that fails. */
export class ResourcesPolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResourcesPolicyError';
  }
}

const ZERO: Quantity = { unscaled: 0n, exponent: 0, format: 'DecimalSI' };
type Resource = 'cpu' | 'memory';
const RESOURCES: readonly Resource[] = ['cpu', 'memory'];

function isInjected(c: Container): boolean {
  return arrayOf<EnvVar>(c.env).some((e) => isObject(e) && e.name === INJECTED_ENV && e.value === 'true');
}

/**
 * The pod's containers a policy may target, before its pattern: native
 * sidecars, then containers, without the sidecars of the injecting sets.
 */
export function policyCandidates(pod: Pod, sets: readonly SidecarSet[]): Container[] {
  const sidecarNames = new Set<unknown>();
  for (const set of sets) {
    for (const c of [...arrayOf(set.spec?.initContainers), ...arrayOf(set.spec?.containers)]) sidecarNames.add(objectOf(c)?.name);
  }
  const usable = (c: unknown): c is Container => isObject(c) && !sidecarNames.has(c.name) && !isInjected(c as Container);
  const natives = arrayOf(pod.spec?.initContainers).filter(usable).filter((c) => c.restartPolicy === 'Always');
  return [...natives, ...arrayOf(pod.spec?.containers).filter(usable)];
}

/** A target's quantity for one resource, or undefined when it sets none. */
function quantityIn(c: Container, kind: 'limits' | 'requests', resource: Resource): Quantity | undefined {
  const list = objectOf(objectOf(c.resources)?.[kind]);
  if (list === undefined || !Object.hasOwn(list, resource)) return undefined;
  const q = quantityFromJson(list[resource]);
  if (q === undefined) throw new ResourcesPolicyError(`container ${c.name} has an invalid ${kind}.${resource}: ${JSON.stringify(list[resource])}`);
  return q;
}

/** The aggregate per resource: absent for an unlimited limit (limits) or nothing to add up (requests). */
function aggregate(targets: readonly Container[], mode: string, kind: 'limits' | 'requests'): Map<Resource, Quantity> {
  const out = new Map<Resource, Quantity>();
  if (mode !== 'sum' && mode !== 'max') return out;
  for (const resource of RESOURCES) {
    let value: Quantity | undefined;
    let everyTarget = true;
    for (const target of targets) {
      const q = quantityIn(target, kind, resource);
      if (q === undefined) {
        everyTarget = false;
        continue;
      }
      if (mode === 'sum') value = addQuantities(value ?? ZERO, q);
      else if (value === undefined || compareQuantities(q, value) > 0) value = q;
    }
    if (kind === 'limits' ? everyTarget : value !== undefined && !(mode === 'sum' && value.unscaled === 0n)) out.set(resource, value ?? ZERO);
  }
  return out;
}

const FIELD_NAMES: Readonly<Record<Resource, string>> = { cpu: 'CPU', memory: 'memory' };

/** Kruise's evaluateResourceExpression: the quantity, with its errors in Kruise's words. */
function evaluate(expr: string, aggregated: Quantity, resource: Resource, kind: 'limits' | 'requests'): Quantity {
  const variable = /\bmemory\b/.test(expr) ? 'memory' : 'cpu';
  const result = evaluateResourceExpr(expr, new Map([[variable, { kind: 'quantity', q: aggregated }]]));
  if (!result.ok) {
    throw new ResourcesPolicyError(`failed to evaluate ${FIELD_NAMES[resource]} ${kind} expression: failed to parse expression ${JSON.stringify(expr)}: ${result.error}`);
  }
  const { value } = result;
  if (value.kind === 'quantity') return value.q;
  return variable === 'cpu' ? milliQuantity(goInt64(value.n * 1000), 'DecimalSI') : wholeQuantity(goInt64(value.n), 'DecimalSI');
}

/**
 * The `resources` the sidecar gets from its policy, or undefined when it has
 * none. `candidates` is {@link policyCandidates} of the pod.
 * @throws ResourcesPolicyError, naming the set and sidecar.
 */
export function policyResources(setName: string, sidecar: SidecarContainer, candidates: readonly Container[]): JsonObject | undefined {
  const policy = objectOf(sidecar.resourcesPolicy);
  if (policy === undefined) return undefined;
  try {
    return computed(policy, candidates);
  } catch (error) {
    if (error instanceof ResourcesPolicyError) throw new ResourcesPolicyError(`SidecarSet ${setName}, sidecar ${sidecar.name}: ${error.message}`);
    throw error;
  }
}

function computed(policy: JsonObject, candidates: readonly Container[]): JsonObject {
  // An absent pattern is written ".*" by the API server (the CRD's default); "" compiles and matches everything, as in Go.
  const pattern = stringOf(policy.targetContainersNameRegex) ?? '';
  const regex = targetRegex(pattern);
  if (!regex.ok) throw new ResourcesPolicyError(`failed to get target containers: invalid regex pattern ${JSON.stringify(pattern)}: ${regex.error}`);
  const targets = candidates.filter((c) => typeof c.name === 'string' && regex.test(c.name));
  if (targets.length === 0) throw new ResourcesPolicyError(`no containers match the regex pattern ${JSON.stringify(pattern)}`);

  const mode = stringOf(policy.targetContainersMode) ?? '';
  const exprs = objectOf(policy.resourcesExpr);
  const resources: JsonObject = {};
  for (const kind of ['limits', 'requests'] as const) {
    const fields = objectOf(exprs?.[kind]);
    if (fields === undefined) continue;
    const aggregated = aggregate(targets, mode, kind);
    const list: Record<string, string> = {};
    for (const resource of RESOURCES) {
      const expr = stringOf(fields[resource]) ?? '';
      if (expr === '') continue;
      const value = aggregated.get(resource);
      // A limit over an unlimited target stays unlimited; a request over nothing is over 0.
      if (value === undefined && kind === 'limits') continue;
      list[resource] = canonicalQuantity(evaluate(expr, value ?? ZERO, resource, kind));
    }
    if (Object.keys(list).length > 0) resources[kind] = list;
  }
  return resources;
}

/** The candidates of one injection, found on first use and shared by every sidecar with a policy. */
export class PolicyTargets {
  readonly #pod: Pod;
  readonly #sets: readonly SidecarSet[];
  #candidates: Container[] | undefined;

  constructor(pod: Pod, sets: readonly SidecarSet[]) {
    this.#pod = pod;
    this.#sets = sets;
  }

  get candidates(): readonly Container[] {
    this.#candidates ??= policyCandidates(this.#pod, this.#sets);
    return this.#candidates;
  }
}

/**
 * The sidecar with the resources its policy computes for this pod (a new
 * object), or the sidecar itself when it has no policy.
 * @throws ResourcesPolicyError
 */
export function withPolicyResources(sidecar: SidecarContainer, setName: string, targets: PolicyTargets): SidecarContainer {
  if (objectOf(sidecar.resourcesPolicy) === undefined) return sidecar;
  return { ...sidecar, resources: policyResources(setName, sidecar, targets.candidates) };
}
