/**
 * `spec.volumes` and the mounts that use them, as Kruise 1.8 gets them
 * checked by Kubernetes 1.30's ValidateVolumes and ValidateVolumeMounts
 * (issue 15 items 4-5): whole messages, byte for byte.
 */
import { describe, expect, it } from '@jest/globals';
import { errorsFor } from './validate-fixture.ts';

type Row = [string, Record<string, unknown>, string[]];
const vol = 'spec.volumes.0';
// The fixture's first container mounts spec.volumes[0] at volumeMounts[0].
const mountGone = 'spec.containers[0].volumeMounts[0].name: Not found: "logging-logs"';

describe('volume sources (issue 15 items 4-5)', () => {
  it.each<Row>([
    [
      'item 4: rejects two sources, and the volume is then unknown to its mounts',
      { [`${vol}.hostPath`]: { path: '/x' } },
      ['spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type', mountGone],
    ],
    [
      'reports the Kubernetes spelling for a second downwardAPI source',
      { [`${vol}.downwardAPI`]: {} },
      ['spec.volumes[0].downwarAPI: Forbidden: may not specify more than 1 volume type', mountGone],
    ],
    ['requires a source', { [`${vol}.emptyDir`]: undefined }, ['spec.volumes[0]: Required value: must specify a volume type', mountGone]],
    ['item 5: requires a hostPath path', { [`${vol}.emptyDir`]: undefined, [`${vol}.hostPath`]: { path: '' } }, ['spec.volumes[0].hostPath.path: Required value', mountGone]],
    ['accepts a hostPath with a known type', { [`${vol}.emptyDir`]: undefined, [`${vol}.hostPath`]: { path: '/var/log', type: 'DirectoryOrCreate' } }, []],
    [
      'rejects a hostPath with ..',
      { [`${vol}.emptyDir`]: undefined, [`${vol}.hostPath`]: { path: '/var/../etc' } },
      ['spec.volumes[0].hostPath.path: Invalid value: "/var/../etc": must not contain \'..\'', mountGone],
    ],
    [
      'rejects an unknown hostPath type',
      { [`${vol}.emptyDir`]: undefined, [`${vol}.hostPath`]: { path: '/x', type: 'Dir' } },
      [
        'spec.volumes[0].hostPath.type: Unsupported value: "Dir": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"',
        mountGone,
      ],
    ],
    [
      'rejects a negative emptyDir size',
      { [`${vol}.emptyDir`]: { sizeLimit: '-1Gi' } },
      ['spec.volumes[0].emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity', mountGone],
    ],
    [
      'requires a secret name and checks modes and item paths',
      { [`${vol}.emptyDir`]: undefined, [`${vol}.secret`]: { defaultMode: 1000, items: [{ key: 'k', path: '/abs' }, { key: '', path: '..x' }] } },
      [
        'spec.volumes[0].secret.secretName: Required value',
        'spec.volumes[0].secret.defaultMode: Invalid value: 1000: must be a number between 0 and 0777 (octal), both inclusive',
        'spec.volumes[0].secret.items[0].path: Invalid value: "/abs": must be a relative path',
        'spec.volumes[0].secret.items[1].key: Required value',
        'spec.volumes[0].secret.items[1].path: Invalid value: "..x": must not start with \'..\'',
        mountGone,
      ],
    ],
    [
      // Kubernetes checks app containers before init containers.
      'requires a configMap name',
      { 'spec.volumes.1.configMap.name': '' },
      [
        'spec.volumes[1].configMap.name: Required value',
        'spec.containers[0].volumeMounts[1].name: Not found: "logging-config"',
        'spec.initContainers[0].volumeMounts[0].name: Not found: "logging-config"',
      ],
    ],
    ['requires a claim name', { [`${vol}.emptyDir`]: undefined, [`${vol}.persistentVolumeClaim`]: {} }, ['spec.volumes[0].persistentVolumeClaim.claimName: Required value', mountGone]],
    [
      'requires an absolute nfs path and a server',
      { [`${vol}.emptyDir`]: undefined, [`${vol}.nfs`]: { path: 'x' } },
      ['spec.volumes[0].nfs.server: Required value', 'spec.volumes[0].nfs.path: Invalid value: "x": must be an absolute path', mountGone],
    ],
    [
      'checks downward API files on the volume path, as Kubernetes does',
      { [`${vol}.emptyDir`]: undefined, [`${vol}.downwardAPI`]: { items: [{ path: 'a' }, { path: 'b', fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } }] } },
      [
        'spec.volumes[0].downwardAPI: Required value: one of fieldRef and resourceFieldRef is required',
        'spec.volumes[0].downwardAPI.fieldRef.fieldPath: Unsupported value: "spec.nodeName": supported values: "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"',
        mountGone,
      ],
    ],
    [
      'requires the container of a downward API resource',
      { [`${vol}.emptyDir`]: undefined, [`${vol}.downwardAPI`]: { items: [{ path: 'a', resourceFieldRef: { resource: 'limits.cpu' } }] } },
      ['spec.volumes[0].downwardAPI.resourceFieldRef.containerName: Required value', mountGone],
    ],
    [
      'checks a CSI driver name',
      { [`${vol}.emptyDir`]: undefined, [`${vol}.csi`]: { driver: 'bad_driver' } },
      [
        "spec.volumes[0].csi.driver: Invalid value: \"bad_driver\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        mountGone,
      ],
    ],
    [
      'rejects a CSI driver name over 63 bytes, in Kubernetes 1.32’s words (Kruise 1.9)',
      { [`${vol}.emptyDir`]: undefined, [`${vol}.csi`]: { driver: 'd'.repeat(64) } },
      ['spec.volumes[0].csi.driver: Too long: may not be more than 63 bytes', mountGone],
    ],
    ['rejects a duplicate volume name', { 'spec.volumes.2': { name: 'logging-logs', emptyDir: {} } }, ['spec.volumes[2].name: Duplicate value: "logging-logs"']],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(expected);
  });
});

