/**
 * The order in which waiting pods are updated (rollout.md §1.3 with the fine
 * points of §1.8a): Kruise's SortUpdateIndexes — the active-pods order, then a
 * stable priority sort, then the scatter sort — over indexes into the matched
 * pod list (namespace/name ascending, the API server's list order).
 */
import { selectorMatches } from '../kube/label-selector.ts';
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import type { JsonObject, Pod } from '../kube/types.ts';
import type { SidecarSetUpdateStrategy } from '../sidecarset/types.ts';
import { hasReadyCondition, maxContainerRestarts, podLabels as labelsOf, readyTransitionTime, timeOf } from '../sidecarset/pod-state.ts';

/** What the active-pods order reads from a pod, computed once per pod. */
interface ActiveKey {
  assigned: boolean;
  phase: number;
  ready: boolean;
  readyTime: number;
  restarts: number;
  created: number;
}

/** Pending (and any other phase, §1.8a) < Unknown < Running. */
function phaseOrdinal(phase: unknown): number {
  return phase === 'Running' ? 2 : phase === 'Unknown' ? 1 : 0;
}

function activeKey(pod: Pod): ActiveKey {
  const ready = hasReadyCondition(pod);
  return {
    assigned: (stringOf(objectOf(pod.spec)?.nodeName) ?? '') !== '',
    phase: phaseOrdinal(objectOf(pod.status)?.phase),
    ready,
    readyTime: ready ? readyTransitionTime(pod) : 0,
    restarts: maxContainerRestarts(pod),
    created: timeOf(objectOf(pod.metadata)?.creationTimestamp),
  };
}

/** k8s afterOrZero: a zero time first, otherwise the later time first. */
function afterOrZero(a: number, b: number): number {
  if (a === 0 || b === 0) return a === 0 ? -1 : 1;
  return b - a;
}

/** k8s controller_utils ActivePods.Less as a comparator (negative: `a` is updated first). */
function compareActive(a: ActiveKey, b: ActiveKey): number {
  if (a.assigned !== b.assigned) return a.assigned ? 1 : -1;
  if (a.phase !== b.phase) return a.phase - b.phase;
  if (a.ready !== b.ready) return a.ready ? 1 : -1;
  if (a.ready && b.ready && a.readyTime !== b.readyTime) return afterOrZero(a.readyTime, b.readyTime);
  if (a.restarts !== b.restarts) return b.restarts - a.restarts;
  if (a.created !== b.created) return afterOrZero(a.created, b.created);
  return 0;
}

/**
 * The active-pods order of `indexes` (§1.3 step 1). Full ties, which Go's
 * unstable sort leaves undefined, keep list order, i.e. namespace/name
 * ascending (sidecarset.md §7; what Kruise does for up to 12 candidates).
 */
export function sortActive(pods: readonly Pod[], indexes: readonly number[]): number[] {
  const keys: ActiveKey[] = [];
  for (const i of indexes) keys[i] = activeKey(pods[i] as Pod);
  return [...indexes].sort((x, y) => compareActive(keys[x] as ActiveKey, keys[y] as ActiveKey) || x - y);
}

/**
 * An afterOrZero time as an ascending number: the zero time first, otherwise
 * the later time first (what {@link afterOrZero} decides, as one key).
 */
function afterOrZeroKey(t: number): number {
  return t === 0 ? Number.NEGATIVE_INFINITY : -t;
}

/**
 * Kruise's SortUpdateIndexes over the waiting `indexes` (§1.3): the
 * active-pods order, the stable priority sort, then the scatter sort — the
 * order {@link sortActive}, {@link sortByPriority} and {@link scatterSort}
 * give one after the other, made with one sort of numbers. A stable sort by
 * priority of a list sorted by the active-pods order (full ties by list
 * index) is the list sorted by (priority, active-pods key, list index): so
 * each pod's keys are read once into number columns and the comparator reads
 * only those, where the three steps read objects per comparison and copied
 * the list at each (a plan over 100,000 pods sorts some 60,000). A weight
 * sum that is not a finite number (a stored set's `1e999`) makes no total
 * order; those few sets take the three steps as written.
 * test/rollout/order-fused.test.ts pins the equality over random pod sets.
 */
