/** `npm run manifests -- --help` says what is rendered and what each option does, not only the usage line. */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MANIFESTS_HELP, MANIFESTS_USAGE } from '../../functions/render-manifests/main.ts';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Every option the usage line names. */
const usageOptions = [...new Set(MANIFESTS_USAGE.match(/--[a-z-]+/g) ?? [])];

describe('manifests --help', () => {
  it('prints the usage, what is rendered, and a line for every option the usage names, and exits 0', () => {
    const run = spawnSync(process.execPath, [join(projectRoot, 'functions/render-manifests/main.ts'), '--help'], { cwd: projectRoot, encoding: 'utf8' });
    expect({ code: run.status, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout).toBe(`${MANIFESTS_HELP}\n`);
    expect(run.stdout.startsWith(MANIFESTS_USAGE)).toBe(true);
    for (const what of ['SidecarSet CRD', 'RBAC', 'ValidatingAdmissionPolicy', 'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'kubectl apply --server-side']) expect(run.stdout).toContain(what);
    expect(usageOptions.length).toBeGreaterThan(10);
    for (const option of usageOptions) expect(run.stdout).toMatch(new RegExp(`^  ${option} \\S+.*\\S|^  ${option}\\s{2,}\\S`, 'm'));
  });
});
