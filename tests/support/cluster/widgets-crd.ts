// A test CRD with two served versions (v1 stored) and a status subresource: the shape the server tests use to check
// conversion between versions and the status subresource rules (kubernetes/kubernetes
// staging/src/k8s.io/apiextensions-apiserver, served/storage versions and subresources.status).
import type { KubeObject } from '../../../src/kube/types.ts';

export const WIDGETS: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.org' },
  spec: {
    group: 'example.org',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      { name: 'v1alpha1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
      { name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
    ],
  },
};