export function updateOrder(pods: readonly Pod[], indexes: readonly number[], strategy: SidecarSetUpdateStrategy | undefined): number[] {
  const order = new UpdateOrder(pods, strategy);
  let next = 0;
  for (let i = 0; i < pods.length; i++) {
    const waits = indexes[next] === i;
    if (waits) next++;
    order.add(i, waits);
  }
  // Indexes not in list order (never the plan's) are ordered as the three steps order them.
  return next === indexes.length ? order.order() : threeSteps(pods, indexes, strategy);
}

function threeSteps(pods: readonly Pod[], indexes: readonly number[], strategy: SidecarSetUpdateStrategy | undefined): number[] {
  let order = sortActive(pods, indexes);
  if (strategy?.priorityStrategy) order = sortByPriority(pods, order, strategy.priorityStrategy);
  return strategy?.scatterStrategy ? scatterSort(pods, order, scatterTerms(strategy.scatterStrategy, pods)) : order;
}

/**
 * {@link updateOrder} filled one pod at a time, so that the plan reads what
 * the order needs of a pod in the same walk that reads the rest of it (a
 * walk per concern over 100,000 pods costs more in memory reads than in
 * work): {@link add} every matched pod in list order, then {@link order}.
 */
export class UpdateOrder {
  private readonly pods: readonly Pod[];
  private readonly strategy: SidecarSetUpdateStrategy | undefined;
  private readonly waiting: number[] = [];
  // Columns indexed by pod index: rank packs assigned, phase and ready, which compare in that order.
  private readonly rank: Uint8Array;
  private readonly readyKey: Float64Array;
  private readonly restartsKey: Float64Array;
  private readonly createdKey: Float64Array;
  private readonly priority: PriorityRule;
  /** Every matched pod's labels, when a scatter strategy reads them. */
  private readonly labels: Record<string, string>[] | undefined;

  constructor(pods: readonly Pod[], strategy: SidecarSetUpdateStrategy | undefined) {
    this.pods = pods;
    this.strategy = strategy;
    const size = pods.length;
    this.rank = new Uint8Array(size);
    this.readyKey = new Float64Array(size);
    this.restartsKey = new Float64Array(size);
    this.createdKey = new Float64Array(size);
    this.priority = priorityRule(strategy?.priorityStrategy, size);
    this.labels = strategy?.scatterStrategy ? new Array<Record<string, string>>(size) : undefined;
  }

  /** Reads matched pod `i` (in list order); `waits` when it waits for its update. */
  add(i: number, waits: boolean): void {
    const pod = this.pods[i] as Pod;
    const labels = this.labels !== undefined || (waits && this.priority.kind !== 'none') ? labelsOf(pod) : undefined;
    if (this.labels !== undefined) this.labels[i] = labels as Record<string, string>;
    if (!waits) return;
    this.waiting.push(i);
    const key = activeKey(pod);
    this.rank[i] = (key.assigned ? 6 : 0) + key.phase * 2 + (key.ready ? 1 : 0);
    // Compared only between two ready pods (equal ranks are equally ready): 0 for the not ready.
    this.readyKey[i] = key.ready ? afterOrZeroKey(key.readyTime) : 0;
    this.restartsKey[i] = -key.restarts;
    this.createdKey[i] = afterOrZeroKey(key.created);
    const rule = this.priority;
    if (rule.kind === 'weight') {
      const sum = weightOf(labels as Record<string, string>, rule.weights);
      // Not finite (a stored set's `1e999`): no total order, see order().
      if (!Number.isFinite(sum)) rule.finite = false;
      rule.first[i] = -sum;
    } else if (rule.kind === 'order') {
      const { level, order } = orderOf(labels as Record<string, string>, rule.keys);
      rule.first[i] = level;
      rule.second[i] = -order;
    }
  }

