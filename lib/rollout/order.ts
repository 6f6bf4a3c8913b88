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
import { maxContainerRestarts, podLabels as labelsOf, readyCondition, timeOf } from '../sidecarset/pod-state.ts';

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
  // One scan of the conditions for both readiness and its time.
  const condition = readyCondition(pod);
  const ready = condition?.status === 'True';
  return {
    assigned: (stringOf(objectOf(pod.spec)?.nodeName) ?? '') !== '',
    phase: phaseOrdinal(objectOf(pod.status)?.phase),
    ready,
    readyTime: ready ? timeOf(condition.lastTransitionTime) : 0,
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
 * active-pods order, the stable priority sort, then the scatter sort, made
 * with one sort of numbers. A stable priority sort of a list in active-pods
 * order is the list sorted by (priority, active-pods key, list index), so
 * each pod's keys are read once rather than per comparison. A weight sum
 * that is not finite (a stored set's `1e999`) makes no total order; those
 * sets take the three steps as written. test/rollout/order-fused.test.ts
 * pins the equality.
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
 * What the order reads of a pod is kept in number columns (no object per
 * pod): the sort keys of the waiting pods, and for a scatter strategy each
 * matched pod's value of each scatter key as a number
 * ({@link ScatterColumn}), so that the scatter sort compares numbers
 * rather than reading labels again per term.
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
  /** One column per distinct key of the scatter strategy, when there is one. */
  private readonly scatter: ScatterColumns | undefined;

  constructor(pods: readonly Pod[], strategy: SidecarSetUpdateStrategy | undefined) {
    this.pods = pods;
    this.strategy = strategy;
    const size = pods.length;
    this.rank = new Uint8Array(size);
    this.readyKey = new Float64Array(size);
    this.restartsKey = new Float64Array(size);
    this.createdKey = new Float64Array(size);
    this.priority = priorityRule(strategy?.priorityStrategy, size);
    this.scatter = strategy?.scatterStrategy ? new ScatterColumns(strategy.scatterStrategy, size) : undefined;
  }

  /**
   * Reads matched pod `i` (`pod`, when the caller holds it); `waits` when it
   * waits for its update. Every matched pod is added once, in any order.
   */
  add(i: number, waits: boolean, pod: Pod = this.pods[i] as Pod): void {
    const { scatter, priority: rule } = this;
    const labels = scatter !== undefined || (waits && rule.kind !== 'none') ? labelsOf(pod) : undefined;
    if (scatter !== undefined) scatter.add(i, labels as Record<string, string>);
    if (!waits) return;
    this.waiting.push(i);
    const key = activeKey(pod);
    this.rank[i] = (key.assigned ? 6 : 0) + key.phase * 2 + (key.ready ? 1 : 0);
    // Compared only between two ready pods (equal ranks are equally ready): 0 for the not ready.
    this.readyKey[i] = key.ready ? afterOrZeroKey(key.readyTime) : 0;
    this.restartsKey[i] = -key.restarts;
    this.createdKey[i] = afterOrZeroKey(key.created);
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
    if (priority.kind === 'weight' && !priority.finite) return threeSteps(pods, waiting.sort((x, y) => x - y), strategy);
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
    return this.scatter === undefined ? order : this.scatter.sort(order);
  }
}

/**
 * A scatter strategy's labels over the matched pods, one column per
 * distinct key: each pod's value of the key as an id, -1 for a pod without
 * the key, and for each value the first pod carrying it (a `*` term expands
 * in that order). Counting and matching a term
 * then compare numbers: what {@link scatterTerms}, {@link LabelCounts} and
 * {@link matches} decide from the labels, test/rollout/order-fused.test.ts
 * pins the equality.
 */
class ScatterColumns {
  private readonly strategy: SidecarSetUpdateStrategy['scatterStrategy'];
  private readonly columns: { key: string; ids: Int32Array; values: string[]; firstAt: number[]; byValue: Map<string, number> }[] = [];
  private readonly size: number;

  constructor(strategy: SidecarSetUpdateStrategy['scatterStrategy'], size: number) {
    this.strategy = strategy;
    this.size = size;
    for (const term of arrayOf(strategy).filter(isObject)) {
      const key = stringOf(term.key) ?? '';
      if (!this.columns.some((c) => c.key === key)) this.columns.push({ key, ids: new Int32Array(size), values: [], firstAt: [], byValue: new Map() });
    }
  }

  /** Reads matched pod `i`'s labels (every matched pod once, in any order). */
  add(i: number, labels: Record<string, string>): void {
    for (const column of this.columns) {
      if (!Object.hasOwn(labels, column.key)) {
        column.ids[i] = -1;
        continue;
      }
      const value = labels[column.key] as string;
      let id = column.byValue.get(value);
      if (id === undefined) {
        id = column.values.length;
        column.values.push(value);
        column.firstAt.push(i);
        column.byValue.set(value, id);
      } else if (i < (column.firstAt[id] as number)) column.firstAt[id] = i;
      column.ids[i] = id;
    }
  }

  /** {@link scatterSort} of `indexes` with {@link scatterTerms}, from the columns. */
  sort(indexes: readonly number[]): number[] {
    const terms = scatterTermsFrom(this.strategy, (key) => {
      const column = this.columns.find((c) => c.key === key);
      if (column === undefined) return [];
      const { values, firstAt } = column;
      return values.map((_, id) => id).sort((a, b) => (firstAt[a] as number) - (firstAt[b] as number)).map((id) => values[id] as string);
    });
    if (terms.length === 0 || indexes.length <= 1) return [...indexes];
    // Per column, pods per value id (slot 0: pods without the key), among the candidates and among all matched pods.
    const counted = this.columns.map((column) => {
      const candidates = new Int32Array(column.values.length + 1);
      const all = new Int32Array(column.values.length + 1);
      const { ids } = column;
      for (const i of indexes) (candidates[(ids[i] as number) + 1] as number)++;
      for (let i = 0; i < this.size; i++) (all[(ids[i] as number) + 1] as number)++;
      return { column, candidates, all };
    });
    const plan = terms.map((term) => {
      const c = counted.find((x) => x.column.key === term.key) as (typeof counted)[number];
      const id = c.column.byValue.get(term.value) ?? -2;
      // Go reads a missing label as "": a term for "" also matches pods without the key.
      const missing = term.value === '';
      const carrying = (counts: Int32Array): number => (id < 0 ? 0 : (counts[id + 1] as number));
      const matching = (counts: Int32Array): number => carrying(counts) + (missing ? (counts[0] as number) : 0);
      const { ids } = c.column;
      return {
        term,
        count: carrying(c.candidates),
        matched: matching(c.candidates),
        total: matching(c.all),
        matches: (i: number): boolean => {
          const v = ids[i] as number;
          return v === id || (missing && v === -1);
        },
      };
    });
    return scatterWith(indexes, plan, this.size);
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
  const level = orderLevel(labels, keys);
  return { level, order: level < 0 ? 0 : orderSuffix(labels[keys[level] as string] as string) };
}

/** The index of the first orderPriority key the pod carries, -1 when none. */
function orderLevel(labels: Record<string, string>, keys: readonly string[]): number {
  for (let k = 0; k < keys.length; k++) if (Object.hasOwn(labels, keys[k] as string)) return k;
  return -1;
}

/** Digits a double holds exactly whatever they are (10^15 < 2^53): such a suffix is summed, a longer one parsed. */
const EXACT_DIGITS = 15;

/** Kruise's getIntFromStringSuffix: the trailing ASCII digits of a label value (`/(\d+)$/`), 0 when none or not a safe integer. */
export function orderSuffix(value: string): number {
  let start = value.length;
  while (start > 0) {
    const c = value.charCodeAt(start - 1);
    if (c < 48 || c > 57) break;
    start--;
  }
  if (start === value.length) return 0;
  if (value.length - start > EXACT_DIGITS) {
    const n = Number.parseInt(value.slice(start), 10);
    return Number.isSafeInteger(n) ? n : 0;
  }
  let n = 0;
  for (let i = start; i < value.length; i++) n = n * 10 + (value.charCodeAt(i) - 48);
  return n;
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
  const labels = pods.map(labelsOf);
  return scatterTermsFrom(strategy, (key) => {
    const values = new Set<string>();
    for (const l of labels) if (Object.hasOwn(l, key)) values.add(l[key] as string);
    return [...values];
  });
}

/** {@link scatterTerms} given, per key, the distinct values of the label among all matched pods in the order they first appear. */
function scatterTermsFrom(strategy: SidecarSetUpdateStrategy['scatterStrategy'], valuesOf: (key: string) => readonly string[]): ScatterTerm[] {
  const out: ScatterTerm[] = [];
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
    if (value !== '*') add(key, value);
    else for (const v of valuesOf(key)) add(key, v);
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
  const labels = pods.map(labelsOf);
  if (terms.length === 0 || indexes.length <= 1) return [...indexes];
  // One pass each over the candidates and all matched pods gives every term's counts.
  const candidateCount = new LabelCounts(terms);
  for (const i of indexes) candidateCount.add(labels[i] as Record<string, string>);
  const totalCount = new LabelCounts(terms);
  for (const l of labels) totalCount.add(l);
  const plan = terms.map((term) => ({
    term,
    count: candidateCount.carrying(term),
    matched: candidateCount.matching(term, indexes.length),
    total: totalCount.matching(term, labels.length),
    matches: (i: number) => matches(labels[i] as Record<string, string>, term),
  }));
  return scatterWith(indexes, plan, labels.length);
}

/** One term as the scatter sort reads it: its match counts and which pods match. */
interface CountedTerm {
  term: ScatterTerm;
  /** Candidates carrying `key=value`. */
  count: number;
  /** Candidates matching the term as Go reads it (see {@link matches}). */
  matched: number;
  /** Matched pods (all, not only candidates) matching it. */
  total: number;
  /** Whether pod `i` matches it. */
  matches: (i: number) => boolean;
}

/** The scatter sort's steps over counted terms; `size` is the number of matched pods. */
function scatterWith(indexes: readonly number[], terms: CountedTerm[], size: number): number[] {
  if (terms.length === 0 || indexes.length <= 1) return [...indexes];
  // The candidate set never changes under reordering, so terms that cannot move anything are skipped without a pass of their own.
  let ordered = terms.map((t, position) => ({ t, position }));
  if (terms.length > 1) {
    ordered = ordered.filter(({ t }) => t.count > 0);
    ordered.sort((a, b) => b.t.count - a.t.count || a.position - b.position);
  }
  let out = [...indexes];
  for (const { t } of ordered) {
    if (t.matched <= 1 || indexes.length - t.matched <= 1) continue;
    out = scatterByTerm(out, t.matches, t.total, size);
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

/** One term's step: `allMatched` of the `size` matched pods match it. */
function scatterByTerm(indexes: readonly number[], isMatch: (i: number) => boolean, allMatched: number, size: number): number[] {
  const matched: number[] = [];
  const unmatched: number[] = [];
  for (const i of indexes) (isMatch(i) ? matched : unmatched).push(i);
  if (matched.length <= 1 || unmatched.length <= 1) return [...indexes];
  let totalMatched = allMatched;
  const totalUnmatched = size - allMatched;
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
