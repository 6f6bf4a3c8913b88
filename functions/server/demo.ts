/**
 * `npm run demo`: the seed's workflow once on the embedded cluster. Creates
 * examples/sidecarset.yaml, then examples/pod.yaml, and shows the injected
 * pod; every step is printed. Everything is removed at the end.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { sidecarSetVersionOf } from '../../lib/conversion/sidecarset-conversion.ts';
import { parseSingleObject } from '../../lib/kube/yaml-objects.ts';
import type { JsonObject, Pod } from '../../lib/kube/types.ts';
import { startLocalStack } from './local-stack.ts';
import { untilInjected } from './until-injected.ts';

const say = (text: string) => process.stdout.write(`${text}\n`);

async function main(): Promise<void> {
  say('1. Starting the embedded cluster and the webhook server (the first run builds etcd and kube-apiserver from Go modules)...');
  const stack = await startLocalStack();
  try {
    say(`   API server ${stack.cp.url}, webhooks on ${stack.serverUrl}`);
    const examples = resolve('examples');
    const set = parseSingleObject(await readFile(join(examples, 'sidecarset.yaml'), 'utf8'), 'examples/sidecarset.yaml');
    say('\n2. Creating the SidecarSet examples/sidecarset.yaml ...');
    // Posted in the example's own version: the API server refuses a body whose
    // apiVersion differs from the URL's, and the example's version may change.
    const version = sidecarSetVersionOf(set.apiVersion);
    if (version === undefined) throw new Error(`examples/sidecarset.yaml: apiVersion ${JSON.stringify(set.apiVersion)} is not apps.kruise.io/v1alpha1 or apps.kruise.io/v1beta1`);
    const created = await stack.cp.request('admin', 'POST', `/apis/apps.kruise.io/${version}/sidecarsets`, set);
    if (created.status !== 201) throw new Error(`creating the SidecarSet: HTTP ${created.status} ${created.body}`);
    const stored = JSON.parse(created.body) as JsonObject & { metadata: { annotations?: Record<string, string> } };
    say('   Stored with its defaults and hash annotations:');
    say(indent(stringify({ annotations: stored.metadata.annotations, spec: stored.spec })));
    const pod = parseSingleObject(await readFile(join(examples, 'pod.yaml'), 'utf8'), 'examples/pod.yaml') as Pod;
    const namespace = pod.metadata?.namespace ?? 'default';
    // pod-inject reads the sets afresh; the injection policy (the default path) sees a new set once the API server's informer has it.
    say('   Waiting until the injection policy sees it (the API server\'s informer of SidecarSets, milliseconds; docs/INJECTION-POLICY.md) ...');
    say(`   Seen after ${await untilInjected((method, path, body) => stack.cp.request('admin', method, path, body), namespace, pod)} ms (a pod created before then would have been created without the sidecar).`);
    say('\n3. Creating the Pod examples/pod.yaml ...');
    const res = await stack.cp.request('admin', 'POST', `/api/v1/namespaces/${namespace}/pods`, pod);
    if (res.status !== 201) throw new Error(`creating the Pod: HTTP ${res.status} ${res.body}`);
    const injected = JSON.parse(res.body) as Pod;
    say(`   Stored with containers: ${injected.spec?.containers.map((c) => c.name).join(', ') ?? ''}`);
    say('\n4. The injected pod:');
    say(indent(stringify({ metadata: { annotations: injected.metadata?.annotations }, spec: { containers: injected.spec?.containers, volumes: injected.spec?.volumes } })));
  } finally {
    say('5. Stopping the embedded cluster.');
    await stack.stop();
  }
}

function indent(text: string): string {
  return text
    .trimEnd()
    .split('\n')
    .map((l) => `     ${l}`)
    .join('\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`demo: ${(error as Error).message}\n`);
  process.exitCode = 1;
});
