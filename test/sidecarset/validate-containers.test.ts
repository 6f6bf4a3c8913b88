import { describe, expect, it } from '@jest/globals';
import { errorsFor, startingWith } from './validate-fixture.ts';

type Row = [string, Record<string, unknown>, string[]];

function check(_name: string, changes: Record<string, unknown>, expected: string[]): void {
  expect(errorsFor(changes)).toEqual(startingWith(expected));
}

describe('rule 5: container names, images, mounts and volumes', () => {
  it.each<Row>([
    ['accepts distinct names across init and normal containers', { 'spec.containers.1.name': 'other' }, []],
    [
      // Kubernetes checks app containers first, so the init container is the duplicate.
      'rejects a container named like an init container, reporting the init container',
      { 'spec.containers.1.name': 'logging-init' },
      ['spec.initContainers[0].name: Duplicate value: "logging-init"'],
    ],
    [
      'rejects two containers with one name',
      { 'spec.containers.1.name': 'logging-agent' },
      ['spec.containers[1].name: Duplicate value: "logging-agent"'],
    ],
    ['accepts a DNS-1123 label as a name', { 'spec.containers.1.name': 'm-2' }, []],
    ['rejects a name that is not a DNS-1123 label', { 'spec.containers.1.name': 'Metrics' }, ['spec.containers[1].name: Invalid value: "Metrics": a lowercase RFC 1123 label']],
    ['requires a name', { 'spec.initContainers.0.name': '' }, ['spec.initContainers[0].name: Required value']],
    ['accepts any image reference', { 'spec.containers.1.image': 'registry.example.com/x@sha256:abc' }, []],
    ['requires an image', { 'spec.containers.1.image': undefined }, ['spec.containers[1].image: Required value']],
    // Kubernetes requires only a non-empty image; one of spaces fails the whitespace rule.
    ['requires an image', { 'spec.initContainers.0.image': '' }, ['spec.initContainers[0].image: Required value']],
    [
      'rejects a blank image as surrounded by spaces',
      { 'spec.initContainers.0.image': '  ' },
      ['spec.initContainers[0].image: Invalid value: "  ": must not have leading or trailing whitespace'],
    ],
    [
      'rejects an image with surrounding spaces',
      { 'spec.containers.1.image': ' x:1' },
      ['spec.containers[1].image: Invalid value: " x:1": must not have leading or trailing whitespace'],
    ],
    ['accepts a mount of a volume in spec.volumes', { 'spec.containers.1.volumeMounts': [{ name: 'logging-logs', mountPath: '/logs' }] }, []],
    [
      'rejects a mount of an undefined volume',
      { 'spec.containers.1.volumeMounts': [{ name: 'missing', mountPath: '/logs' }] },
      ['spec.containers[1].volumeMounts[0].name: Not found: "missing"'],
    ],
    [
      // As in Kubernetes, the empty name is also not a volume's.
      'requires a mount name and path',
      { 'spec.containers.1.volumeMounts': [{ readOnly: true }] },
      [
        'spec.containers[1].volumeMounts[0].name: Required value',
        'spec.containers[1].volumeMounts[0].name: Not found: ""',
        'spec.containers[1].volumeMounts[0].mountPath: Required value',
      ],
    ],
    ['accepts one path mounted by two containers', { 'spec.containers.1.volumeMounts': [{ name: 'logging-logs', mountPath: '/var/log/app' }] }, []],
    [
      'rejects one path mounted twice in a container',
      { 'spec.containers.0.volumeMounts.1.mountPath': '/var/log/app' },
      ['spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/var/log/app": must be unique'],
    ],
    ['accepts distinct volume names', { 'spec.volumes.1.name': 'cfg', 'spec.containers.0.volumeMounts.1.name': 'cfg', 'spec.initContainers.0.volumeMounts.0.name': 'cfg' }, []],
    ['rejects a volume defined twice', { 'spec.volumes.2': { name: 'logging-logs', emptyDir: {} } }, ['spec.volumes[2].name: Duplicate value: "logging-logs"']],
    [
      // A volume with errors is not one a mount may use, as in Kubernetes.
      'rejects a volume name that is not a DNS-1123 label, and its mounts',
      { 'spec.volumes.0.name': 'logs.d', 'spec.containers.0.volumeMounts.0.name': 'logs.d' },
      ['spec.volumes[0].name: Invalid value: "logs.d"', 'spec.containers[0].volumeMounts[0].name: Not found: "logs.d"'],
    ],
    ['requires a volume name', { 'spec.volumes.2': { emptyDir: {} } }, ['spec.volumes[2].name: Required value']],
  ])('%s', check);
});

