import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { goJsonString, marshalGo, SIDECAR_CONTAINER, SIDECAR_CONTAINER_LIST } from '../../lib/sidecarset/go-json.ts';

// Every expected string was printed by Go: kruise-api v1.8.0 apps/v1alpha1
// SidecarContainer decoded with sigs.k8s.io/json (as Kruise's admission
// decoder does) and written with encoding/json's json.Marshal, built against
// k8s.io/api v0.30.10 (Kruise v1.8) or v0.37.2 (the newer fields).

/** Input keys deliberately in reverse Go order: output order must come from the Go struct. */
const richContainer = {
  transferEnv: [
    { envNames: ['A'], envName: 'B', sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.labels['app']", apiVersion: 'v1' } }, sourceContainerName: 'main' },
  ],
  shareVolumePolicy: { type: 'enabled' },
  upgradeStrategy: { hotUpgradeEmptyImage: 'empty:1', upgradeType: 'HotUpgrade' },
  podInjectPolicy: 'AfterAppContainer',
  tty: true,
  stdinOnce: true,
  stdin: true,
  securityContext: {
    appArmorProfile: { type: 'RuntimeDefault' },
    seccompProfile: { localhostProfile: 'p.json', type: 'Localhost' },
    procMount: 'Default',
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    runAsGroup: 2000,
    runAsUser: 1000,
    windowsOptions: { hostProcess: false, runAsUserName: 'u', gmsaCredentialSpec: 's', gmsaCredentialSpecName: 'n' },
    seLinuxOptions: { level: 'l', type: 't', role: 'r', user: 'u' },
    privileged: false,
    capabilities: { drop: ['ALL'], add: ['NET_ADMIN'] },
  },
  imagePullPolicy: 'IfNotPresent',
  terminationMessagePolicy: 'File',
  terminationMessagePath: '/dev/termination-log',
  lifecycle: { preStop: { sleep: { seconds: 5 } }, postStart: { exec: { command: ['sh', '-c', 'echo'] } } },
  startupProbe: { grpc: { service: 'health', port: 9090 } },
  readinessProbe: { tcpSocket: { host: 'h', port: 'http' } },
  livenessProbe: {
    terminationGracePeriodSeconds: 30,
    failureThreshold: 3,
    successThreshold: 1,
    periodSeconds: 10,
    timeoutSeconds: 1,
    initialDelaySeconds: 5,
    httpGet: { httpHeaders: [{ value: 'v', name: 'X-H' }], scheme: 'HTTP', host: 'localhost', port: 8080, path: '/healthz' },
  },
  volumeDevices: [{ devicePath: '/dev/xvda', name: 'dev' }],
  volumeMounts: [
    { subPathExpr: '$(POD)', mountPropagation: 'HostToContainer', subPath: 's', mountPath: '/data', recursiveReadOnly: 'Disabled', readOnly: true, name: 'data' },
  ],
  restartPolicy: 'Always',
  resizePolicy: [{ restartPolicy: 'NotRequired', resourceName: 'cpu' }],
  resources: { claims: [{ name: 'gpu' }], requests: { memory: '1024Mi', cpu: '0.5' }, limits: { memory: '1.5Gi', cpu: '1000m' } },
  env: [
    {
      valueFrom: {
        secretKeyRef: { optional: true, key: 'k', name: 's' },
        configMapKeyRef: { key: 'k', name: 'c' },
        resourceFieldRef: { divisor: '1Mi', resource: 'limits.memory', containerName: 'main' },
        fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' },
      },
      value: 'x',
      name: 'E',
    },
  ],
  envFrom: [{ secretRef: { optional: false, name: 's' }, configMapRef: { name: 'c' }, prefix: 'P_' }],
  ports: [{ hostIP: '0.0.0.0', protocol: 'TCP', containerPort: 80, hostPort: 8080, name: 'http' }],
  workingDir: '/w',
  args: ['--a'],
  command: ['/bin/app'],
  image: 'app:1',
  name: 'sidecar',
};

/** Fields added after Kubernetes 1.30, which Kruise v1.8's Go types do not know. */
const newerFields = {
  name: 'c',
  restartPolicyRules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }],
  lifecycle: { stopSignal: 'SIGTERM', preStop: { exec: { command: ['x'] } } },
  resources: { claims: [{ name: 'g', request: 'r' }] },
  env: [{ name: 'F', valueFrom: { fileKeyRef: { volumeName: 'v', path: 'p', key: 'k' } } }],
  volumeMounts: [{ name: 'v', mountPath: '/m', bindMountOptions: ['ro'] }],
  readinessProbe: { httpGet: { port: 1, protocol: 'HTTP2' }, grpc: { port: 2, mode: 'x' } },
};

