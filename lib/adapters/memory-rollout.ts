/**
 * The rollout's ports over objects in memory, for tests: ControllerRevisions,
 * and one set of pods that the pod source lists and watches and the pod
 * writer patches. They behave as the API server does for the parts a reconcile
 * relies on: every write bumps one cluster-wide resourceVersion, a JSON
 * Patch is applied strictly (lib/admission/json-patch-apply.ts) and a failed
 * `test` is a conflict (any other failure stays a JsonPatchError, so a
 * table sees a malformed patch the API server would also refuse), a guarded
 * renumber or delete refuses a changed revision, and a watch from a
 * resourceVersion sees every later change.
 */
import { applyPatch } from '../admission/json-patch-apply.ts';
import { JsonPatchError, type JsonPatchOperation } from '../admission/json-patch.ts';
import { arrayOf, cloneJson, isObject, objectOf, stringMapOf, stringOf } from '../kube/json.ts';
import { selectorMatches } from '../kube/label-selector.ts';
import type { JsonObject, LabelSelector, Pod } from '../kube/types.ts';
import type { PodPredicate, PodScope, PodWatchSink, PodWrite, PodWriter, RevisionStore, SetPodSource } from '../ports.ts';
import { podKey } from '../sidecarset/pod-state.ts';
import { DEFAULT_REVISION_NAMESPACE, LABEL_SIDECARSET_NAME, type ControllerRevision } from '../sidecarset/revisions.ts';
import { ObjectExistsError, WriteConflictError } from '../ports/errors.ts';
import { waitForSeen } from './memory-watch.ts';

/** A write a memory adapter accepted, in order: what a table asserts on. */
export interface MemoryWrite {
  kind: 'create' | 'renumber' | 'label' | 'delete' | 'patch' | 'patch status';
  /** `namespace/name` for pods, the name for revisions. */
  target: string;
}

export interface MemoryRevisionStore extends RevisionStore {
  /** The revisions as stored now (copies), in creation order. */
  revisions(): ControllerRevision[];
  readonly writes: readonly MemoryWrite[];
}

/** The stored revisions of one namespace, each write stamped with the next resourceVersion. */
class StoredRevisions {
  readonly namespace: string;
  readonly writes: MemoryWrite[] = [];
  private readonly stored = new Map<string, ControllerRevision>();
  private version = 0;
  private uids = 0;

  constructor(initial: readonly ControllerRevision[], namespace: string) {
    this.namespace = namespace;
    for (const revision of initial) {
      const name = stringOf(revision.metadata?.name) ?? '';
      if ((stringOf(revision.metadata?.namespace) ?? namespace) === namespace) this.stored.set(name, this.stamp(revision));
    }
  }

  /** A copy with the store's namespace, a new resourceVersion, and a uid and creationTimestamp when it lacks them. */
  private stamp(revision: ControllerRevision): ControllerRevision {
    const copy = cloneJson(revision);
    const version = ++this.version;
    copy.metadata = {
      ...copy.metadata,
      namespace: this.namespace,
      uid: stringOf(copy.metadata?.uid) ?? `revision-uid-${++this.uids}`,
      resourceVersion: String(version),
      creationTimestamp: stringOf(copy.metadata?.creationTimestamp) ?? new Date(Date.UTC(2026, 0, 1, 0, 0, version)).toISOString().replace('.000', ''),
    };
    return copy;
  }

  copies(keep: (revision: ControllerRevision) => boolean = () => true): ControllerRevision[] {
    return [...this.stored.values()].filter(keep).map((r) => cloneJson(r));
  }

  get(name: string): ControllerRevision | undefined {
    return this.stored.has(name) ? cloneJson(this.stored.get(name)) : undefined;
  }

  labelled(labels: Readonly<Record<string, string>>): ControllerRevision[] {
    return this.copies((r) => Object.entries(labels).every(([k, v]) => stringMapOf(r.metadata?.labels)[k] === v));
  }

  create(revision: ControllerRevision): Promise<ControllerRevision> {
    const name = stringOf(revision.metadata?.name) ?? '';
    if (name === '') return Promise.reject(new Error('create ControllerRevision: metadata.name is required'));
    if (this.stored.has(name)) return Promise.reject(new ObjectExistsError(`create ControllerRevision "${this.namespace}/${name}": a ControllerRevision of that name exists`));
    return Promise.resolve(this.store(name, { ...revision, metadata: { ...revision.metadata, uid: undefined, resourceVersion: undefined } }, 'create'));
  }

  setNumber(revision: ControllerRevision, number: number): Promise<ControllerRevision> {
    const name = stringOf(revision.metadata?.name) ?? '';
    const current = this.stored.get(name);
    if (current === undefined || current.metadata?.resourceVersion !== revision.metadata?.resourceVersion) {
      return Promise.reject(new WriteConflictError(`renumber ControllerRevision "${this.namespace}/${name}": it changed since it was read`));
    }
    return Promise.resolve(this.store(name, { ...current, revision: number }, 'renumber'));
  }

