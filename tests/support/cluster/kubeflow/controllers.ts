// Every simulated Kubeflow controller the embedded cluster runs from the start: the controllers of Charmed Kubeflow
// 1.9/1.10 that make or act on user state (canonical/bundle-kubeflow), each following the upstream file its own
// module names.
import type { Controller } from '../contract.ts';
import { kfpProfileController, type KfpProfileControllerOptions } from './kfp-profile-controller.ts';
import { argoController } from './argo-controller.ts';
import { katibController } from './katib-controller.ts';
import { kserveController } from './kserve-controller.ts';
import { modelWorkloadsController } from './model-workloads.ts';
import { namespaceDefaultsController } from './namespace-defaults.ts';
import { notebookController } from './notebook-controller.ts';
import { profileController } from './profile-controller.ts';
import { tokenController } from './token-controller.ts';
import { trainingController } from './training-controller.ts';

export interface KubeflowControllerOptions {
  kfpProfileController?: KfpProfileControllerOptions;
}

export function kubeflowControllers(options: KubeflowControllerOptions = {}): Controller[] {
  return [
    namespaceDefaultsController(),
    tokenController(),
    profileController(),
    kfpProfileController(options.kfpProfileController),
    notebookController(),
    kserveController(),
    katibController(),
    trainingController(),
    argoController(),
    modelWorkloadsController(),
  ];
}