describe('marshalGo(SIDECAR_CONTAINER) writes what Go writes for Kruise v1.8', () => {
  it.each<[string, unknown, string]>([
    [
      'keys of a rich container come in Go struct order, nested types included',
      richContainer,
      '{"name":"sidecar",' +
      '"image":"app:1",' +
      '"command":["/bin/app"],' +
      '"args":["--a"],' +
      '"workingDir":"/w",' +
      '"ports":[{"name":"http","hostPort":8080,"containerPort":80,"protocol":"TCP","hostIP":"0.0.0.0"}],' +
      '"envFrom":[{"prefix":"P_","configMapRef":{"name":"c"},"secretRef":{"name":"s","optional":false}}],' +
      '"env":[{"name":"E","value":"x","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"},"resourceFieldRef":{"containerName":"main","resource":"limits.memory","divisor":"1Mi"},"configMapKeyRef":{"name":"c","key":"k"},"secretKeyRef":{"name":"s","key":"k","optional":true}}}],' +
      '"resources":{"limits":{"cpu":"1","memory":"1536Mi"},"requests":{"cpu":"500m","memory":"1Gi"},"claims":[{"name":"gpu"}]},' +
      '"resizePolicy":[{"resourceName":"cpu","restartPolicy":"NotRequired"}],' +
      '"restartPolicy":"Always",' +
      '"volumeMounts":[{"name":"data","readOnly":true,"recursiveReadOnly":"Disabled","mountPath":"/data","subPath":"s","mountPropagation":"HostToContainer","subPathExpr":"$(POD)"}],' +
      '"volumeDevices":[{"name":"dev","devicePath":"/dev/xvda"}],' +
      '"livenessProbe":{"httpGet":{"path":"/healthz","port":8080,"host":"localhost","scheme":"HTTP","httpHeaders":[{"name":"X-H","value":"v"}]},"initialDelaySeconds":5,"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3,"terminationGracePeriodSeconds":30},' +
      '"readinessProbe":{"tcpSocket":{"port":"http","host":"h"}},' +
      '"startupProbe":{"grpc":{"port":9090,"service":"health"}},' +
      '"lifecycle":{"postStart":{"exec":{"command":["sh","-c","echo"]}},"preStop":{"sleep":{"seconds":5}}},' +
      '"terminationMessagePath":"/dev/termination-log",' +
      '"terminationMessagePolicy":"File",' +
      '"imagePullPolicy":"IfNotPresent",' +
      '"securityContext":{"capabilities":{"add":["NET_ADMIN"],"drop":["ALL"]},"privileged":false,"seLinuxOptions":{"user":"u","role":"r","type":"t","level":"l"},"windowsOptions":{"gmsaCredentialSpecName":"n","gmsaCredentialSpec":"s","runAsUserName":"u","hostProcess":false},"runAsUser":1000,"runAsGroup":2000,"runAsNonRoot":true,"readOnlyRootFilesystem":true,"allowPrivilegeEscalation":false,"procMount":"Default","seccompProfile":{"type":"Localhost","localhostProfile":"p.json"},"appArmorProfile":{"type":"RuntimeDefault"}},' +
      '"stdin":true,' +
      '"stdinOnce":true,' +
      '"tty":true,' +
      '"podInjectPolicy":"AfterAppContainer",' +
      '"upgradeStrategy":{"upgradeType":"HotUpgrade","hotUpgradeEmptyImage":"empty:1"},' +
      '"shareVolumePolicy":{"type":"enabled"},' +
      '"transferEnv":[{"sourceContainerName":"main","sourceContainerNameFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.labels[\'app\']"}},"envName":"B","envNames":["A"]}]}',
    ],
    [
      'omitempty drops zero scalars but pointers, required fields and structs are written',
      {
        name: '',
        stdin: false,
        ports: [{ containerPort: 0, hostPort: 0 }],
        env: [{ name: 'E', value: '' }],
        securityContext: { runAsUser: 0, privileged: false, capabilities: {} },
        readinessProbe: { grpc: { port: 0 } },
        livenessProbe: { httpGet: {} },
        lifecycle: {},
        command: [],
        resources: { limits: {} },
        upgradeStrategy: { upgradeType: '' },
      },
      '{"name":"",' +
      '"ports":[{"containerPort":0}],' +
      '"env":[{"name":"E"}],' +
      '"resources":{},' +
      '"livenessProbe":{"httpGet":{"port":0}},' +
      '"readinessProbe":{"grpc":{"port":0,"service":null}},' +
      '"lifecycle":{},' +
      '"securityContext":{"capabilities":{},"privileged":false,"runAsUser":0},' +
      '"upgradeStrategy":{},' +
      '"shareVolumePolicy":{}}',
    ],
    [
      'strings are escaped as Go escapes them (HTML-safe, U+2028/U+2029, \\b and \\f)',
      { name: '<a> & "b" \\ \u2028\u2029 \b\f\n\r\t\u0001\u001f\u007F \u00E9 \u{1F600}', image: 'x&y' },
      '{"name":"\\u003ca\\u003e \\u0026 \\"b\\" \\\\ \\u2028\\u2029 \\b\\f\\n\\r\\t\\u0001\\u001f\u007F \u00E9 \u{1F600}",' +
      '"image":"x\\u0026y",' +
      '"resources":{},' +
      '"upgradeStrategy":{},' +
      '"shareVolumePolicy":{}}',
    ],
    [
      'unknown keys are dropped, and keys match case-sensitively',
      { name: 'c', image: 'i', Image: 'other', unknownField: { a: 1 }, ports: [{ containerPort: 80, extra: true }] },
      '{"name":"c",' +
      '"image":"i",' +
      '"ports":[{"containerPort":80}],' +
      '"resources":{},' +
      '"upgradeStrategy":{},' +
      '"shareVolumePolicy":{}}',
    ],
    [
      'map keys are sorted by UTF-8 bytes, not UTF-16 units',
      {
        name: 'c',
        resources: {
          limits: { memory: '1Gi', cpu: '1', 'example.com/z': '1', 'example.com/a': '2', '\u{1F600}': '3', '\uE000': '4', B: '5' },
        },
      },
      '{"name":"c",' +
      '"resources":{"limits":{"B":"5","cpu":"1","example.com/a":"2","example.com/z":"1","memory":"1Gi","\uE000":"4","\u{1F600}":"3"}},' +
      '"upgradeStrategy":{},' +
      '"shareVolumePolicy":{}}',
    ],
    [
      'quantities are printed in Go canonical form and an unset divisor is "0"',
      {
        name: 'c',
        resources: {
          limits: { a: '0.1', b: '1e3', c: '+1', d: 2, e: 0.25, f: ' 100M ' },
          requests: { a: '1000', b: '12.345', c: '16Ei' },
        },
        env: [{ name: 'E', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } }],
      },
      '{"name":"c",' +
      '"env":[{"name":"E","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":"0"}}}],' +
      '"resources":{"limits":{"a":"100m","b":"1e3","c":"+1","d":"2","e":"250m","f":"100M"},"requests":{"a":"1k","b":"12.345","c":"9223372036854775807"}},' +
      '"upgradeStrategy":{},' +
      '"shareVolumePolicy":{}}',
    ],
    [
      'the embedded probe handler comes first, IntOrString ports keep their type',
      {
        name: 'c',
        livenessProbe: {
          periodSeconds: 3,
          initialDelaySeconds: 1,
          grpc: { port: 1 },
          tcpSocket: { port: 2 },
          httpGet: { port: 'web' },
          exec: { command: ['true'] },
        },
      },
      '{"name":"c",' +
      '"resources":{},' +
      '"livenessProbe":{"exec":{"command":["true"]},"httpGet":{"port":"web"},"tcpSocket":{"port":2},"grpc":{"port":1,"service":null},"initialDelaySeconds":1,"periodSeconds":3},' +
      '"upgradeStrategy":{},' +
      '"shareVolumePolicy":{}}',
    ],
    [
      'values of the wrong type are zero, and a mistyped pointer is still allocated',
      {
        name: 5,
        image: 'i',
        command: 'x',
        ports: [5, { containerPort: 1.5 }],
        securityContext: { runAsUser: 'x', privileged: 'yes' },
        livenessProbe: 'probe',
        stdin: 'true',
        resources: [],
        env: [{ name: 'E', value: 1 }],
      },
      '{"name":"",' +
      '"image":"i",' +
      '"ports":[{"containerPort":0},{"containerPort":0}],' +
      '"env":[{"name":"E"}],' +
      '"resources":{},' +
      '"livenessProbe":{},' +
      '"securityContext":{"privileged":false,"runAsUser":0},' +
      '"upgradeStrategy":{},' +
      '"shareVolumePolicy":{}}',
    ],
    [
      'fields newer than Kubernetes 1.30 are unknown to Kruise v1.8 and dropped',
      newerFields,
      '{"name":"c",' +
      '"env":[{"name":"F","valueFrom":{}}],' +
      '"resources":{"claims":[{"name":"g"}]},' +
      '"volumeMounts":[{"name":"v","mountPath":"/m"}],' +
      '"readinessProbe":{"httpGet":{"port":1},"grpc":{"port":2,"service":null}},' +
      '"lifecycle":{"preStop":{"exec":{"command":["x"]}}},' +
      '"upgradeStrategy":{},' +
      '"shareVolumePolicy":{}}',
    ],
  ])('%s', (_name, input, expected) => {
    expect(marshalGo(SIDECAR_CONTAINER, input)).toBe(expected);
  });

  it('keeps the newer fields, in Go order, for a program built with k8s.io/api v0.37', () => {
    expect(marshalGo(SIDECAR_CONTAINER, newerFields, { kubernetesMinor: 37 })).toBe(
      '{"name":"c",' +
      '"env":[{"name":"F","valueFrom":{"fileKeyRef":{"volumeName":"v","path":"p","key":"k"}}}],' +
      '"resources":{"claims":[{"name":"g","request":"r"}]},' +
      '"restartPolicyRules":[{"action":"Restart","exitCodes":{"operator":"In","values":[42]}}],' +
      '"volumeMounts":[{"name":"v","mountPath":"/m","bindMountOptions":["ro"]}],' +
      '"readinessProbe":{"httpGet":{"port":1,"protocol":"HTTP2"},"grpc":{"port":2,"service":null,"mode":"x"}},' +
      '"lifecycle":{"preStop":{"exec":{"command":["x"]}},"stopSignal":"SIGTERM"},' +
      '"upgradeStrategy":{},' +
      '"shareVolumePolicy":{}}',
    );
  });
});