describe('rule 5: ports', () => {
  const port = 'spec.containers.0.ports.0';
  it.each<Row>([
    ['accepts containerPort 65535 and hostPort 0', { [`${port}.containerPort`]: 65535, [`${port}.hostPort`]: 0 }, []],
    ['requires containerPort', { [`${port}.containerPort`]: 0 }, ['spec.containers[0].ports[0].containerPort: Required value']],
    [
      'rejects containerPort 65536',
      { [`${port}.containerPort`]: 65536 },
      ['spec.containers[0].ports[0].containerPort: Invalid value: 65536: must be between 1 and 65535, inclusive'],
    ],
    ['accepts hostPort 8080', { [`${port}.hostPort`]: 8080 }, []],
    ['rejects hostPort 70000', { [`${port}.hostPort`]: 70000 }, ['spec.containers[0].ports[0].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive']],
    ['rejects a containerPort that is not an integer', { [`${port}.containerPort`]: '80' }, ['spec.containers[0].ports[0].containerPort: Invalid value: "80": must be an integer']],
    ['accepts protocol SCTP', { [`${port}.protocol`]: 'SCTP' }, []],
    ['rejects protocol HTTP', { [`${port}.protocol`]: 'HTTP' }, ['spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"']],
    ['accepts a 15-character IANA service name', { [`${port}.name`]: 'metrics-port-15' }, []],
    ['rejects a 16-character port name', { [`${port}.name`]: 'metrics-port-016' }, ['spec.containers[0].ports[0].name: Invalid value: "metrics-port-016": must be no more than 15 characters']],
    [
      'rejects an upper-case port name',
      { [`${port}.name`]: 'Metrics' },
      ['spec.containers[0].ports[0].name: Invalid value: "Metrics": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'],
    ],
    ['rejects a port name without letters', { [`${port}.name`]: '8080' }, ['spec.containers[0].ports[0].name: Invalid value: "8080": must contain at least one letter (a-z)']],
    ['accepts one port name in two containers', { 'spec.containers.1.ports': [{ name: 'metrics', containerPort: 9102, protocol: 'TCP' }] }, []],
    [
      'rejects one port name twice in a container',
      { 'spec.containers.0.ports.1': { name: 'metrics', containerPort: 2021, protocol: 'TCP' } },
      ['spec.containers[0].ports[1].name: Duplicate value: "metrics"'],
    ],
  ])('%s', check);
});