  /** The waiting pods in update order. */
  order(): number[] {
    const { pods, strategy, waiting, rank, readyKey, restartsKey, createdKey, priority } = this;
    if (priority.kind === 'weight' && !priority.finite) return threeSteps(pods, waiting, strategy);
    const first = priority.kind === 'none' ? undefined : priority.first;
    const second = priority.kind === 'order' ? priority.second : undefined;
    const order = waiting.sort((x, y) => {
      if (first !== undefined) {
        if (first[x] !== first[y]) return (first[x] as number) < (first[y] as number) ? -1 : 1;
        if (second !== undefined && second[x] !== second[y]) return (second[x] as number) < (second[y] as number) ? -1 : 1;
      }
      if (rank[x] !== rank[y]) return (rank[x] as number) - (rank[y] as number);
      if (readyKey[x] !== readyKey[y]) return (readyKey[x] as number) < (readyKey[y] as number) ? -1 : 1;
      if (restartsKey[x] !== restartsKey[y]) return (restartsKey[x] as number) < (restartsKey[y] as number) ? -1 : 1;
      if (createdKey[x] !== createdKey[y]) return (createdKey[x] as number) < (createdKey[y] as number) ? -1 : 1;
      return x - y;
    });
    const scatter = strategy?.scatterStrategy;
    if (!scatter) return order;
    const labels = this.labels as Record<string, string>[];
    return scatterSortOf(labels, order, scatterTermsOf(scatter, labels));
  }
}

/** The priority rule as number columns (indexed by pod index, ascending): the negated weight sum, or the orderPriority level then the negated order. */
type PriorityRule =
  | { kind: 'none' }
  | { kind: 'weight'; weights: JsonObject[]; first: Float64Array; finite: boolean }
  | { kind: 'order'; keys: string[]; first: Float64Array; second: Float64Array };

/** sortByPriority's choice of rule: weights when there are any, else orders, else none (every pod ties). */
function priorityRule(priority: SidecarSetUpdateStrategy['priorityStrategy'], size: number): PriorityRule {
  if (!priority) return { kind: 'none' };
  const weights = arrayOf(priority.weightPriority).filter(isObject);
  if (weights.length > 0) return { kind: 'weight', weights, first: new Float64Array(size), finite: true };
  const orders = arrayOf(priority.orderPriority).filter(isObject);
  if (orders.length > 0) return { kind: 'order', keys: orders.map((t) => stringOf(t.orderedKey) ?? ''), first: new Float64Array(size), second: new Float64Array(size) };
  return { kind: 'none' };
}

/** The sum of the weights of the terms whose selector matches (priority_sort.go). */
function weightOf(labels: Record<string, string>, weights: readonly JsonObject[]): number {
  let sum = 0;
  for (const term of weights) if (typeof term.weight === 'number' && selectorMatches(term.matchSelector, labels)) sum += term.weight;
  return sum;
}

/** The first orderPriority key the pod carries (-1: none) and its value's numeric suffix. */
function orderOf(labels: Record<string, string>, keys: readonly string[]): { level: number; order: number } {
  const level = keys.findIndex((k) => Object.hasOwn(labels, k));
  return { level, order: level < 0 ? 0 : orderSuffix(labels[keys[level] as string] as string) };
}

/** Kruise's getIntFromStringSuffix: the trailing digits of a label value, 0 when none. */
export function orderSuffix(value: string): number {
  const m = /(\d+)$/.exec(value);
  if (m === null) return 0;
  const n = Number.parseInt(m[1] as string, 10);
  return Number.isSafeInteger(n) ? n : 0;
}

/**
 * The priority sort (§1.3 step 2, pkg/util/updatesort/priority_sort.go): a
 * stable sort, higher weight sum first, or lower orderPriority level then
 * higher order first — a pod with none of the keys has level -1 and comes
 * before all others (Kruise's quirk). Equal priority (no rule tells the pods
 * apart) keeps the order the pods came in, the active-pods order: Kruise 1.9
 * (#2107). Kruise 1.8 put the higher index in the matched list first there,
 * which discarded the active-pods order for those pods.
 */
export function sortByPriority(
  pods: readonly Pod[],
  indexes: readonly number[],
  priority: SidecarSetUpdateStrategy['priorityStrategy'],
): number[] {
  const weights = arrayOf(priority?.weightPriority).filter(isObject);
  const orders = arrayOf(priority?.orderPriority).filter(isObject);
  if (weights.length > 0) {
    // Arrays indexed by pod index: the comparator runs n log n times.
    const weight: number[] = [];
    for (const i of indexes) weight[i] = weightOf(labelsOf(pods[i] as Pod), weights);
    return stable(indexes, (x, y) => (weight[y] as number) - (weight[x] as number));
  }
  if (orders.length > 0) {
    const keys = orders.map((t) => stringOf(t.orderedKey) ?? '');
    const level: number[] = [];
    const order: number[] = [];
    for (const i of indexes) {
      const key = orderOf(labelsOf(pods[i] as Pod), keys);
      level[i] = key.level;
      order[i] = key.order;
    }
    return stable(indexes, (x, y) => {
      const dl = (level[x] as number) - (level[y] as number);
      return dl !== 0 ? dl : (order[y] as number) - (order[x] as number);
    });
  }
  return [...indexes];
}