  patchLabels(name: string, labels: Readonly<Record<string, string>>): Promise<void> {
    const current = this.stored.get(name);
    if (current === undefined) return Promise.reject(new Error(`label ControllerRevision "${this.namespace}/${name}": not found`));
    this.store(name, { ...current, metadata: { ...current.metadata, labels: { ...stringMapOf(current.metadata?.labels), ...labels } } }, 'label');
    return Promise.resolve();
  }

  delete(revision: ControllerRevision): Promise<void> {
    const name = stringOf(revision.metadata?.name) ?? '';
    const current = this.stored.get(name);
    const uid = stringOf(revision.metadata?.uid);
    if (current === undefined || (uid !== undefined && current.metadata?.uid !== uid)) return Promise.resolve();
    this.stored.delete(name);
    this.writes.push({ kind: 'delete', target: name });
    return Promise.resolve();
  }

  /** Stores a stamped copy of `revision` under `name`, the write noted; returns a copy of what was stored. */
  private store(name: string, revision: ControllerRevision, kind: MemoryWrite['kind']): ControllerRevision {
    const stamped = this.stamp(revision);
    this.stored.set(name, stamped);
    this.writes.push({ kind, target: name });
    return cloneJson(stamped);
  }
}

/**
 * A RevisionStore over copies of `initial` (those of `namespace`; a revision
 * without a namespace counts as in it). Stored revisions get a uid, a
 * resourceVersion and a creationTimestamp when they lack them.
 */
export function memoryRevisionStore(initial: readonly ControllerRevision[] = [], namespace = DEFAULT_REVISION_NAMESPACE): MemoryRevisionStore {
  const shelf = new StoredRevisions(initial, namespace);
  // Own properties, not the class's methods: callers spread a store to replace one of them.
  return {
    namespace,
    writes: shelf.writes,
    revisions: () => shelf.copies(),
    get: (name) => Promise.resolve(shelf.get(name)),
    list: (setName, labels = {}) => Promise.resolve(shelf.labelled({ ...labels, [LABEL_SIDECARSET_NAME]: setName })),
    listAll: () => Promise.resolve(shelf.copies((r) => stringMapOf(r.metadata?.labels)[LABEL_SIDECARSET_NAME] !== undefined)),
    create: (revision) => shelf.create(revision),
    setNumber: (revision, number) => shelf.setNumber(revision, number),
    patchLabels: (name, labels) => shelf.patchLabels(name, labels),
    delete: (revision) => shelf.delete(revision),
  };
}