describe('rule 5: env, probes and policies', () => {
  it.each<Row>([
    ['accepts env names Kubernetes accepts (dots, dashes)', { 'spec.containers.0.env.0.name': 'log.level-1' }, []],
    ['requires an env name', { 'spec.containers.0.env.0.name': '' }, ['spec.containers[0].env[0].name: Required value']],
    ['rejects "=" in an env name', { 'spec.containers.0.env.0.name': 'A=B' }, ['spec.containers[0].env[0].name: Invalid value: "A=B"']],
    ['accepts a probe with one handler', { 'spec.containers.0.livenessProbe.httpGet': undefined, 'spec.containers.0.livenessProbe.tcpSocket': { port: 2020 } }, []],
    [
      'requires a probe handler',
      { 'spec.containers.0.livenessProbe.httpGet': undefined },
      ['spec.containers[0].livenessProbe: Required value: must specify a handler type'],
    ],
    [
      'rejects a probe with two handlers',
      { 'spec.containers.0.readinessProbe.exec': { command: ['true'] } },
      ['spec.containers[0].readinessProbe.httpGet: Forbidden: may not specify more than 1 handler type'],
    ],
    [
      'rejects a negative probe period',
      { 'spec.containers.0.readinessProbe.periodSeconds': -1 },
      ['spec.containers[0].readinessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0'],
    ],
    ['rejects a probe port out of range', { 'spec.containers.0.livenessProbe.httpGet.port': 0 }, ['spec.containers[0].livenessProbe.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive']],
    ['accepts readiness successThreshold 2', { 'spec.containers.0.readinessProbe.successThreshold': 2 }, []],
    ['rejects liveness successThreshold 2', { 'spec.containers.0.livenessProbe.successThreshold': 2 }, ['spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1']],
    [
      'rejects startup successThreshold 2',
      { 'spec.containers.1.startupProbe': { exec: { command: ['true'] }, successThreshold: 2 } },
      ['spec.containers[1].startupProbe.successThreshold: Invalid value: 2: must be 1'],
    ],
    // Issue 15 item 7: nothing defaults a startup probe before the API server does.
    ['accepts an httpGet startupProbe without path or scheme (the API server defaults them)', { 'spec.containers.1.startupProbe': { httpGet: { port: 8080 } } }, []],
    ['accepts an httpGet startupProbe with an empty scheme', { 'spec.containers.1.startupProbe': { httpGet: { path: '/healthz', port: 8080, scheme: '' } } }, []],
    [
      'still rejects an unknown startupProbe scheme',
      { 'spec.containers.1.startupProbe': { httpGet: { path: '/healthz', port: 8080, scheme: 'FTP' } } },
      ['spec.containers[1].startupProbe.httpGet.scheme: Unsupported value: "FTP": supported values: "HTTP", "HTTPS"'],
    ],
    [
      'still requires path and scheme on a liveness probe (defaulting fills them, so missing ones were removed)',
      { 'spec.containers.0.livenessProbe.httpGet': { port: 8080 } },
      ['spec.containers[0].livenessProbe.httpGet.path: Required value', 'spec.containers[0].livenessProbe.httpGet.scheme: Unsupported value: "": supported values: "HTTP", "HTTPS"'],
    ],
    [
      'accepts an httpGet startupProbe without scheme on a native sidecar',
      { 'spec.initContainers.0.restartPolicy': 'Always', 'spec.updateStrategy.type': 'NotUpdate', 'spec.initContainers.0.startupProbe': { httpGet: { path: '/', port: 80 } } },
      [],
    ],
    ['accepts a restartable init container with a probe', { 'spec.initContainers.0.restartPolicy': 'Always', 'spec.updateStrategy.type': 'NotUpdate', 'spec.initContainers.0.startupProbe': { exec: { command: ['true'] } } }, []],
    [
      'rejects a probe on a run-to-completion init container',
      { 'spec.initContainers.0.startupProbe': { exec: { command: ['true'] } } },
      ['spec.initContainers[0].startupProbe: Forbidden: may not be set for init containers without restartPolicy=Always'],
    ],
    ['rejects restartPolicy on a normal container', { 'spec.containers.1.restartPolicy': 'Always' }, ['spec.containers[1].restartPolicy: Forbidden: may not be set for non-init containers']],
    ['rejects an init restartPolicy other than Always', { 'spec.initContainers.0.restartPolicy': 'Never' }, ['spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"']],
    ['accepts imagePullPolicy Never', { 'spec.containers.0.imagePullPolicy': 'Never' }, []],
    [
      'rejects an unknown imagePullPolicy',
      { 'spec.containers.0.imagePullPolicy': 'Sometimes' },
      ['spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"'],
    ],
    ['accepts terminationMessagePolicy FallbackToLogsOnError', { 'spec.containers.0.terminationMessagePolicy': 'FallbackToLogsOnError' }, []],
    [
      'rejects an unknown terminationMessagePolicy',
      { 'spec.containers.0.terminationMessagePolicy': 'Stdout' },
      ['spec.containers[0].terminationMessagePolicy: Unsupported value: "Stdout": supported values: "File", "FallbackToLogsOnError"'],
    ],
  ])('%s', check);
});