describe('volume mounts', () => {
  const m = 'spec.containers.0.volumeMounts.0';
  it.each<Row>([
    ['accepts a relative subPath', { [`${m}.subPath`]: 'app/logs' }, []],
    // Kubernetes reports these on the list path, without the mount's index.
    ['rejects an absolute subPath', { [`${m}.subPath`]: '/etc' }, ['spec.containers[0].volumeMounts.subPath: Invalid value: "/etc": must be a relative path']],
    ['rejects a subPath with ..', { [`${m}.subPath`]: 'a/../../b' }, ['spec.containers[0].volumeMounts.subPath: Invalid value: "a/../../b": must not contain \'..\'']],
    [
      'rejects subPath beside subPathExpr',
      { [`${m}.subPath`]: 'a', [`${m}.subPathExpr`]: '$(POD_NAME)' },
      ['spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: "$(POD_NAME)": subPathExpr and subPath are mutually exclusive'],
    ],
    [
      'rejects an unknown mount propagation',
      { [`${m}.mountPropagation`]: 'Shared' },
      ['spec.containers[0].volumeMounts.mountPropagation: Unsupported value: "Shared": supported values: "Bidirectional", "HostToContainer", "None"'],
    ],
    [
      'allows Bidirectional propagation to privileged containers only',
      { [`${m}.mountPropagation`]: 'Bidirectional' },
      ['spec.containers[0].volumeMounts.mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers'],
    ],
    ['accepts Bidirectional propagation in a privileged container', { [`${m}.mountPropagation`]: 'Bidirectional', 'spec.containers.0.securityContext': { privileged: true } }, []],
    [
      'allows recursive read-only on read-only mounts only',
      { [`${m}.recursiveReadOnly`]: 'Enabled' },
      ['spec.containers[0].volumeMounts.recursiveReadOnly: Forbidden: may only be specified when readOnly is true'],
    ],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(expected);
  });
});