describe('marshalGo(SIDECAR_CONTAINER_LIST) on untrusted input', () => {
  it.each<[string, unknown, string]>([
    ['absent is a nil slice', undefined, 'null'],
    ['null is a nil slice', null, 'null'],
    ['an empty array is an empty slice', [], '[]'],
    ['an object is a type error, so a nil slice', {}, 'null'],
    [
      'elements of the wrong type are zero containers',
      [null, 5],
      '[{"name":"","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}},' +
        '{"name":"","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]',
    ],
    [
      'null fields are absent',
      [{ name: 'a', ports: null, securityContext: null, resources: null, env: [{ name: 'x', valueFrom: null }] }],
      '[{"name":"a","env":[{"name":"x"}],"resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]',
    ],
    [
      'a lone surrogate becomes U+FFFD, as Go decodes it',
      [{ name: '\uD800x' }],
      '[{"name":"\uFFFDx","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]',
    ],
  ])('%s', (_name, input, expected) => {
    expect(marshalGo(SIDECAR_CONTAINER_LIST, input)).toBe(expected);
  });
});

describe('goJsonString', () => {
  it.each([
    ['escapes < for HTML safety', '<', '"\\u003c"'],
    ['escapes > for HTML safety', '>', '"\\u003e"'],
    ['escapes & for HTML safety', '&', '"\\u0026"'],
    ['escapes the line separator U+2028', '\u2028', '"\\u2028"'],
    ['escapes the paragraph separator U+2029', '\u2029', '"\\u2029"'],
    ['writes backspace short (Go 1.22+)', '\b', '"\\b"'],
    ['writes form feed short (Go 1.22+)', '\f', '"\\f"'],
    ['writes NUL as \\u0000', '\u0000', '"\\u0000"'],
    ['writes other control characters in lower-case hex', '\u001B', '"\\u001b"'],
    ['leaves DEL raw', '\u007F', '"\u007F"'],
    ['escapes quote and backslash', '"\\', '"\\"\\\\"'],
    ['leaves other Unicode raw', '\u00E9\u{1F600}', '"\u00E9\u{1F600}"'],
    ['writes a lone high surrogate as U+FFFD', 'a\uD800b', '"a\uFFFDb"'],
    ['writes a lone low surrogate as U+FFFD', '\uDC00\uD83D\uDE00\uDE00', '"\uFFFD\u{1F600}\uFFFD"'],
    ['writes a high surrogate at the end as U+FFFD', '<\uD83D', '"\\u003c\uFFFD"'],
  ])('%s', (_name, input, expected) => {
    expect(goJsonString(input)).toBe(expected);
  });

  /** What Go writes, the slow way: lone surrogates replaced, then one escape per character. */
  function reference(s: string): string {
    const wellFormed = s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
    const short: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
    // eslint-disable-next-line no-control-regex -- control characters are what must be escaped
    return `"${wellFormed.replace(/["\\\u0000-\u001f<>&\u2028\u2029]/g, (c) => short[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
  }

  it('matches the character-by-character definition on any string', () => {
    const awkward = fc.constantFrom('<', '>', '&', '"', '\\', '\u2028', '\u2029', '\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\uD83D\uDE00', '\u0000', '\u001f', '\n', 'a', '\u00e9');
    const text = fc.oneof(fc.string({ unit: 'binary' }), fc.array(awkward, { maxLength: 40 }).map((parts) => parts.join('')));
    fc.assert(
      fc.property(text, (s) => {
        expect(goJsonString(s)).toBe(reference(s));
      }),
      { numRuns: 2000 },
    );
  });
});