describe('rule 5: resources', () => {
  const res = 'spec.containers.0.resources';
  it.each<Row>([
    ['accepts requests equal to limits, in other units', { [`${res}.requests.cpu`]: '1000m', [`${res}.requests.memory`]: '134217728' }, []],
    ['accepts requests without limits', { [`${res}.limits`]: undefined }, []],
    ['accepts an extended resource with a domain', { [`${res}.limits`]: { 'example.com/gpu': '1' } }, []],
    [
      'rejects a request above its limit',
      { [`${res}.requests.memory`]: '1Gi' },
      // Kubernetes reports this on the requests map, not on the entry.
      ['spec.containers[0].resources.requests: Invalid value: "1Gi": must be less than or equal to memory limit of 128Mi'],
    ],
    [
      'rejects a quantity that does not parse',
      { [`${res}.limits.cpu`]: 'lots' },
      ['spec.containers[0].resources.limits[cpu]: Invalid value: "lots": quantities must match the regular expression'],
    ],
    ['rejects a negative quantity', { [`${res}.requests.cpu`]: '-1' }, ['spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0']],
    [
      'rejects an unknown resource without a domain',
      { [`${res}.limits.gpu`]: '1' },
      [
        'spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified',
        'spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource for containers',
      ],
    ],
    [
      'rejects a quota resource in a container',
      { [`${res}.limits.pods`]: '1' },
      ['spec.containers[0].resources.limits[pods]: Invalid value: "pods": must be a standard resource for containers'],
    ],
    ['rejects a fraction of a vendor resource', { [`${res}.limits`]: { 'example.com/gpu': '500m' } }, ['spec.containers[0].resources.limits[example.com/gpu]: Invalid value: "500m": must be an integer']],
    [
      'requires a limit for a vendor resource',
      { [`${res}.requests`]: { 'example.com/gpu': '1' } },
      ['spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources'],
    ],
    [
      'requires a vendor request to equal its limit',
      { [`${res}.requests`]: { 'example.com/gpu': '1' }, [`${res}.limits`]: { 'example.com/gpu': '2' } },
      ['spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2'],
    ],
    [
      'requires cpu or memory beside hugepages',
      { [res]: { limits: { 'hugepages-2Mi': '4Mi' }, requests: { 'hugepages-2Mi': '4Mi' } } },
      ['spec.containers[0].resources: Forbidden: HugePages require cpu or memory'],
    ],
    [
      'rejects a resource claim (the pod Kruise validates in has none)',
      { [`${res}.claims`]: [{ name: 'gpu' }] },
      ['spec.containers[0].resources.claims[0]: Not found: "gpu": must be one of the names in pod.spec.resourceClaims which is empty'],
    ],
  ])('%s', check);
});

