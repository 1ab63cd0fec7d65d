// Every simulated Kubeflow controller the embedded cluster runs from the start.
import type { Controller } from '../contract.ts';
import { kfpProfileController } from './kfp-profile-controller.ts';
import { katibController } from './katib-controller.ts';
import { kserveController } from './kserve-controller.ts';
import { modelWorkloadsController } from './model-workloads.ts';
import { namespaceDefaultsController } from './namespace-defaults.ts';
import { notebookController } from './notebook-controller.ts';
import { profileController } from './profile-controller.ts';
import { trainingController } from './training-controller.ts';

export function kubeflowControllers(): Controller[] {
  return [
    namespaceDefaultsController(),
    profileController(),
    kfpProfileController(),
    notebookController(),
    kserveController(),
    katibController(),
    trainingController(),
    modelWorkloadsController(),
  ];
}