/**
 * A stable sort: ties keep their incoming order (Array.prototype.sort is
 * stable), as Kruise 1.9's `sort.SliceStable` with its `i < j` tie rule does.
 */
function stable(indexes: readonly number[], compare: (x: number, y: number) => number): number[] {
  return [...indexes].sort(compare);
}

interface ScatterTerm {
  key: string;
  value: string;
}

/**
 * parseUpdateScatterTerms: `{key, value: "*"}` becomes one term per distinct
 * value of the label among all matched pods, in list order; duplicates are dropped.
 */
export function scatterTerms(strategy: SidecarSetUpdateStrategy['scatterStrategy'], pods: readonly Pod[]): ScatterTerm[] {
  return scatterTermsOf(strategy, pods.map(labelsOf));
}

function scatterTermsOf(strategy: SidecarSetUpdateStrategy['scatterStrategy'], podLabels: readonly Record<string, string>[]): ScatterTerm[] {
  const out: ScatterTerm[] = [];
  // Values seen per key: a "*" term reads every matched pod's label, so no id string is built per pod.
  const seen = new Map<string, Set<string>>();
  const add = (key: string, value: string): void => {
    let values = seen.get(key);
    if (values === undefined) seen.set(key, (values = new Set()));
    if (values.has(value)) return;
    values.add(value);
    out.push({ key, value });
  };
  for (const term of arrayOf(strategy).filter(isObject)) {
    const key = stringOf(term.key) ?? '';
    const value = stringOf(term.value) ?? '';
    if (value !== '*') {
      add(key, value);
      continue;
    }
    for (const labels of podLabels) if (Object.hasOwn(labels, key)) add(key, labels[key] as string);
  }
  return out;
}

/**
 * Kruise's scatterSort.Sort (pkg/util/updatesort/scatter_sort.go, the
 * CloneSet algorithm), ported step for step: spreads the candidates matching
 * each term evenly through the queue. With several terms, they are ordered
 * by their match count among the candidates (descending, stable) and terms
 * matching no candidate are dropped; "total" counts use all matched pods.
 */
export function scatterSort(pods: readonly Pod[], indexes: readonly number[], terms: readonly ScatterTerm[]): number[] {
  return scatterSortOf(pods.map(labelsOf), indexes, terms);
}

/** {@link scatterSort} over every matched pod's labels. */
function scatterSortOf(labels: readonly Record<string, string>[], indexes: readonly number[], terms: readonly ScatterTerm[]): number[] {
  if (terms.length === 0 || indexes.length <= 1) return [...indexes];
  // One pass each over the candidates and all matched pods gives every term's
  // counts; the candidate set never changes under reordering, so terms that
  // cannot move anything are skipped without a pass of their own.
  const candidateCount = new LabelCounts(terms);
  for (const i of indexes) candidateCount.add(labels[i] as Record<string, string>);
  const totalCount = new LabelCounts(terms);
  for (const l of labels) totalCount.add(l);
  let ordered = terms.map((term, position) => ({ term, position, count: candidateCount.carrying(term) }));
  if (terms.length > 1) {
    ordered = ordered.filter((t) => t.count > 0);
    ordered.sort((a, b) => b.count - a.count || a.position - b.position);
  }
  let out = [...indexes];
  for (const { term } of ordered) {
    const matched = candidateCount.matching(term, indexes.length);
    if (matched <= 1 || indexes.length - matched <= 1) continue;
    out = scatterByTerm(labels, out, term, totalCount.matching(term, labels.length));
  }
  return out;
}

/** Per term's key, how many pods carry the key at all and how many carry each value (maps of maps: no id string per pod). */
class LabelCounts {
  private readonly byKey = new Map<string, { present: number; values: Map<string, number> }>();
  constructor(terms: readonly ScatterTerm[]) {
    for (const t of terms) if (!this.byKey.has(t.key)) this.byKey.set(t.key, { present: 0, values: new Map() });
  }

  add(labels: Record<string, string>): void {
    for (const [key, counts] of this.byKey) {
      if (!Object.hasOwn(labels, key)) continue;
      counts.present++;
      const value = labels[key] as string;
      counts.values.set(value, (counts.values.get(value) ?? 0) + 1);
    }
  }