/** A comma outside parentheses separates requirements: `a in (x,y),b`. */
function splitRequirements(query: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < query.length; i++) {
    if (query[i] === '(') depth++;
    else if (query[i] === ')') depth--;
    else if (query[i] === ',' && depth === 0) {
      parts.push(query.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(query.slice(start));
  return parts.map((p) => p.trim());
}

/**
 * A label selector query (the API server's `labelSelector` parameter, in the
 * forms {@link podScope} writes: `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`,
 * `!k`) as a LabelSelector.
 * @throws naming the requirement it cannot read.
 */
export function parseSelectorQuery(query: string): LabelSelector {
  const matchLabels: Record<string, string> = {};
  const matchExpressions: NonNullable<LabelSelector['matchExpressions']> = [];
  if (query.trim() === '') return {};
  for (const part of splitRequirements(query)) {
    const set = /^(\S+)\s+(in|notin)\s+\(([^()]*)\)$/.exec(part);
    const equal = /^([^=!\s]+)==?([^=!\s]*)$/.exec(part);
    if (set !== null) matchExpressions.push({ key: set[1] ?? '', operator: set[2] === 'in' ? 'In' : 'NotIn', values: (set[3] ?? '').split(',').map((v) => v.trim()) });
    else if (equal !== null) matchLabels[equal[1] ?? ''] = equal[2] ?? '';
    else if (/^![^=!\s(),]+$/.test(part)) matchExpressions.push({ key: part.slice(1), operator: 'DoesNotExist' });
    else if (/^[^=!\s(),]+$/.test(part)) matchExpressions.push({ key: part, operator: 'Exists' });
    else throw new Error(`label selector ${JSON.stringify(query)}: cannot read the requirement ${JSON.stringify(part)}`);
  }
  return { matchLabels, matchExpressions };
}

function inScope(pod: Pod, scope: PodScope, selector: LabelSelector): boolean {
  if (scope.namespace !== undefined && stringOf(pod.metadata?.namespace) !== scope.namespace) return false;
  return selectorMatches(selector, stringMapOf(pod.metadata?.labels));
}

/** Strategic merge of a pod status patch as the API server does it for the parts the rollout sends: conditions merge by type. */
function mergeStatus(status: JsonObject, patch: JsonObject): JsonObject {
  const out: JsonObject = { ...status };
  for (const [key, value] of Object.entries(patch)) {
    if (key === 'conditions' && Array.isArray(value)) {
      const conditions = arrayOf(status.conditions).filter(isObject).map((c) => ({ ...c }));
      for (const condition of value.filter(isObject)) {
        const at = conditions.findIndex((c) => c.type === condition.type);
        if (at === -1) conditions.push(cloneJson(condition));
        else conditions[at] = { ...conditions[at], ...cloneJson(condition) };
      }
      out.conditions = conditions;
    } else if (isObject(value) && isObject(out[key])) out[key] = mergeStatus(objectOf(out[key]) ?? {}, value);
    else out[key] = cloneJson(value);
  }
  return out;
}

export interface MemoryPods {
  source: SetPodSource;
  writer: PodWriter;
  /** The pods as stored now (copies), in insertion order. */
  pods(): Pod[];
  /** Every write through `writer` that went through, in order. */
  readonly writes: readonly MemoryWrite[];
  /** Another writer changes a stored pod (e.g. a kubelet making it ready): a new resourceVersion, and watchers see it. */
  update(namespace: string, name: string, change: (pod: Pod) => void): string;
  /** Another writer deletes a pod. */
  remove(namespace: string, name: string): void;
  /** The cluster's current resourceVersion. */
  resourceVersion(): string;
}

/** One change of a stored pod: the version it made and the pod before and after. */
interface Change {
  version: number;
  before?: Pod;
  after?: Pod;
}

/**
 * A change as a watch of `scope` tells it, if it does: a pod leaving the
 * scope is DELETED there (at the version of the change, as the API server
 * tells it), one entering it ADDED.
 */
function asTold(c: Change, scope: PodScope, selector: LabelSelector): { type: 'ADDED' | 'MODIFIED' | 'DELETED'; pod: Pod } | undefined {
  const was = c.before !== undefined && inScope(c.before, scope, selector);
  const is = c.after !== undefined && inScope(c.after, scope, selector);
  if (c.after !== undefined && is) return { type: was ? 'MODIFIED' : 'ADDED', pod: c.after };
  if (!was || c.before === undefined) return undefined;
  return { type: 'DELETED', pod: { ...c.before, metadata: { ...c.before.metadata, resourceVersion: String(c.version) } } };
}

/** One cluster's stored pods and their history of changes, each at the next cluster-wide resourceVersion. */
class StoredPods {
  version = 0;
  readonly stored = new Map<string, Pod>();
  readonly writes: MemoryWrite[] = [];
  /** Each change: the version it made and the pod before and after (a watch in a scope sees either side). */
  readonly changes: Change[] = [];
  readonly listeners = new Set<() => void>();

  constructor(initial: readonly Pod[]) {
    for (const pod of initial) this.commit(podKey(pod), cloneJson(pod));
  }

  /** Stores `after` (none: deletes) at the next version, tells the listeners, returns the version. */
  commit(key: string, after: Pod | undefined): string {
    const before = this.stored.get(key);
    const version = ++this.version;
    if (after === undefined) this.stored.delete(key);
    else {
      after.metadata = { ...after.metadata, resourceVersion: String(version) };
      this.stored.set(key, after);
    }
    this.changes.push({ version, ...(before === undefined ? {} : { before }), ...(after === undefined ? {} : { after: cloneJson(after) }) });
    for (const listener of [...this.listeners]) listener();
    return String(version);
  }

  /** A write through the pod writer: `change` makes the next pod from a copy of the stored one. */
  write(namespace: string, name: string, kind: MemoryWrite['kind'], change: (pod: Pod) => Pod): PodWrite {
    const key = `${namespace}/${name}`;
    const current = this.stored.get(key);
    if (current === undefined) return { outcome: 'gone' };
    const next = change(cloneJson(current));
    this.writes.push({ kind, target: key });
    return { outcome: 'written', resourceVersion: this.commit(key, next) };
  }

  list(scope: PodScope): { pods: Pod[]; resourceVersion: string } {
    const selector = parseSelectorQuery(scope.labelSelector);
    const pods = [...this.stored.values()].filter((pod) => inScope(pod, scope, selector)).map((pod) => cloneJson(pod));
    return { pods, resourceVersion: String(this.version) };
  }

  /** Whether a change after `from`, not ignored, is one a watch of the scope tells (and `predicate` accepts). */
  seenSince(from: number, scope: PodScope, selector: LabelSelector, ignore: ReadonlySet<string>, predicate: PodPredicate | undefined): boolean {
    return this.changes.some((c) => {
      if (c.version <= from || ignore.has(String(c.version))) return false;
      const event = asTold(c, scope, selector);
      return event !== undefined && (predicate === undefined || predicate(event.type, event.pod));
    });
  }

  /** Tells `sink` every change after `from` in the scope, then each later one a moment after its write (as a watch does), until `signal` aborts. */
  follow(from: number, scope: PodScope, selector: LabelSelector, sink: PodWatchSink, signal: AbortSignal): Promise<'stopped'> {
    return new Promise((resolve) => {
      let next = this.changes.findIndex((c) => c.version > from);
      if (next === -1) next = this.changes.length;
      // The writer usually has its answer before the watch tells the change.
      let due = false;
      const deliver = () => {
        due = false;
        for (; next < this.changes.length && !signal.aborted; next++) {
          const event = asTold(this.changes[next] as Change, scope, selector);
          if (event !== undefined) sink.change(event.type, cloneJson(event.pod));
        }
      };
      const listener = () => {
        if (due) return;
        due = true;
        setTimeout(deliver, 0);
      };
      this.listeners.add(listener);
      const stop = () => {
        this.listeners.delete(listener);
        resolve('stopped');
      };
      signal.addEventListener('abort', stop, { once: true });
      listener();
    });
  }

  /** Another writer's change of a stored pod. */
  update(namespace: string, name: string, change: (pod: Pod) => void): string {
    const key = `${namespace}/${name}`;
    const current = this.stored.get(key);
    if (current === undefined) throw new Error(`memory pods: no pod ${key}`);
    const next = cloneJson(current);
    change(next);
    return this.commit(key, next);
  }

  remove(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    if (!this.stored.has(key)) throw new Error(`memory pods: no pod ${key}`);
    this.commit(key, undefined);
  }
}

/** What a watch of the scope from `resourceVersion` starts from; none (the watch fails, as the API server refuses it) for a bad selector or version. */
function watchStart(scope: PodScope, resourceVersion: string): { selector: LabelSelector; from: number } | undefined {
  try {
    const from = Number(resourceVersion);
    return Number.isInteger(from) ? { selector: parseSelectorQuery(scope.labelSelector), from } : undefined;
  } catch {
    return undefined;
  }
}

/** A JSON Patch of a stored pod; a failed `test` is a conflict, as the API server answers it. */
function patchPod(pods: StoredPods, namespace: string, name: string, operations: readonly JsonPatchOperation[]): Promise<PodWrite> {
  try {
    return Promise.resolve(pods.write(namespace, name, 'patch', (pod) => applyPatch(pod, operations) as Pod));
  } catch (error) {
    if (error instanceof JsonPatchError && error.opIndex !== undefined && operations[error.opIndex]?.op === 'test') {
      return Promise.reject(new WriteConflictError(`patch pod "${namespace}/${name}": the pod changed since it was read`, { cause: error }));
    }
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

/** The source a reconcile lists and watches the stored pods through. */
function storedPodSource(pods: StoredPods): SetPodSource {
  return {
    list: (scope) => Promise.resolve(pods.list(scope)),
    changed(scope, resourceVersion, ignore, timeoutMs, signal, predicate) {
      const start = watchStart(scope, resourceVersion);
      if (start === undefined) return Promise.resolve('error');
      return waitForSeen(() => pods.seenSince(start.from, scope, start.selector, ignore, predicate), pods.listeners, timeoutMs, signal);
    },
    watch(scope, resourceVersion, sink, signal) {
      const start = watchStart(scope, resourceVersion);
      if (start === undefined) return Promise.resolve('error');
      if (signal.aborted) return Promise.resolve('stopped');
      return pods.follow(start.from, scope, start.selector, sink, signal);
    },
  };
}

/**
 * One cluster's pods in memory: `source` lists and watches them, `writer`
 * patches them. Every change (through the writer or {@link MemoryPods.update})
 * takes the next cluster-wide resourceVersion, and a pending `changed`
 * resolves on the first change in its scope it does not ignore.
 */
export function memoryPods(initial: readonly Pod[] = []): MemoryPods {
  const pods = new StoredPods(initial);
  const writer: PodWriter = {
    patch: (namespace, name, operations) => patchPod(pods, namespace, name, operations),
    patchStatus: (namespace, name, patch) =>
      Promise.resolve(pods.write(namespace, name, 'patch status', (pod) => ({ ...pod, status: mergeStatus(objectOf(pod.status) ?? {}, objectOf(objectOf(patch)?.status) ?? {}) }))),
  };
  return {
    source: storedPodSource(pods),
    writer,
    writes: pods.writes,
    pods: () => [...pods.stored.values()].map((pod) => cloneJson(pod)),
    update: (namespace, name, change) => pods.update(namespace, name, change),
    remove: (namespace, name) => {
      pods.remove(namespace, name);
    },
    resourceVersion: () => String(pods.version),
  };
}
