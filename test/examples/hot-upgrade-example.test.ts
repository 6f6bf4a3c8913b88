/**
 * examples/hot-upgrade/: the SidecarSet passes this project's defaulting and
 * validation as `npm run invoke` runs them, a pod it selects is injected with
 * the two containers and the version variables handover.sh reads, the files
 * agree with each other (the script's path, the shared directory), and the
 * ConfigMap carries handover.sh byte for byte.
 *
 * configmap.yaml is generated from handover.sh: UPDATE_EXAMPLES=1 with this
 * suite rewrites it.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { runCli } from '../../functions/invoke/cli.ts';
import { parseObjects, parseSingleObject } from '../../lib/kube/yaml-objects.ts';
import type { Container, Pod } from '../../lib/kube/types.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet, SidecarSetSpec } from '../../lib/sidecarset/types.ts';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const example = (name: string): string => join(projectRoot, 'examples/hot-upgrade', name);
const script = readFileSync(example('handover.sh'), 'utf8');

/** configmap.yaml as generated from handover.sh. */
function configMapText(): string {
  const header = [
    '# The ConfigMap that delivers handover.sh to the hot-httpd sidecars, in the',
    "# namespace of the pods they are injected into. Generated from handover.sh,",
    '# byte for byte (test/examples/hot-upgrade-example.test.ts checks it); after',
    '# changing the script, regenerate it from the project root with',
    '#   UPDATE_EXAMPLES=1 npm run -s test:unit -- test/examples/hot-upgrade-example.test.ts',
    '# or make the same ConfigMap in a cluster directly with',
    '#   kubectl create configmap handover-script --from-file=examples/hot-upgrade/handover.sh',
  ];
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'handover-script' }, data: { 'handover.sh': script } };
  return `${header.join('\n')}\n${stringify(configMap, { blockQuote: 'literal', lineWidth: 0 })}`;
}

if (process.env.UPDATE_EXAMPLES === '1') writeFileSync(example('configmap.yaml'), configMapText());

