/**
 * The SidecarSet CustomResourceDefinition (apps.kruise.io/v1alpha1), built
 * from the SidecarSet's own fields, described here, and the Kubernetes types
 * it embeds, taken from the API server's OpenAPI document (see
 * openapi-structural.ts). The schema accepts every field OpenKruise v1.8's
 * Go types have, so that a SidecarSet written for Kruise applies unchanged;
 * anything else is an unknown field, which the API server reports to kubectl
 * and prunes.
 *
 * Where this differs from Kruise's own CRD, on purpose:
 * - Kruise keeps containers and volumes whole
 *   (`x-kubernetes-preserve-unknown-fields`), so a typo is stored silently;
 *   here they have the full core/v1 schema.
 * - Quantities keep any value (see openapi-structural.ts), as the server reads
 *   `cpu: 0.5`; the validating webhook parses them.
 * - The core types require nothing (see openapi-structural.ts); Kruise's own
 *   types require what Kruise's CRD requires, except in the status, where
 *   Kruise requires matchedPods, updatedPods and readyPods: nothing is
 *   required there, so a status patch never fails on a field the reconciler
 *   did not change.
 */
import type { JsonObject } from '../kube/types.ts';
import { GROUP, KIND } from '../sidecarset/types.ts';
import { structuralSchema, type OpenApiSchemas } from './openapi-structural.ts';

export const CONTAINER = 'io.k8s.api.core.v1.Container';
export const VOLUME = 'io.k8s.api.core.v1.Volume';
export const LOCAL_OBJECT_REFERENCE = 'io.k8s.api.core.v1.LocalObjectReference';
export const OBJECT_FIELD_SELECTOR = 'io.k8s.api.core.v1.ObjectFieldSelector';
export const LABEL_SELECTOR = 'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector';

/** The OpenAPI definitions the CRD embeds; the fixture holds these and everything they refer to. */
export const EMBEDDED_TYPES = [CONTAINER, VOLUME, LOCAL_OBJECT_REFERENCE, OBJECT_FIELD_SELECTOR, LABEL_SELECTOR] as const;

export const CRD_NAME = `sidecarsets.${GROUP}`;

const string = (description: string): JsonObject => ({ description, type: 'string' });
const boolean = (description: string): JsonObject => ({ description, type: 'boolean' });
const int32 = (description: string): JsonObject => ({ description, type: 'integer', format: 'int32' });
const int64 = (description: string): JsonObject => ({ description, type: 'integer', format: 'int64' });
const intOrString = (description: string): JsonObject => ({
  description,
  anyOf: [{ type: 'integer' }, { type: 'string' }],
  'x-kubernetes-int-or-string': true,
});
const object = (description: string, properties: JsonObject, required?: string[]): JsonObject => ({
  description,
  type: 'object',
  ...(required === undefined ? {} : { required }),
  properties,
});
const array = (description: string, items: JsonObject): JsonObject => ({ description, type: 'array', items });

function sidecarContainer(types: OpenApiSchemas, description: string): JsonObject {
  const container = structuralSchema(types, CONTAINER, description);
  const properties = container.properties as JsonObject;
  return {
    ...container,
    properties: {
      ...properties,
      podInjectPolicy: string(
        'Where the sidecar goes among the pod\'s containers: "BeforeAppContainer" (the default for containers) puts it before the ' +
          'application containers, "AfterAppContainer" (the default for init containers) after them.',
      ),
      upgradeStrategy: object('How a running sidecar is upgraded to a new image.', {
        upgradeType: string(
          '"ColdUpgrade" (the default) replaces the sidecar; "HotUpgrade" runs two copies, <name>-1 and <name>-2, and switches ' +
            'between them (this project injects the two copies; the switch is not built yet).',
        ),
        hotUpgradeEmptyImage: string('For HotUpgrade (required there): the image of the idle copy of the sidecar.'),
      }),
      shareVolumePolicy: object('Whether the sidecar also mounts the volumes of the pod\'s application containers.', {
        type: string('"enabled" mounts every volumeMount of the application containers into the sidecar too; "disabled" (the default) does not.'),
      }),
      shareVolumeDevicePolicy: object('Whether the sidecar also gets the volume devices of the pod\'s application containers (OpenKruise 1.9).', {
        type: string('"enabled" adds every volumeDevice of the application containers to the sidecar, at paths it does not use itself; "disabled" (the default) does not.'),
      }),
      resourcesPolicy: resourcesPolicy(),
      transferEnv: transferEnv(types),
    },
  };
}

