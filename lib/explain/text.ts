/**
 * An explanation (explain.ts) as text for a terminal: one block per
 * SidecarSet, its verdict first, then what it injects and where its
 * rollout stands with the pod. `-o json` prints the explanation itself.
 */
import { unavailableText } from '../rollout/batch.ts';
import type { Hold, InjectedParts, PodExplanation, RolloutExplanation, SetExplanation } from './explain.ts';

function partsText(parts: InjectedParts): string[] {
  const lines: string[] = [];
  if (parts.containers.length > 0) lines.push(`containers: ${parts.containers.join(', ')}`);
  if (parts.initContainers.length > 0) lines.push(`init containers: ${parts.initContainers.join(', ')}`);
  if (parts.volumes.length > 0) lines.push(`volumes: ${parts.volumes.join(', ')}`);
  if (parts.revision !== undefined) lines.push(`revision: ${parts.revision}`);
  return lines;
}

/** What holds a pod, in words. */
export function holdText(hold: Hold): string {
  switch (hold.kind) {
    case 'next':
      return 'the next reconcile updates it';
    case 'not-update':
      return 'held: updateStrategy.type is NotUpdate (running pods keep their sidecars)';
    case 'paused':
      return 'held: updateStrategy.paused is true';
    case 'partition':
      return `held by updateStrategy.partition ${JSON.stringify(hold.partition)} (${hold.held} pod(s) held back, this one among them)`;
    case 'max-unavailable':
      return `held by updateStrategy.maxUnavailable ${JSON.stringify(hold.maxUnavailable)}: waiting for ${hold.unavailable} updated pod(s) to become ready${hold.waitingOn === undefined ? '' : ` (${unavailableText(hold.waitingOn)})`}`;
    case 'selector':
      return `held: updateStrategy.selector leaves it out${hold.term === undefined ? '' : ` (${hold.term})`}`;
    case 'not-upgradable':
      return `not upgradable in place: fields other than the image changed since its injection${hold.fields.length > 0 ? ` (${hold.fields.join(', ')})` : ''}; recreate the pod`;
    case 'in-flight':
      return 'held: a ready sidecar still runs an earlier in-place update';
    case 'flipping':
      return 'held: this reconcile finishes hot upgrades of other pods and updates none';
    case 'invalid-strategy':
      return `held: ${hold.message}`;
    case 'later-batch':
      return 'waits for a later batch';
  }
}

function rolloutText(rollout: RolloutExplanation): string[] {
  if (!rollout.matched) return [`rollout: not counted by the set (${rollout.notMatched ?? 'not matched'})`];
  const lines: string[] = [];
  if (rollout.current === true) lines.push('rollout: runs the set\'s current sidecars');
  else lines.push(`rollout: ${rollout.state ?? 'unknown'}${rollout.updated === true ? ' (updated, ' : ' ('}not running the current sidecars yet)${rollout.why === undefined || rollout.why === '' ? '' : `: ${rollout.why}`}`);
  if (rollout.hold !== undefined) lines.push(`  ${holdText(rollout.hold)}`);
  if (rollout.stalled !== undefined) lines.push(`  the set's rollout: ${rollout.stalled}`);
  if (rollout.kubelet !== undefined) lines.push(`  kubelet: ${rollout.kubelet.join('; ')}`);
  return lines;
}

/** Which path injected the pod: a set the policy takes goes to pod-inject until the reconciler recorded its revision, or beside a set that does. */
function injectedByText(by: SetExplanation['injectedBy']): string {
  if (by === undefined) return '';
  return by === 'policy' ? ' by the injection policy' : ' by pod-inject';
}

function setText(set: SetExplanation, live: boolean): string[] {
  const head = set.applies ? `${set.set}: applies` : `${set.set}: does not apply: ${set.why ?? set.verdict.injects}`;
  const lines = [head];
  if (set.path !== undefined) lines.push(`  injection path (where the injection policy is installed): ${set.path.path === 'policy' ? 'the injection policy' : 'pod-inject'}: ${set.path.reason}`);
  if (live && set.injected === true) lines.push(`  injected at creation${injectedByText(set.injectedBy)}${set.applies ? '' : ' (the set would not inject it today)'}`);
  if (live && set.injected === false && set.applies) lines.push('  but the pod carries none of its injection: created before the set, or while the pod webhook was down; recreate the pod');
  if (set.injects !== undefined) {
    const parts = partsText(set.injects);
    lines.push(`  ${live ? 'injected' : 'injects'}: ${parts.length === 0 ? 'nothing' : parts.join('; ')}`);
  }
  if (set.rollout !== undefined) for (const line of rolloutText(set.rollout)) lines.push(`  ${line}`);
  return lines;
}

/** The explanation as text (`live`: a pod read from the cluster, told in the past tense). */
export function explanationText(explanation: PodExplanation, live: boolean): string {
  const lines = [`Pod ${explanation.pod}`];
  if (explanation.problem !== undefined) lines.push(`pod-inject: ${explanation.problem}`);
  if (explanation.sets.length === 0) lines.push('no SidecarSet in the cluster');
  for (const set of explanation.sets) lines.push(...setText(set, live));
  return `${lines.join('\n')}\n`;
}