/** `npm run invoke` in this process: exit code, standard output and standard error. */
async function invoke(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    readFile: (path) => readFile(path, 'utf8'),
    readStdin: () => Promise.reject(new Error('no standard input here')),
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

const exampleSet = (): SidecarSet => parseSingleObject(readFileSync(example('sidecarset.yaml'), 'utf8'), 'sidecarset.yaml');

/** The set's spec, which the example has. */
function specOf(set: SidecarSet): SidecarSetSpec {
  expect(set.spec).toBeDefined();
  return set.spec!;
}

/** The fields of a container this suite reads. */
type ExampleContainer = Container & { command?: string[]; readinessProbe?: { exec?: { command?: string[] } } };

const exampleSidecar = (): ExampleContainer => {
  const containers = specOf(exampleSet()).containers ?? [];
  expect(containers).toHaveLength(1);
  return containers[0] as ExampleContainer;
};

describe('examples/hot-upgrade', () => {
  it('configmap.yaml is generated from handover.sh and carries it byte for byte', () => {
    const text = readFileSync(example('configmap.yaml'), 'utf8');
    const [configMap] = parseObjects(text, 'configmap.yaml') as [{ kind: string; metadata: { name: string }; data: Record<string, string> }];
    expect(configMap.kind).toBe('ConfigMap');
    expect(Object.keys(configMap.data)).toEqual(['handover.sh']);
    // The script itself first, so that a drift shows as the script's lines.
    expect(configMap.data['handover.sh']).toBe(script);
    expect(text).toBe(configMapText());
  });

  it('sidecarset-validate allows the SidecarSet (defaulted first, as the API server runs the webhooks)', async () => {
    const r = await invoke(['sidecarset-validate', '--event', example('sidecarset.yaml')]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(r.stdout).response).toEqual({ uid: expect.any(String), allowed: true });
  });

  it('sidecarset-default fills in the defaults and keeps the HotUpgrade strategy', async () => {
    const r = await invoke(['sidecarset-default', '-f', example('sidecarset.yaml'), '-o', 'json']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const set = JSON.parse(r.stdout) as SidecarSet;
    expect(set).toEqual(defaultSidecarSet(exampleSet()));
    expect(specOf(set).containers?.[0]?.upgradeStrategy).toEqual({ upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'busybox:1.36.1' });
  });

  it('pod-inject gives pod.yaml the two containers, each with its version variables, the shared directory and the script', async () => {
    const r = await invoke(['pod-inject', '-f', example('pod.yaml'), '--sidecarsets', example('sidecarset.yaml'), '-o', 'json']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const pod = JSON.parse(r.stdout) as Pod;
    const containers = (pod.spec?.containers ?? []) as ExampleContainer[];
    expect(containers.map((c) => [c.name, c.image])).toEqual([
      ['hot-httpd-1', 'busybox:1.37.0'],
      ['hot-httpd-2', 'busybox:1.36.1'],
      ['app', 'busybox:1.37.0'],
    ]);
    const sidecar = exampleSidecar();
    for (const container of containers.slice(0, 2)) {
      const env = container.env ?? [];
      expect(env.slice(-2)).toEqual([
        { name: 'SIDECARSET_VERSION', valueFrom: { fieldRef: { fieldPath: `metadata.annotations['version.sidecarset.kruise.io/${container.name}']` } } },
        { name: 'SIDECARSET_VERSION_ALT', valueFrom: { fieldRef: { fieldPath: `metadata.annotations['versionalt.sidecarset.kruise.io/${container.name}']` } } },
      ]);
      expect(env.find((e) => e.name === 'HANDOVER_DIR')).toEqual({ name: 'HANDOVER_DIR', value: '/var/run/handover' });
      // The empty copy runs the same command and probe: hotUpgradeEmptyImage must be able to.
      expect(container.command).toEqual(sidecar.command);
      expect(container.readinessProbe).toMatchObject({ exec: { command: ['sh', '/opt/handover/handover.sh', 'ready'] } });
      expect(container.volumeMounts).toEqual(sidecar.volumeMounts);
    }
    expect(pod.metadata?.annotations).toMatchObject({
      'version.sidecarset.kruise.io/hot-httpd-1': '1',
      'versionalt.sidecarset.kruise.io/hot-httpd-1': '0',
      'version.sidecarset.kruise.io/hot-httpd-2': '0',
      'versionalt.sidecarset.kruise.io/hot-httpd-2': '1',
      'kruise.io/sidecarset-working-hotupgrade-container': '{"hot-httpd":"hot-httpd-1"}',
    });
    expect(pod.spec?.volumes).toEqual([
      { name: 'hot-httpd-handover-script', configMap: { name: 'handover-script', defaultMode: 420 } },
      { name: 'hot-httpd-handover-state', emptyDir: {} },
    ]);
  });

  it('the files agree: the command runs the script where the ConfigMap is mounted, HANDOVER_DIR is the shared emptyDir', () => {
    const set = exampleSet();
    const sidecar = exampleSidecar();
    const mountOf = (volume: string) => sidecar.volumeMounts?.find((m) => m.name === volume)?.mountPath;
    const volumes = new Map((specOf(set).volumes ?? []).map((v) => [v.name, v]));
    const scriptVolume = [...volumes.values()].find((v) => (v.configMap as { name?: string } | undefined)?.name === 'handover-script');
    expect(scriptVolume).toBeDefined();
    const scriptPath = `${mountOf(scriptVolume!.name)}/handover.sh`;
    expect(sidecar.command?.slice(0, 4)).toEqual(['sh', scriptPath, 'serve', '--']);
    expect(sidecar.readinessProbe?.exec?.command).toEqual(['sh', scriptPath, 'ready']);
    const stateDir = sidecar.env?.find((e) => e.name === 'HANDOVER_DIR')?.value;
    const stateVolume = [...volumes.values()].find((v) => mountOf(v.name) === stateDir);
    expect(stateVolume?.emptyDir).toEqual({});
    // The pod's labels are the ones the set selects.
    const pod = parseSingleObject(readFileSync(example('pod.yaml'), 'utf8'), 'pod.yaml') as Pod;
    expect(pod.metadata?.labels).toMatchObject(specOf(set).selector?.matchLabels ?? { missing: 'selector' });
  });
});