describe('projected volumes', () => {
  const projected = (sources: unknown[]) => ({ [`${vol}.emptyDir`]: undefined, [`${vol}.projected`]: { defaultMode: 420, sources } });
  it.each<Row>([
    [
      'accepts a token, a config map and pod labels',
      projected([
        { serviceAccountToken: { path: 'token', expirationSeconds: 3600 } },
        { configMap: { name: 'ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'labels', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.labels' } }] } },
      ]),
      [],
    ],
    [
      'rejects a short-lived token and reports its missing path on the volume source',
      projected([{ serviceAccountToken: { expirationSeconds: 60 } }]),
      [
        'spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
        'spec.volumes[0].projected.path: Required value',
        mountGone,
      ],
    ],
    [
      'rejects two files at one path',
      projected([{ secret: { name: 's', items: [{ key: 'a', path: 'x' }] } }, { configMap: { name: 'c', items: [{ key: 'b', path: 'x' }] } }]),
      ['spec.volumes[0].projected: Invalid value: "c": conflicting duplicate paths', mountGone],
    ],
    [
      'rejects two kinds in one source (Kubernetes 1.32’s words, Kruise 1.9)',
      projected([{ secret: { name: 's' }, configMap: { name: 'c' } }]),
      ['spec.volumes[0].projected.sources[0]: Forbidden: may not specify more than 1 volume type per source', mountGone],
    ],
    [
      'requires a trust bundle name or signer, at clusterTrustBundle (Kubernetes 1.32; 1.30 said clusterTrustBundlePEM)',
      projected([{ clusterTrustBundle: { path: 'ca.pem' } }]),
      ['spec.volumes[0].projected.sources[0].clusterTrustBundle: Required value: either name or signerName must be specified', mountGone],
    ],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(expected);
  });
});

describe('ephemeral volumes', () => {
  const ephemeral = (spec: unknown) => ({ [`${vol}.emptyDir`]: undefined, [`${vol}.ephemeral`]: { volumeClaimTemplate: { spec } } });
  it.each<Row>([
    ['accepts a claim for some storage', ephemeral({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'gp3' }), []],
    [
      'requires an access mode and a storage request',
      ephemeral({}),
      [
        'spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: Required value: at least 1 access mode is required',
        'spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources[storage]: Required value',
        mountGone,
      ],
    ],
    [
      'rejects ReadWriteOncePod beside another mode, and a zero request',
      ephemeral({ accessModes: ['ReadWriteOncePod', 'ReadOnlyMany'], resources: { requests: { storage: '0' } } }),
      [
        'spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes',
        'spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources[storage]: Invalid value: "0": must be greater than zero',
        mountGone,
      ],
    ],
    [
      'requires the claim template',
      { [`${vol}.emptyDir`]: undefined, [`${vol}.ephemeral`]: {} },
      ['spec.volumes[0].ephemeral.volumeClaimTemplate: Required value', mountGone],
    ],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(expected);
  });
});

