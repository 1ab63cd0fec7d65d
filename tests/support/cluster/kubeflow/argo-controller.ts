// Upstream: github.com/argoproj/argo-workflows workflow/controller (controller.go, operator.go).
// The Argo workflow controller, simulated after argoproj/argo-workflows v3.4 (the argo-controller charm of Charmed
// Kubeflow 1.9/1.10), only as far as a restore needs:
// - workflow/controller/controller.go tweakWorkflowlist: the controller's informer lists and watches only Workflows
//   whose label workflows.argoproj.io/completed is not "true"; a Workflow carrying it is never operated on again,
//   whatever its status says;
// - workflow/controller/operator.go operate: a Workflow whose status.phase is empty is new: it is marked Running
//   (phase and startedAt; a Workflow keeps its status in the object itself, the CRD has no status subresource) and its
//   entrypoint's pod is created, named <workflow>-<template>-<hash> and controlled by the Workflow.
// So a finished Workflow restored without its status and without the completed label runs again from the start.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../../../src/kube/types.ts';
import { controllerReference, keyOf, reconciler, splitKey } from './reconciler.ts';
import { refs } from './refs.ts';

export const workflowsRef = { group: 'argoproj.io', resource: 'workflows' };
export const completedLabel = 'workflows.argoproj.io/completed';
const workflowLabel = 'workflows.argoproj.io/workflow';

/** the informer's label selector: `completed notin (true)` */
const watched = (workflow: KubeObject) => workflow.metadata.labels?.[completedLabel] !== 'true';

export function argoController() {
  return reconciler({
    name: 'argo-workflow-controller',
    delayMs: 10,
    watches: [{ ref: workflowsRef, keys: (o) => (watched(o) ? [keyOf(o)] : []) }],
    reconcile: (api, key) => {
      const { namespace, name } = splitKey(key);
      const workflow = api.get(workflowsRef, name, namespace);
      if (!workflow || workflow.metadata.deletionTimestamp || !watched(workflow)) return;
      const phase = (workflow.status as { phase?: string } | undefined)?.phase ?? '';
      if (phase !== '') return; // this simulation only starts Workflows; running ones are left as they are
      const entrypoint = (workflow.spec as { entrypoint?: string } | undefined)?.entrypoint ?? 'main';
      const suffix = createHash('sha256').update(`${workflow.metadata.uid}/${entrypoint}`).digest('hex').slice(0, 10);
      const podName = `${name}-${entrypoint}-${suffix}`;
      if (!api.get(refs.pods, podName, namespace)) api.create(refs.pods, {
        apiVersion: 'v1', kind: 'Pod',
        metadata: { name: podName, namespace, labels: { [workflowLabel]: name }, ownerReferences: [controllerReference(workflow)] },
        spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'quay.io/argoproj/argoexec:v3.4.17' }] },
      });
      api.update(workflowsRef, { ...workflow, status: { ...(workflow.status as object | undefined), phase: 'Running', startedAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z') } });
    },
  });
}