/** A sidecar's resourcesPolicy (OpenKruise 1.9). */
function resourcesPolicy(): JsonObject {
  return object(
    'The sidecar\'s resources worked out from the pod\'s containers at injection (OpenKruise 1.9); a sidecar sets either this or resources, never both.',
    {
      targetContainersMode: { ...string('How the target containers\' resources are combined: "sum" adds them up, "max" takes the largest.'), enum: ['sum', 'max'] },
      targetContainersNameRegex: { ...string('The containers counted, by name (an RE2 regular expression); every container when unset.'), default: '.*' },
      resourcesExpr: object('Expressions over the combined figure (the variable cpu or memory): + - * /, max(), min(), percentages and quantities.', {
        limits: object('The sidecar\'s limits; none is set when a target container has no limit.', {
          cpu: string('An expression giving the CPU limit, e.g. "cpu*50%".'),
          memory: string('An expression giving the memory limit, e.g. "200Mi".'),
        }),
        requests: object('The sidecar\'s requests; a target container without a request counts as 0.', {
          cpu: string('An expression giving the CPU request.'),
          memory: string('An expression giving the memory request.'),
        }),
      }),
    },
    ['resourcesExpr', 'targetContainersMode'],
  );
}

/** A sidecar's transferEnv. */
function transferEnv(types: OpenApiSchemas): JsonObject {
  return array(
    'Environment variables copied from an application container of the pod into the sidecar; the sidecar\'s own env wins.',
    object('One variable, or several, copied from a named container.', {
      sourceContainerName: string('The pod container to copy from.'),
      sourceContainerNameFrom: object('Reads the name of the container to copy from the pod\'s own metadata.', {
        fieldRef: requiring(
          structuralSchema(types, OBJECT_FIELD_SELECTOR, "The pod field holding the container name: metadata.labels['<key>'] or metadata.annotations['<key>']."),
          ['fieldPath'],
        ),
      }),
      envName: string('The name of one variable to copy.'),
      envNames: array('The names of several variables to copy.', { type: 'string' }),
    }),
  );
}

/** `schema` with these fields required, as OpenKruise's CRD requires them in its own types. */
function requiring(schema: JsonObject, required: string[]): JsonObject {
  return { ...schema, required };
}

/** A LabelSelector; like Kruise's CRD, an expression needs its key and operator (a pod's selector does too). */
function selector(types: OpenApiSchemas, description: string): JsonObject {
  const schema = structuralSchema(types, LABEL_SELECTOR, description);
  const properties = schema.properties as Record<string, JsonObject>;
  const expressions = properties.matchExpressions as JsonObject;
  return {
    ...schema,
    properties: { ...properties, matchExpressions: { ...expressions, items: requiring(expressions.items as JsonObject, ['key', 'operator']) } },
  };
}

/** Which namespaces a set selects: v1alpha1 also has `namespace`. */
function scopeFields(types: OpenApiSchemas, version: SidecarSetVersion): JsonObject {
  return version === 'v1alpha1'
  ? {
      namespace: string('Injects only pods in this namespace. Cannot be combined with namespaceSelector.'),
      namespaceSelector: selector(types, 'Injects only pods whose Namespace has matching labels. Cannot be combined with namespace.'),
    }
  : {
      namespaceSelector: selector(
        types,
        'Injects only pods whose Namespace has matching labels; one namespace by name is matchLabels: {kubernetes.io/metadata.name: <name>}.',
      ),
    };
}

function updateStrategy(types: OpenApiSchemas): JsonObject {
  return object('How pods that already run the sidecar get a new version of it.', {
    type: string('"RollingUpdate" (the default) or "NotUpdate".'),
    paused: boolean('Stops updating pods while true.'),
    selector: selector(types, 'Updates only the pods matching these labels. Cannot be combined with a non-zero partition.'),
    partition: intOrString('How many matched pods, or which percentage of them ("20%"), keep the old version. Defaults to 0.'),
    maxUnavailable: intOrString('How many matched pods, or which percentage ("10%"), may be unavailable during an update. Defaults to 1.'),
    priorityStrategy: object('Which pods are updated first. Use only one of weightPriority and orderPriority.', {
      weightPriority: array(
        'Pods matching a term with a higher weight are updated first.',
        object(
          'A weight and the pods it applies to.',
          {
            weight: int32('From 1 to 100.'),
            matchSelector: selector(types, 'The pods this weight applies to. Must not be empty.'),
          },
          ['weight', 'matchSelector'],
        ),
      ),
      orderPriority: array(
        'Pods are ordered by the value of these labels, in turn.',
        object('A label whose value orders the pods.', { orderedKey: string('The label key.') }, ['orderedKey']),
      ),
    }),
    scatterStrategy: array(
      'Spreads the updated pods evenly among the pods carrying each of these labels.',
      object('A label key and value.', { key: string('The label key.'), value: string('The label value.') }, ['key', 'value']),
    ),
  });
}