describe('cloud and network disk volumes', () => {
  const disk = (key: string, source: unknown) => ({ [`${vol}.emptyDir`]: undefined, [`${vol}.${key}`]: source });
  it.each<Row>([
    ['accepts an EBS volume', disk('awsElasticBlockStore', { volumeID: 'vol-1', fsType: 'ext4' }), []],
    [
      'reports a GCE disk under persistentDisk, as Kubernetes does',
      disk('gcePersistentDisk', { partition: 300 }),
      [
        'spec.volumes[0].persistentDisk.pdName: Required value',
        'spec.volumes[0].persistentDisk.partition: Invalid value: 300: must be between 1 and 255, inclusive',
        mountGone,
      ],
    ],
    ['requires rbd monitors and image', disk('rbd', { monitors: [] }), ['spec.volumes[0].rbd.monitors: Required value', 'spec.volumes[0].rbd.image: Required value', mountGone]],
    [
      'checks an iSCSI qualified name and lun',
      disk('iscsi', { targetPortal: '10.0.0.1:3260', iqn: 'iqn.bad', lun: 256 }),
      ['spec.volumes[0].iscsi.iqn: Invalid value: "iqn.bad": must be valid format', 'spec.volumes[0].iscsi.lun: Invalid value: 256: must be between 0 and 255, inclusive', mountGone],
    ],
    ['accepts a good iSCSI name', disk('iscsi', { targetPortal: '10.0.0.1:3260', iqn: 'iqn.2001-04.com.example:storage', lun: 0 }), []],
    [
      'requires a lun with fibre channel target WWNs',
      disk('fc', { targetWWNs: ['500a0982991b8dc5'] }),
      ['spec.volumes[0].fc.lun: Required value: lun is required if targetWWNs is specified', mountGone],
    ],
    [
      'rejects reserved flexVolume option domains',
      disk('flexVolume', { driver: 'example/flex', options: { 'kubernetes.io/x': 'y' } }),
      ['spec.volumes[0].flexVolume.options[kubernetes.io/x]: Invalid value: "kubernetes.io/x": kubernetes.io and k8s.io namespaces are reserved', mountGone],
    ],
    [
      'checks an Azure managed disk URI',
      disk('azureDisk', { diskName: 'd', diskURI: 'https://x/y.vhd', kind: 'Managed' }),
      [
        'spec.volumes[0].azureDisk.diskURI: Unsupported value: "https://x/y.vhd": supported values: "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"',
        mountGone,
      ],
    ],
    [
      'rejects a quobyte registry without a port',
      disk('quobyte', { registry: 'registry', volume: 'v' }),
      ['spec.volumes[0].quobyte.registry: Invalid value: "registry": must be a host:port pair or multiple pairs separated by commas', mountGone],
    ],
    [
      'rejects a long iSCSI volume name and portal with an initiator name',
      disk('iscsi', { targetPortal: `${'1'.repeat(60)}:3260`, iqn: 'iqn.2001-04.com.example:storage', initiatorName: 'iqn.2001-04.com.example:node' }),
      [
        'spec.volumes[0].name: Invalid value: "logging-logs": Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.',
        mountGone,
      ],
    ],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(expected);
  });
});

describe('volume devices', () => {
  const claim = { 'spec.volumes.2': { name: 'block', persistentVolumeClaim: { claimName: 'disk' } } };
  const devices = 'spec.containers.1.volumeDevices';
  it.each<Row>([
    ['accepts a block device from a claim', { ...claim, [devices]: [{ name: 'block', devicePath: '/dev/xvda' }] }, []],
    [
      'rejects a device from a volume that is not a claim',
      { [devices]: [{ name: 'logging-logs', devicePath: '/dev/xvda' }] },
      ['spec.containers[1].volumeDevices[0].name: Invalid value: "logging-logs": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode'],
    ],
    [
      'requires a known volume and a path without backsteps',
      { [devices]: [{ name: 'nothing', devicePath: '/dev/../x' }] },
      [
        'spec.containers[1].volumeDevices[0].name: Not found: "nothing"',
        "spec.containers[1].volumeDevices[0].devicePath: Invalid value: \"/dev/../x\": can not contain backsteps ('..')",
      ],
    ],
    [
      'rejects a device and a mount of one volume at one path',
      { ...claim, [devices]: [{ name: 'block', devicePath: '/data' }], 'spec.containers.1.volumeMounts': [{ name: 'block', mountPath: '/data' }] },
      [
        'spec.containers[1].volumeMounts[0].name: Invalid value: "block": must not already exist in volumeDevices',
        'spec.containers[1].volumeMounts[0].mountPath: Invalid value: "/data": must not already exist as a path in volumeDevices',
        'spec.containers[1].volumeDevices[0].name: Invalid value: "block": must not already exist in volumeMounts',
        'spec.containers[1].volumeDevices[0].devicePath: Invalid value: "/data": must not already exist as a path in volumeMounts',
      ],
    ],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(expected);
  });
});
