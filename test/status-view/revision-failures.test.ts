/**
 * The rollout view shows a revision the reconciler cannot write as the set's
 * WHY (state Blocked) while that revision is the one the spec needs and the
 * status does not name it yet; an Event about an older spec, or one whose
 * revision has since been registered, no longer applies.
 */
import { describe, expect, it } from '@jest/globals';
import { currentRevisionName } from '../../lib/sidecarset/revisions.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { podScope } from '../../lib/rollout/pod-scope.ts';
import { scopeKey, viewRows } from '../../lib/status-view/rows.ts';
import { withRevisionFailures, type RevisionFailureEvent } from '../../lib/status-view/revision-failures.ts';
import { rolloutPod, rolloutSet } from '../rollout/fixtures.ts';

const set = rolloutSet();
const pods = [rolloutPod(set, { name: 'p-0' }), rolloutPod(set, { name: 'p-1' })];
const failure = (revision: string, at: string, extra: Partial<RevisionFailureEvent> = {}): RevisionFailureEvent => ({
  uid: 'uid-1',
  name: 'test-sidecarset',
  message: `ControllerRevision kruise-system/${revision} could not be renumbered (a rollback to it), so SidecarSet test-sidecarset updates no pod and writes no status until it is: the API server answered 422: … field is immutable`,
  at,
  ...extra,
});
const rowsWith = (s: SidecarSet, failures: RevisionFailureEvent[]) => withRevisionFailures(viewRows([s], new Map([[scopeKey(podScope(s)!), pods]]), new Map()), [s], failures);

describe('the view and a revision the reconciler cannot write', () => {
  it('shows the newest failure of the revision the spec needs as WHY, state Blocked, instead of pods due for update', () => {
    const before = rowsWith(set, [])[0];
    expect(before?.why).toMatch(/pod\(s\) due for update/);
    const [row] = rowsWith(set, [failure(currentRevisionName(set), '2026-12-01T10:00:00Z', { message: 'ControllerRevision kruise-system/x could not be created: older' }), failure(currentRevisionName(set), '2026-12-01T11:00:00Z')]);
    expect(row).toMatchObject({ name: 'test-sidecarset', state: 'Blocked', rolling: true });
    expect(row?.why).toMatch(/^ControllerRevision kruise-system\/test-sidecarset-\w+ could not be renumbered .* field is immutable$/);
  });

  it('ignores it once the status names the revision, for another spec’s revision, and for another set of the same name (uid)', () => {
    const registered: SidecarSet = { ...set, status: { ...set.status, latestRevision: currentRevisionName(set) } };
    expect(rowsWith(registered, [failure(currentRevisionName(set), '2026-12-01T11:00:00Z')])[0]?.state).not.toBe('Blocked');
    expect(rowsWith(set, [failure('test-sidecarset-older', '2026-12-01T11:00:00Z')])[0]?.state).not.toBe('Blocked');
    expect(rowsWith(set, [failure(currentRevisionName(set), '2026-12-01T11:00:00Z', { uid: 'uid-of-a-deleted-set' })])[0]?.state).not.toBe('Blocked');
  });
});