function injectionStrategy(): JsonObject {
  return object('How new pods are injected.', {
    paused: boolean('Stops injecting into new pods while true.'),
    revision: object('Injects a recorded revision of the SidecarSet instead of the current one (not implemented by this project yet).', {
      customVersion: string('The revision, by the value of its apps.kruise.io/sidecarset-custom-version label.'),
      revisionName: string('The revision, by the name of its ControllerRevision.'),
      policy: {
        ...string('"Always" (the default) always injects that revision; "Partial" injects it only into pods the update strategy has not reached.'),
        // As OpenKruise's CRD: the API server itself defaults and checks it.
        default: 'Always',
        enum: ['Always', 'Partial'],
      },
    }),
  });
}

function patchPodMetadata(): JsonObject {
  return array(
    'Annotations written onto every injected pod.',
    object('Annotations and how they are written.', {
      annotations: {
        description: 'The annotations to write. A key may appear in one entry only.',
        type: 'object',
        additionalProperties: { type: 'string' },
      },
      patchPolicy: string(
        '"Retain" (the default) sets a key only when the pod does not have it; "Overwrite" always sets it; "MergePatchJson" merges the ' +
          'value, a JSON object, into the pod\'s (RFC 7386).',
      ),
    }),
  );
}

/**
 * The spec of one version. v1alpha1 has `namespace` (beside namespaceSelector);
 * v1beta1 has no `namespace` (a selector on kubernetes.io/metadata.name says
 * the same) and has `customVersion`, which v1alpha1 keeps in a label.
 */
function spec(types: OpenApiSchemas, version: SidecarSetVersion): JsonObject {
  return object('What the SidecarSet injects and into which pods.', {
    selector: selector(types, 'The pods to inject, by their labels. Required, and must not be empty.'),
    ...scopeFields(types, version),
    initContainers: array(
      'Init containers to inject. They are added when a pod is created, sorted by name, after the pod\'s own init containers unless ' +
        'podInjectPolicy says otherwise. One with restartPolicy Always is a native sidecar.',
      sidecarContainer(types, 'An init container to inject: a core/v1 Container plus the SidecarSet\'s injection settings.'),
    ),
    containers: array(
      'Sidecar containers to inject when a pod is created. A pod container of the same name is replaced in place.',
      sidecarContainer(types, 'A container to inject: a core/v1 Container plus the SidecarSet\'s injection settings.'),
    ),
    volumes: array(
      'Volumes the sidecars may mount. Only those an injected container mounts are added to the pod; a pod volume of the same name wins.',
      structuralSchema(types, VOLUME, 'A core/v1 Volume.'),
    ),
    updateStrategy: updateStrategy(types),
    injectionStrategy: injectionStrategy(),
    imagePullSecrets: array(
      'Image pull secrets added to injected pods, after the pod\'s own, without duplicates.',
      structuralSchema(types, LOCAL_OBJECT_REFERENCE, 'A Secret in the pod\'s namespace, by name.'),
    ),
    revisionHistoryLimit: int32('How many old revisions of the SidecarSet are kept. Defaults to 10.'),
    patchPodMetadata: patchPodMetadata(),
    ...(version === 'v1beta1'
      ? {
          customVersion: string(
            'A name for this version of the SidecarSet, copied to the label apps.kruise.io/sidecarset-custom-version of its ControllerRevision, ' +
              'so that injectionStrategy.revision.customVersion can pin it (v1alpha1 keeps it in that label of the SidecarSet itself).',
          ),
        }
      : {}),
  });
}

