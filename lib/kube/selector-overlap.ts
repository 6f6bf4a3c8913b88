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

/**
 * Allowed states of one label: exactly `states` (finite), or every state
 * except `states`. Lists rather than Sets: they hold one to a few values,
 * and duplicates do not change whether an intersection is empty, which is
 * all that is asked of them.
 */
interface StateSet {
  finite: boolean;
  states: readonly LabelState[];
}

function intersect(a: StateSet, b: StateSet): StateSet {
  if (a.finite && b.finite) return { finite: true, states: a.states.filter((s) => b.states.includes(s)) };
  if (a.finite) return { finite: true, states: a.states.filter((s) => !b.states.includes(s)) };
  if (b.finite) return intersect(b, a);
  return { finite: false, states: [...a.states, ...b.states] };
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
}

const ONLY_ABSENT: StateSet = { finite: true, states: [ABSENT] };
const ANY_PRESENT: StateSet = { finite: false, states: [ABSENT] };

/** The states one requirement allows, or undefined when it is not well formed (and so ignored). */
function requirementStates(operator: unknown, rawValues: unknown): StateSet | undefined {
  const values = rawValues === undefined || rawValues === null ? [] : stringList(rawValues);
  if (values === undefined) return undefined;
  switch (operator) {
    case 'In':
      return values.length > 0 ? { finite: true, states: values } : undefined;
    case 'NotIn':
      return values.length > 0 ? { finite: false, states: values } : undefined;
    case 'Exists':
      return values.length === 0 ? ANY_PRESENT : undefined;
    case 'DoesNotExist':
      return values.length === 0 ? ONLY_ABSENT : undefined;
    default:
      return undefined;
  }
}

type Constraints = Map<string, StateSet>;

/**
 * Adds one selector's requirements to `byKey`, intersecting with what is
 * there already, or with what `base` holds for a key `byKey` does not have
 * yet (so that a precomputed selector is never copied).
 */
function addConstraints(byKey: Constraints, selector: unknown, base?: Constraints): void {
  if (!isObject(selector)) return;
  const add = (key: string, states: StateSet): void => {
    const current = byKey.get(key) ?? base?.get(key);
    byKey.set(key, current === undefined ? states : intersect(current, states));
  };
  const { matchLabels, matchExpressions } = selector;
  if (isObject(matchLabels)) {
    for (const key of Object.keys(matchLabels)) {
      const value = matchLabels[key];
      if (typeof value === 'string') add(key, { finite: true, states: [value] });
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

function anyEmpty(byKey: Constraints): boolean {
  for (const states of byKey.values()) {
    if (states.finite && states.states.length === 0) return true;
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
  const fixed: Constraints = new Map();
  addConstraints(fixed, a);
  // Keys only `a` constrains keep their states, so they are checked once here.
  if (anyEmpty(fixed)) return () => false;
  return (b) => {
    const touched: Constraints = new Map();
    addConstraints(touched, b, fixed);
    return !anyEmpty(touched);
  };
}
