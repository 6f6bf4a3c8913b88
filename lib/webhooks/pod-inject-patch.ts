/**
 * pod-inject's JSON Patch, written from what injection decided
 * (lib/sidecarset/inject.ts `InjectionChanges`): the annotations it wrote and
 * the spec lists it changed, not a diff of the whole injected pod against the
 * received one. Its cost follows what is injected; a pod's other members are
 * never visited.
 *
 * The operations are exactly those of `createPatchSharingValues(received,
 * injectedPod(changes))` (lib/admission/json-patch.ts), byte for byte once
 * written, which test/webhooks/pod-inject-patch.test.ts checks over generated
 * pods and sets: the members are visited in the order that diff visits them,
 * and a list whose items were inserted at one end only gets the `add`s that
 * diff finds for it; anything else (a container replaced by name, sidecars at
 * both ends, a pod without metadata or spec objects) goes through that diff
 * itself, for that member only.
 */
import { createPatchSharingValues, diffInto, type JsonPatchOperation } from '../admission/json-patch.ts';
import { isObject } from '../kube/json.ts';
import { injectedPod, type InjectionChanges, type ListChange } from '../sidecarset/inject.ts';

/** The operations that turn the received pod into the injected one. */
export function injectionPatch(changes: InjectionChanges): JsonPatchOperation[] {
  const { received } = changes;
  const metadata: unknown = received.metadata;
  const spec: unknown = received.spec;
  // Replaced whole or added whole: the diff writes the new object, which only the injected pod holds.
  if (!isObject(metadata) || !isObject(spec)) return createPatchSharingValues(received, injectedPod(changes));
  const out: JsonPatchOperation[] = [];
  // The received pod's members in its own order, as a diff walks them; only these two change.
  for (const key of Object.keys(received)) {
    if (key === 'metadata') annotationOps(metadata, changes, out);
    else if (key === 'spec') specOps(spec, changes.lists, out);
  }
  return out;
}

/** A member as a diff counts one: own, and not undefined (which serialises to nothing). */
function has(object: Record<string, unknown>, key: string): boolean {
  return Object.hasOwn(object, key) && object[key] !== undefined;
}

function annotationOps(metadata: Record<string, unknown>, changes: InjectionChanges, out: JsonPatchOperation[]): void {
  if (!has(metadata, 'annotations')) out.push({ op: 'add', path: '/metadata/annotations', value: changes.annotations });
  // A few strings: the diff of the two maps is what a whole diff would write under them.
  else diffInto(metadata.annotations, changes.annotations, '/metadata/annotations', out);
}

function specOps(spec: Record<string, unknown>, lists: readonly ListChange[], out: JsonPatchOperation[]): void {
  // Lists the spec holds, in its order; then those it lacks, added in the order injection wrote them.
  for (const key of Object.keys(spec)) {
    const change = lists.find((l) => l.key === key);
    if (change !== undefined && has(spec, key)) listOps(spec[key], change, `/spec/${key}`, out);
  }
  for (const change of lists) {
    if (!has(spec, change.key)) out.push({ op: 'add', path: `/spec/${change.key}`, value: change.list });
  }
}

function listOps(received: unknown, change: ListChange, path: string, out: JsonPatchOperation[]): void {
  const { inserted } = change;
  if (!Array.isArray(received) || inserted === undefined) {
    diffInto(received, change.list, path, out);
    return;
  }
  for (let i = 0; i < inserted.items.length; i++) out.push({ op: 'add', path: `${path}/${inserted.at + i}`, value: inserted.items[i] });
}