const status = object('What the SidecarSet\'s pods currently run, as last observed.', {
  observedGeneration: int64('The metadata.generation of the SidecarSet this status was computed from.'),
  matchedPods: int32('How many pods the SidecarSet selects.'),
  updatedPods: int32('How many of them run the current version of the sidecars.'),
  readyPods: int32('How many of them are ready.'),
  updatedReadyPods: int32('How many of them run the current version and are ready.'),
  latestRevision: string('The name of the ControllerRevision of the current version.'),
  collisionCount: int32('A count of revision name collisions, used to make the next revision name unique.'),
});

/** Where the API server sends ConversionReviews: a URL (https) or a Service in the cluster, and the CA that signs its certificate. */
export type ConversionClientConfig = { url: string; caBundle?: string } | { service: ConversionService; caBundle?: string };

/** A Service in the cluster that serves the conversion webhook (the API server's default port is 443). */
export interface ConversionService {
  namespace: string;
  name: string;
  path?: string;
  port?: number;
}

/**
 * The conversion URL infra/k8s/crd.yaml carries: a deployment's own is put
 * in its place where the CRD is installed (`npm run manifests` from the
 * stack's convert function URL, `npm start` and the test harness from their
 * local conversion servers). The `.invalid` name never resolves, so a CRD
 * applied as it is fails reads and writes of v1alpha1 with a message naming
 * this URL, rather than calling anyone.
 */
export const CONVERSION_URL_PLACEHOLDER = 'https://sidecarset-convert.invalid/render-the-crd-with-npm-run-manifests';

/** The two-version CRD as infra/k8s/crd.yaml holds it (the placeholder conversion URL). */
export const DEFAULT_CRD_VERSIONS: CrdVersions = { served: 'v1alpha1+v1beta1', conversion: { url: CONVERSION_URL_PLACEHOLDER } };

