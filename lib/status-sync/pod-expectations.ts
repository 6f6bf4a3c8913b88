/**
 * What a requeued set's view of its pods (pod-view.ts) must show before a
 * reconcile may plan from it, as Kruise's `pkg/util/expectations` remembers what
 * its controller wrote until the informer shows it: per pod, the version the
 * loop's own write made (or, for a write refused by its test, a version
 * past the one it tested). Also the versions those writes made, so that the
 * watch telling them is not a change to act on.
 */

/** A resourceVersion as a number to compare, when it is one (etcd's revisions are; other stores may not be). */
export function versionOf(resourceVersion: string | undefined): bigint | undefined {
  return resourceVersion !== undefined && /^\d{1,19}$/.test(resourceVersion) ? BigInt(resourceVersion) : undefined;
}

export class PodExpectations {
  /** Per pod (`namespace/name`), the version the view must show it at (or later). */
  private readonly expected = new Map<string, bigint>();
  /** The versions this loop's writes made. */
  private readonly own = new Set<string>();

  /** The pod must be shown at `version` or later; a later expectation of the same pod replaces an earlier one. */
  expect(key: string, version: bigint): void {
    const before = this.expected.get(key);
    if (before === undefined || before < version) this.expected.set(key, version);
  }

  /** A write of this loop's made `resourceVersion`: the change the watch tells for it is not one to act on. */
  wrote(resourceVersion: string): void {
    this.own.add(resourceVersion);
  }

  /** Whether the change at `resourceVersion` is one of this loop's writes (each is recognised once). */
  observedOwn(resourceVersion: string): boolean {
    return this.own.delete(resourceVersion);
  }

  /** Whether every expectation is met, `shownAt(key)` being the version the view shows a pod at (none: unknown). */
  satisfied(shownAt: (key: string) => bigint | undefined): boolean {
    for (const [key, version] of this.expected) {
      const at = shownAt(key);
      if (at === undefined || at < version) return false;
    }
    return true;
  }

  /**
   * A list at `position` meets the expectations up to it for good; a later one (a deferred write answered
   * after the list, deferred-writes.ts) stays.
   */
  listed(position: bigint): void {
    for (const [key, version] of this.expected) if (version <= position) this.expected.delete(key);
  }

  clear(): void {
    this.expected.clear();
    this.own.clear();
  }
}