describe('rule 6: SidecarContainer policies', () => {
  it.each<Row>([
    ['accepts AfterAppContainer', { 'spec.containers.0.podInjectPolicy': 'AfterAppContainer' }, []],
    [
      'rejects an unknown podInjectPolicy',
      { 'spec.containers.0.podInjectPolicy': 'Sideways' },
      ['spec.containers[0].podInjectPolicy: Unsupported value: "Sideways": supported values: "BeforeAppContainer", "AfterAppContainer"'],
    ],
    [
      'rejects an unset podInjectPolicy (the defaulting webhook sets one)',
      { 'spec.containers.0.podInjectPolicy': undefined },
      ['spec.containers[0].podInjectPolicy: Unsupported value: ""'],
    ],
    ['accepts shareVolumePolicy enabled', { 'spec.containers.0.shareVolumePolicy.type': 'enabled' }, []],
    [
      'rejects a capitalised shareVolumePolicy',
      { 'spec.containers.0.shareVolumePolicy.type': 'Enabled' },
      ['spec.containers[0].shareVolumePolicy.type: Unsupported value: "Enabled": supported values: "enabled", "disabled"'],
    ],
    [
      'accepts upgradeType HotUpgrade with an empty image',
      { 'spec.containers.0.upgradeStrategy': { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } },
      [],
    ],
    [
      'requires hotUpgradeEmptyImage for HotUpgrade (Kruise does not, and its pods are then refused)',
      { 'spec.containers.0.upgradeStrategy.upgradeType': 'HotUpgrade' },
      ['spec.containers[0].upgradeStrategy.hotUpgradeEmptyImage: Required value: a HotUpgrade sidecar needs the image of its idle copy'],
    ],
    [
      'requires a non-empty hotUpgradeEmptyImage',
      { 'spec.containers.0.upgradeStrategy': { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: '' } },
      ['spec.containers[0].upgradeStrategy.hotUpgradeEmptyImage: Required value: a HotUpgrade sidecar needs the image of its idle copy'],
    ],
    [
      'reports a hotUpgradeEmptyImage that is not text once',
      { 'spec.containers.0.upgradeStrategy': { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 5 } },
      ['spec.containers[0].upgradeStrategy.hotUpgradeEmptyImage: Invalid value: 5: must be a string'],
    ],
    [
      'requires hotUpgradeEmptyImage for a HotUpgrade native init sidecar',
      { 'spec.updateStrategy.type': 'NotUpdate', 'spec.initContainers.0.restartPolicy': 'Always', 'spec.initContainers.0.upgradeStrategy.upgradeType': 'HotUpgrade' },
      ['spec.initContainers[0].upgradeStrategy.hotUpgradeEmptyImage: Required value: a HotUpgrade sidecar needs the image of its idle copy'],
    ],
    ['does not need hotUpgradeEmptyImage on a plain init container, which is injected as written', { 'spec.initContainers.0.upgradeStrategy.upgradeType': 'HotUpgrade' }, []],
    ['ignores hotUpgradeEmptyImage for ColdUpgrade', { 'spec.containers.0.upgradeStrategy.hotUpgradeEmptyImage': 'empty:1' }, []],
    [
      'rejects an unknown upgradeType',
      { 'spec.containers.0.upgradeStrategy.upgradeType': 'WarmUpgrade' },
      ['spec.containers[0].upgradeStrategy.upgradeType: Unsupported value: "WarmUpgrade": supported values: "ColdUpgrade", "HotUpgrade"'],
    ],
  ])('%s', check);
});

describe('rule 7: transferEnv fieldRef', () => {
  const ref = 'spec.containers.0.transferEnv.1.sourceContainerNameFrom.fieldRef';
  const refPath = 'spec.containers[0].transferEnv[1].sourceContainerNameFrom.fieldRef';
  it.each<Row>([
    ['accepts an annotation key', { [`${ref}.fieldPath`]: "metadata.annotations['example.com/Sidecar-Source']" }, []],
    ['requires a fieldPath', { [`${ref}.fieldPath`]: undefined }, [`${refPath}.fieldPath: Required value`]],
    [
      'rejects a field without a subscript',
      { [`${ref}.fieldPath`]: 'metadata.name' },
      [`${refPath}.fieldPath: Invalid value: "metadata.name": must be metadata.labels['<key>'] or metadata.annotations['<key>']`],
    ],
    ['rejects another subscripted field', { [`${ref}.fieldPath`]: "spec.nodeSelector['zone']" }, [`${refPath}.fieldPath: Invalid value: "spec.nodeSelector['zone']": field path not supported: spec.nodeSelector`]],
    ['rejects a label key that is not a qualified name', { [`${ref}.fieldPath`]: "metadata.labels['-app']" }, [`${refPath}.fieldPath: Invalid value: "metadata.labels['-app']": name part must consist of`]],
    ['rejects an apiVersion other than v1', { [`${ref}.apiVersion`]: 'v2' }, [`${refPath}.apiVersion: Unsupported value: "v2": supported values: "v1"`]],
  ])('%s', check);
});