/** The conversion client config of a CRD object (the URL form), if it has one. */
export function conversionUrlOf(crd: unknown): string | undefined {
  const spec = isRecord(crd) ? crd.spec : undefined;
  const conversion = isRecord(spec) ? spec.conversion : undefined;
  const webhook = isRecord(conversion) ? conversion.webhook : undefined;
  const clientConfig = isRecord(webhook) ? webhook.clientConfig : undefined;
  return isRecord(clientConfig) && typeof clientConfig.url === 'string' ? clientConfig.url : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `crd` (a CRD object converted by webhook, as crd.yaml's) pointing its
 * conversion webhook at `config` instead: a copy, the rest untouched.
 * @throws Error when the CRD converts by no webhook, or the config is one the API server would refuse.
 */
export function withConversionClientConfig(crd: JsonObject, config: ConversionClientConfig): JsonObject {
  const spec = isRecord(crd.spec) ? crd.spec : {};
  if (!isRecord(spec.conversion) || spec.conversion.strategy !== 'Webhook') {
    throw new Error(`the CRD ${String(isRecord(crd.metadata) ? crd.metadata.name : undefined)} converts by no webhook (it serves v1alpha1 alone?)`);
  }
  return { ...crd, spec: { ...spec, conversion: conversionStanza(config) } };
}

/** Which versions the CRD serves. */
export type CrdVersions =
  /** v1alpha1 alone, stored as is, no conversion: for a cluster where no conversion webhook can run (`npm run crd -- --v1alpha1-only`). */
  | { served: 'v1alpha1' }
  /** v1alpha1 and v1beta1, v1beta1 stored, as OpenKruise 1.9's CRD; conversion by the webhook at `conversion`. */
  | { served: 'v1alpha1+v1beta1'; conversion: ConversionClientConfig };

export type SidecarSetVersion = 'v1alpha1' | 'v1beta1';

/**
 * A column OpenKruise's CRD does not have, shown only by `kubectl get -o wide`
 * (priority 1): each set's resourceVersion. pod-inject asks for the sets as a
 * Table of these cells (`includeObject=None`), so that telling which sets
 * changed since its last read costs a few bytes per set, whatever their
 * labels, annotations and managedFields weigh (the metadata list carries all
 * three). Found by name and description (lib/adapters/sidecarset-delta.ts).
 */
export const RESOURCE_VERSION_COLUMN = {
  name: 'RESOURCEVERSION',
  type: 'string',
  description: 'The resourceVersion, which pod-inject compares to read again only the SidecarSets that changed.',
  jsonPath: '.metadata.resourceVersion',
  priority: 1,
} as const;

/** The printer columns, the same for both versions: OpenKruise's, and the resourceVersion. */
const printerColumns: JsonObject[] = [
  { name: 'MATCHED', type: 'integer', description: 'The number of Pods matched.', jsonPath: '.status.matchedPods' },
  { name: 'UPDATED', type: 'integer', description: 'The number of matched Pods that run the current sidecar.', jsonPath: '.status.updatedPods' },
  { name: 'READY', type: 'integer', description: 'The number of matched Pods that are ready.', jsonPath: '.status.readyPods' },
  { name: 'AGE', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  { ...RESOURCE_VERSION_COLUMN },
];

function versionEntry(types: OpenApiSchemas, version: SidecarSetVersion, storage: boolean): JsonObject {
  return {
    name: version,
    served: true,
    storage,
    subresources: { status: {} },
    additionalPrinterColumns: printerColumns,
    schema: {
      openAPIV3Schema: {
        description: 'SidecarSet injects sidecar containers, volumes and annotations into the pods it selects, when they are created.',
        type: 'object',
        properties: {
          apiVersion: string(`The versioned schema of this object: ${GROUP}/${version}.`),
          kind: string('SidecarSet.'),
          metadata: { type: 'object' },
          spec: spec(types, version),
          status,
        },
      },
    },
  };
}

/** The problem with a conversion client config, or undefined: the API server would refuse the CRD for any of these. */
export function conversionClientConfigError(config: ConversionClientConfig): string | undefined {
  if ('url' in config) {
    let url: URL;
    try {
      url = new URL(config.url);
    } catch {
      return `the conversion URL ${JSON.stringify(config.url)} is not a URL`;
    }
    if (url.protocol !== 'https:') return `the conversion URL must use https, got ${JSON.stringify(config.url)}`;
    if (url.username !== '' || url.password !== '') return 'the conversion URL must not hold a user or password';
    if (url.hash !== '' || config.url.includes('#')) return 'the conversion URL must not have a fragment';
    if (url.search !== '' || config.url.includes('?')) return 'the conversion URL must not have a query';
  } else {
    const { namespace, name, path, port } = config.service;
    if (namespace === '' || name === '') return 'the conversion service needs a namespace and a name';
    if (path !== undefined && !path.startsWith('/')) return `the conversion service path must start with "/", got ${JSON.stringify(path)}`;
    if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) return `the conversion service port must be 1 to 65535, got ${port}`;
  }
  if (config.caBundle !== undefined && !/^[A-Za-z0-9+/]+={0,2}$/.test(config.caBundle)) return 'the conversion caBundle must be base64 (PEM certificates, encoded)';
  return undefined;
}

function conversionStanza(config: ConversionClientConfig): JsonObject {
  const problem = conversionClientConfigError(config);
  if (problem !== undefined) throw new Error(problem);
  const clientConfig: JsonObject =
    'url' in config
      ? { url: config.url }
      : {
          service: {
            namespace: config.service.namespace,
            name: config.service.name,
            ...(config.service.path === undefined ? {} : { path: config.service.path }),
            ...(config.service.port === undefined ? {} : { port: config.service.port }),
          },
        };
  if (config.caBundle !== undefined) clientConfig.caBundle = config.caBundle;
  return { strategy: 'Webhook', webhook: { clientConfig, conversionReviewVersions: ['v1'] } };
}

/**
 * The CustomResourceDefinition object, ready to serialise. `types` is
 * components.schemas of the server's OpenAPI v3 document (or its subset).
 * By default it serves v1alpha1 alone; `{ served: 'v1alpha1+v1beta1', conversion }`
 * serves both and stores v1beta1, as OpenKruise 1.9 does, with the
 * conversion webhook at `conversion` (see docs/CONVERSION.md).
 * @throws Error naming the problem when the conversion config is one the API server would refuse.
 */
export function sidecarSetCrd(types: OpenApiSchemas, versions: CrdVersions = { served: 'v1alpha1' }): JsonObject {
  const both = versions.served === 'v1alpha1+v1beta1';
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD_NAME, labels: { 'app.kubernetes.io/part-of': 'serverless-sidecarset' } },
    spec: {
      group: GROUP,
      scope: 'Cluster',
      names: { kind: KIND, listKind: `${KIND}List`, plural: 'sidecarsets', singular: 'sidecarset' },
      ...(both ? { conversion: conversionStanza(versions.conversion) } : {}),
      versions: both ? [versionEntry(types, 'v1alpha1', false), versionEntry(types, 'v1beta1', true)] : [versionEntry(types, 'v1alpha1', true)],
    },
  };
}
