/**
 * The CRD the SidecarSets are created under: minimal, with spec and status
 * kept as given, so that the fields this project does not know survive
 * storage and the test can check that our client does not drop them either.
 */
export const sidecarSetCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'sidecarsets.apps.kruise.io' },
  spec: {
    group: 'apps.kruise.io',
    scope: 'Cluster',
    names: { plural: 'sidecarsets', singular: 'sidecarset', kind: 'SidecarSet', listKind: 'SidecarSetList' },
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        },
      },
    ],
  },
};
