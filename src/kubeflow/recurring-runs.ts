// KFP recurring runs. A ScheduledWorkflow is the Kubernetes half of a recurring run: KFP's CreateJob creates it and
// takes its UID as the run's id in KFP's database, and every report about it or about the runs it starts looks the
// job up by that UID (kubeflow/pipelines 2.5.0 backend/src/apiserver/resource/resource_manager.go: CreateJob,
// ReportScheduledWorkflowResource, ReportWorkflowResource). A copy written by anything else gets a new UID that no
// job has: it would keep starting runs that KFP never records. So a backup keeps them (the record of what recurring
// runs existed, with their schedule and pipeline), a restore never writes them, and the restore's results list them
// for the operator to recreate through KFP (docs/upgrades.md, "KFP recurring runs").
import type { KubeObject } from '../kube/types.ts';
import { groupOf } from './identity.ts';

export const recurringRunReason = 'not restored: a KFP recurring run is made only by KFP\'s CreateJob, which takes the ScheduledWorkflow\'s UID as the run\'s id; recreate it in KFP (listed under recurring-runs)';

export function isRecurringRun(object: KubeObject): boolean {
  return object.kind === 'ScheduledWorkflow' && groupOf(object.apiVersion) === 'kubeflow.org';
}
