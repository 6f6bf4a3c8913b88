/**
 * "May these two label selectors both match some label set?"
 *
 * Used to decide whether two SidecarSets can inject into the same pod. The
 * answer must be conservative: a wrong "no" lets two sets inject clashing
 * containers, a wrong "yes" only asks the user to rename something. So the
 * selectors overlap unless they are provably disjoint.
 *
 * The test works key by key. Requirements on different keys never exclude
 * each other (a label set can carry any keys it likes), so the two selectors
 * together are satisfiable exactly when, for every key, the requirements of
 * both selectors on that key leave at least one possible state of the label.
 * A state is "absent" or some string value; each requirement allows a set of
 * states that is either finite (`a=h`, `In`, `DoesNotExist`) or everything but
 * a finite list (`NotIn`, `Exists`). Intersections of such sets stay in that
 * form, and only a finite one can be empty, because label values are drawn
 * from an effectively unbounded set. For well-formed selectors this answer is
 * exact, which is stronger than Kruise's IsSelectorOverlapping (it compares
 * only requirement pairs, so `a=h` with `a In [i]` in one selector overlaps
 * everything there).
 *
 * A requirement that is not well formed (unknown operator, In without values,
 * a value that is not a string) is ignored: dropping a constraint only widens
 * what a selector may match, which keeps the answer conservative.
 */
import { isObject } from './json.ts';
import type { LabelSelector } from './types.ts';

/** The label is not on the object: a state `DoesNotExist` allows and `In` does not. */
const ABSENT = Symbol('absent');
type LabelState = string | typeof ABSENT;

/** Allowed states of one label: exactly `states` (finite), or every state except `states`. */
interface StateSet {
  finite: boolean;
  states: ReadonlySet<LabelState>;
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
}

const ONLY_ABSENT: StateSet = { finite: true, states: new Set([ABSENT]) };
const ANY_PRESENT: StateSet = { finite: false, states: new Set([ABSENT]) };

/** The states one requirement allows, or undefined when it is not well formed (and so ignored). */
function requirementStates(operator: unknown, rawValues: unknown): StateSet | undefined {
  const values = rawValues === undefined || rawValues === null ? [] : stringList(rawValues);
  if (values === undefined) return undefined;
  switch (operator) {
    case 'In':
      return values.length > 0 ? { finite: true, states: new Set(values) } : undefined;
    case 'NotIn':
      return values.length > 0 ? { finite: false, states: new Set(values) } : undefined;
    case 'Exists':
      return values.length === 0 ? ANY_PRESENT : undefined;
    case 'DoesNotExist':
      return values.length === 0 ? ONLY_ABSENT : undefined;
    default:
      return undefined;
  }
}

/**
 * The intersection of all the state sets of one key, in one pass: every
 * excluded state is gathered into one set first, then only the smallest
 * finite set is walked, each of its states looked up in the others. So the
 * work is linear in the requirements' values however many there are (pairwise
 * intersection was quadratic: two `In` lists of 100,000 values took seconds).
 * With `oneWitness`, only whether it is empty is asked: the walk stops at the
 * first allowed state, which is then all the result holds.
 */
function intersectAll(sets: readonly StateSet[], oneWitness: boolean): StateSet {
  const finite = sets.filter((s) => s.finite);
  // The excluded states: the largest such set as it is, the others gathered
  // into one, so that intersecting with a precomputed selector copies only
  // the smaller side.
  const excludedSets = sets.filter((s) => !s.finite).sort((x, y) => y.states.size - x.states.size);
  const largest = excludedSets[0]?.states ?? new Set<LabelState>();
  const rest = new Set<LabelState>();
  for (const s of excludedSets.slice(1)) for (const state of s.states) rest.add(state);
  const isExcluded = (state: LabelState): boolean => largest.has(state) || rest.has(state);
  if (finite.length === 0) {
    // Never empty, so with `oneWitness` the states do not matter.
    if (oneWitness || rest.size === 0) return { finite: false, states: largest };
    return { finite: false, states: new Set([...largest, ...rest]) };
  }
  let smallest = finite[0] as StateSet;
  for (const s of finite) if (s.states.size < smallest.states.size) smallest = s;
  const allowed = new Set<LabelState>();
  for (const state of smallest.states) {
    if (isExcluded(state) || !finite.every((s) => s === smallest || s.states.has(state))) continue;
    allowed.add(state);
    if (oneWitness) break;
  }
  return { finite: true, states: allowed };
}

type Constraints = Map<string, StateSet>;

/**
 * One selector's requirements by key, intersected with each other and with
 * what `base` holds for the same key (a precomputed selector, never copied).
 */
function constraintsOf(selector: unknown, base: Constraints | undefined, oneWitness: boolean): Constraints {
  const byKey = new Map<string, StateSet[]>();
  const add = (key: string, states: StateSet): void => {
    let list = byKey.get(key);
    if (list === undefined) {
      list = [];
      const fixed = base?.get(key);
      if (fixed !== undefined) list.push(fixed);
      byKey.set(key, list);
    }
    list.push(states);
  };
  if (isObject(selector)) {
    const { matchLabels, matchExpressions } = selector;
    if (isObject(matchLabels)) {
      for (const key of Object.keys(matchLabels)) {
        const value = matchLabels[key];
        if (typeof value === 'string') add(key, { finite: true, states: new Set([value]) });
      }
    }
    if (Array.isArray(matchExpressions)) {
      for (const req of matchExpressions as unknown[]) {
        if (!isObject(req) || typeof req.key !== 'string') continue;
        const states = requirementStates(req.operator, req.values);
        if (states !== undefined) add(req.key, states);
      }
    }
  }
  const out: Constraints = new Map();
  for (const [key, list] of byKey) out.set(key, list.length === 1 ? (list[0] as StateSet) : intersectAll(list, oneWitness));
  return out;
}

function anyEmpty(byKey: Constraints): boolean {
  for (const states of byKey.values()) {
    if (states.finite && states.states.size === 0) return true;
  }
  return false;
}

/**
 * Whether some label set may satisfy both selectors. False only when they are
 * provably disjoint: `a=h` vs `a=i`, `a=h` vs `a In [i,j]`, `a NotIn [h,i]` vs
 * `a=h`, `a DoesNotExist` vs `a Exists`, and so on. A selector that
 * contradicts itself (`a=h` with `a In [i]`) matches nothing, so it overlaps
 * nothing either. Malformed input (not an object, bad requirements) is read
 * as matching more, never less.
 */
export function selectorsMayOverlap(a: LabelSelector | undefined, b: LabelSelector | undefined): boolean {
  return selectorOverlapTest(a)(b);
}

/**
 * {@link selectorsMayOverlap} with `a` fixed, for comparing one selector with
 * many: `a`'s requirements are read once. Intersection is commutative, so
 * adding `b`'s requirements onto `a`'s gives the same answer in any order.
 */
export function selectorOverlapTest(a: LabelSelector | undefined): (b: LabelSelector | undefined) => boolean {
  const fixed = constraintsOf(a, undefined, false);
  // Keys only `a` constrains keep their states, so they are checked once here.
  if (anyEmpty(fixed)) return () => false;
  return (b) => !anyEmpty(constraintsOf(b, fixed, true));
}
