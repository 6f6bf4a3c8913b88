/** The preflight's report as text: what was found, then what blocks, then the next step. */
import type { MigrationReport } from './assess.ts';

function entryLine(e: MigrationReport['kruise']['entries'][number]): string {
  const state = e.active ? 'active' : e.returns ? 'removed, but the manager puts it back from the template within a minute' : e.inTemplate ? 'only in the template (the manager is stopped or its handler is off)' : 'absent';
  return `  ${e.configuration} ${e.name} (${e.kind}): ${state}`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What runs of Kruise: its manager, its controller and webhook handler, its webhook entries. */
function kruiseLines(kruise: MigrationReport['kruise']): string[] {
  const lines: string[] = [];
  const { manager } = kruise;
  if (manager === undefined) lines.push(`Kruise: no manager Deployment kruise-controller-manager in ${kruise.namespace}`);
  else {
    const version = manager.version?.text ?? 'unknown';
    lines.push(`Kruise: ${version}${kruise.line === undefined ? '' : ` (the ${kruise.line} line)`}, image ${manager.image ?? '(none)'}, ${manager.readyReplicas}/${manager.replicas} replicas ready in ${kruise.namespace}`);
    lines.push(`  SidecarSet controller: ${kruise.controllerActive ? 'active (no flag turns it off alone)' : 'stopped'}; pod webhook handler: ${manager.podWebhook ? 'registered' : 'off (PodWebhook=false)'}`);
  }
  if (kruise.entries.length === 0) lines.push('  no SidecarSet or pod-injection entry in its webhook configurations');
  for (const e of kruise.entries) lines.push(entryLine(e));
  return lines;
}

/** Each SidecarSet's counts, revisions and what a reconcile would do now. */
function setLines(report: MigrationReport): string[] {
  const lines = [`SidecarSets: ${report.sets.length}${report.crd === undefined ? '' : ` (objects may be stored as ${report.crd.storedVersions.join(' or ') || 'v1alpha1'}; the API does not say which per object)`}`];
  for (const set of report.sets) {
    const counts = set.counts === undefined ? 'counts unknown' : `matched ${set.counts.matchedPods}, updated ${set.counts.updatedPods}, ready ${set.counts.readyPods}`;
    const revisions = Object.entries(set.revisionsIn).map(([ns, n]) => `${n} in ${ns}`).join(', ') || 'none';
    lines.push(`  ${set.name}: ${counts}; ${set.why}`);
    lines.push(`    latestRevision ${set.latestRevision ?? '(none)'}; revisions ${revisions}; a reconcile now updates ${plural(set.wouldUpdate.length, 'pod')} and flips ${set.wouldFlip.length}`);
  }
  return lines;
}

export function formatReport(report: MigrationReport): string {
  const lines = kruiseLines(report.kruise);
  const ours = [report.ours.sidecarSetDefault && 'sidecarset-default', report.ours.sidecarSetValidate && 'sidecarset-validate', report.ours.podInject && 'pod-inject'].filter(Boolean);
  lines.push(`This project's webhooks: ${ours.length === 0 ? 'not installed' : ours.join(', ')}`);
  if (report.crd === undefined) lines.push('SidecarSet CRD: not installed');
  else {
    lines.push(
      `SidecarSet CRD: ${report.crd.ours ? "this project's" : "Kruise's"}; serves ${report.crd.served.join(', ') || 'nothing'}, stores ${report.crd.storage ?? 'nothing'}; storedVersions ${report.crd.storedVersions.join(', ') || '(none)'}${report.crd.conversionWebhook ? (report.crd.ours ? '; conversion through sidecarset-convert' : '; conversion through Kruise’s webhook') : ''}`,
    );
  }
  lines.push(...setLines(report));
  const where = Object.entries(report.revisionNamespaces).map(([ns, n]) => `${n} in ${ns}`).join(', ');
  lines.push(`ControllerRevisions of SidecarSets: ${where || 'none'}; this project reads and writes them in ${report.revisionNamespace}`);
  lines.push(`Pods with SidecarSet annotations it cannot read: ${report.unrecognisedPods.length}`);
  for (const p of report.unrecognisedPods.slice(0, 10)) lines.push(`  ${p.pod}: ${p.detail}`);
  if (report.unrecognisedPods.length > 10) lines.push(`  … and ${report.unrecognisedPods.length - 10} more`);
  const restarts = report.sets.reduce((n, s) => n + s.wouldUpdate.length + s.wouldFlip.length, 0);
  lines.push(`A switch now would restart ${restarts === 0 ? 'no pod' : plural(restarts, 'pod')}${report.unrecognisedPods.length > 0 ? ` (and ${plural(report.unrecognisedPods.length, 'pod')} whose annotations it cannot read, once a rollout reaches them)` : ''}`);
  for (const note of report.notes) lines.push(`note: ${note}`);
  if (report.blockers.length === 0) lines.push('READY');
  else {
    lines.push('NOT READY:');
    for (const b of report.blockers) lines.push(`  - ${b}`);
  }
  lines.push(`Next: step ${report.next.step} of docs/MIGRATION.md: ${report.next.text}`);
  return `${lines.join('\n')}\n`;
}