  /** Pods carrying `key=value`. */
  carrying(term: ScatterTerm): number {
    return this.byKey.get(term.key)?.values.get(term.value) ?? 0;
  }

  /** Pods among `of` that match the term as Go reads it: a missing label reads as "", so `value: ""` also matches pods without the key. */
  matching(term: ScatterTerm, of: number): number {
    if (term.value !== '') return this.carrying(term);
    return of - (this.byKey.get(term.key)?.present ?? 0) + this.carrying(term);
  }
}

function matches(labels: Record<string, string>, term: ScatterTerm): boolean {
  // Go's `pods[i].Labels[key] == value`: a missing label reads as "".
  return (Object.hasOwn(labels, term.key) ? labels[term.key] : '') === term.value;
}

function scatterByTerm(labels: readonly Record<string, string>[], indexes: readonly number[], term: ScatterTerm, allMatched: number): number[] {
  const matched: number[] = [];
  const unmatched: number[] = [];
  for (const i of indexes) (matches(labels[i] as Record<string, string>, term) ? matched : unmatched).push(i);
  if (matched.length <= 1 || unmatched.length <= 1) return [...indexes];
  let totalMatched = allMatched;
  const totalUnmatched = labels.length - allMatched;
  const lastMatched = matched.pop() as number;
  totalMatched--;
  const group = groupByDensity(totalMatched, totalUnmatched, matched.length, unmatched.length);
  // Go re-slices (src = src[size:]); read cursors do the same without copying the rest each time.
  const m = { list: matched, at: 0 };
  const u = { list: unmatched, at: 0 };
  const out: number[] = [];
  if (group.unmatchedRemainder > 0) migrate(u, out, group.unmatchedRemainder);
  for (let g = 0; g < group.groupNum; g++) {
    migrate(m, out, group.matchedGroupSize);
    migrate(u, out, group.unmatchedGroupSize);
  }
  migrate(m, out, Number.POSITIVE_INFINITY);
  migrate(u, out, Number.POSITIVE_INFINITY);
  out.push(lastMatched);
  return out;
}

/** Go's migrateItems: moves `size` items (all that are left when fewer) from the cursor to `dst`. */
function migrate(src: { list: readonly number[]; at: number }, dst: number[], size: number): void {
  const end = Math.min(src.list.length, src.at + size);
  for (let i = src.at; i < end; i++) dst.push(src.list[i] as number);
  src.at = end;
}

interface ScatterGroup {
  groupNum: number;
  matchedGroupSize: number;
  unmatchedGroupSize: number;
  unmatchedRemainder: number;
}

/** Go's math.Round: half away from zero (sizes here are never negative). */
function goRound(x: number): number {
  return Math.round(x);
}

/** Go's int(float64 / float64) for a division by zero gives a huge or NaN-derived value; a group of 0 means no groups. */
function newGroup(matched: number, unmatched: number): ScatterGroup {
  const groupNum = Math.min(matched, unmatched);
  return {
    groupNum,
    matchedGroupSize: groupNum === 0 ? 0 : goRound(matched / groupNum),
    unmatchedGroupSize: groupNum === 0 ? 0 : goRound(unmatched / groupNum),
    unmatchedRemainder: 0,
  };
}

function groupByDensity(totalMatched: number, totalUnmatched: number, updateMatched: number, updateUnmatched: number): ScatterGroup {
  const total = newGroup(totalMatched, totalUnmatched);
  const update = newGroup(updateMatched, updateUnmatched);
  // float32 in Go; the ratios here are of small integers, where float64 agrees.
  if (Math.fround(totalUnmatched / totalMatched) >= Math.fround(updateUnmatched / updateMatched)) return update;
  const g: ScatterGroup = { groupNum: 0, matchedGroupSize: total.matchedGroupSize, unmatchedGroupSize: total.unmatchedGroupSize, unmatchedRemainder: 0 };
  const byMatched = Math.trunc(updateMatched / g.matchedGroupSize);
  const byUnmatched = Math.trunc(updateUnmatched / g.unmatchedGroupSize);
  g.groupNum = byMatched < byUnmatched ? byMatched : byUnmatched;
  g.unmatchedRemainder = updateUnmatched - g.groupNum * g.unmatchedGroupSize;
  return g;
}
