// What the restore writes after or instead of a plain create, where a controller is involved: the ServiceAccounts a
// controller makes (merged into, never replaced) and the status of kinds whose controller decides from it.
import type { Wording } from '../errors/remedy.ts';
import type { RestoreKube } from './kube-port.ts';
import { isAlreadyExists, isConflict, isNotFound } from '../kube/errors.ts';
import type { ApiResource, KubeObject } from '../kube/types.ts';
import { serviceAccountMerge } from '../kubeflow/service-accounts.ts';
import { describe } from '../errors/index.ts';
import { listOf } from './errors.ts';
import type { Verdict } from './report.ts';

/** What these writes need of the restore run. */
export interface ObjectWriter {
  kube: RestoreKube;
  /** planning only: say what would be done, write nothing */
  dry: boolean;
  fieldManager: string;
  /** how long to wait for a controller's object (restore-wait-timeout, --wait-timeout) */
  waitTimeoutMs: number;
  /** how the edge words the settings a warning names */
  wording: Wording;
  warn(sentence: string): void;
}

/**
 * A ServiceAccount a controller makes (src/kubeflow/service-accounts.ts): the archived imagePullSecrets and
 * annotations are merged into the one the controller made, never written over it. On a fresh namespace it may not
 * exist yet: it is read again until restore-wait-timeout, and only when it never comes is it created as archived.
 */
export async function mergeIntoControllerServiceAccount(
  writer: ObjectWriter, resource: ApiResource, wanted: KubeObject, known: KubeObject | undefined,
  record: (verdict: Verdict, reason?: string) => Verdict, name: string,
): Promise<Verdict> {
  const saName = wanted.metadata.name!;
  const namespace = wanted.metadata.namespace!;
  let existing = known ?? (writer.dry ? undefined : await awaitObject(writer, resource, saName, namespace));
  if (!existing) {
    if (writer.dry) return record('update', `${name}: the backup's imagePullSecrets and annotations would be merged into the ServiceAccount its controller makes`);
    try {
      await writer.kube.create(resource, wanted, { safeToRetry: true, fieldManager: writer.fieldManager });
      writer.warn(`${name} was not made by its controller within ${writer.wording.term({ term: 'wait-timeout', seconds: Math.round(writer.waitTimeoutMs / 1000) })}, so it was created as the backup holds it`);
      return record('create');
    } catch (error) {
      if (!isAlreadyExists(error)) return record('fail', `${name}: ${describe(error)}`);
      existing = await writer.kube.tryGet(resource, saName, namespace);
      if (!existing) return record('fail', `${name}: it was reported to exist and then was not found`);
    }
  }
  for (let attempt = 0; ; attempt++) {
    const merge = serviceAccountMerge(existing, wanted);
    if (!merge) return record('unchanged');
    const what = `${name}: merged ${listOf(Object.keys(merge).flatMap((k) => (k === 'metadata' ? Object.keys(merge.metadata as object) : [k])))} from the backup into the ServiceAccount its controller made`;
    if (writer.dry) return record('update', what.replace('merged', 'would merge'));
    try {
      // the resourceVersion makes the merge fail, rather than drop a change, when the object moved meanwhile
      const patch = { ...merge, metadata: { ...(merge.metadata as object | undefined), resourceVersion: existing.metadata.resourceVersion } };
      await writer.kube.patch(resource, saName, namespace, patch, 'merge', { fieldManager: writer.fieldManager });
      return record('update', what);
    } catch (error) {
      if (!isConflict(error) || attempt >= 3) return record('fail', `${name}: ${describe(error)}`);
      const fresh = await writer.kube.tryGet(resource, saName, namespace);
      if (!fresh) return record('fail', `${name}: it was deleted while being merged`);
      existing = fresh;
    }
  }
}

/** reads an object until it exists or restore-wait-timeout passes */
async function awaitObject(writer: ObjectWriter, resource: ApiResource, name: string, namespace: string): Promise<KubeObject | undefined> {
  const deadline = Date.now() + writer.waitTimeoutMs;
  for (let pause = 50; ; pause = Math.min(2000, pause * 2)) {
    const found = await writer.kube.tryGet(resource, name, namespace);
    if (found || Date.now() >= deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(0, deadline - Date.now()))));
  }
}

/**
 * Writes the archived status of an object just created (src/kubeflow/status-kinds.ts), through the status
 * subresource. Its controller may have written a first status meanwhile (Katib marks a new Experiment Created), so
 * the status is replaced whole by a JSON patch, which the API server applies to the object as it is then (and
 * retries itself on a conflict: kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go),
 * so the archived status wins in one request. A PUT from the created object met a 409 whenever the controller had
 * written first, and cost a GET and a second PUT. The controller's own write after ours meets the 409 instead and
 * reads the archived status on its retry. Returns why it could not be written, or undefined.
 */
export async function writeArchivedStatus(kube: RestoreKube, resource: ApiResource, made: KubeObject, status: unknown, fieldManager: string): Promise<string | undefined> {
  // "add" replaces a member that exists and adds one that does not (RFC 6902, 4.1), so the result is the same
  // whoever wrote first, and resending it changes nothing more
  const replaceStatus = [{ op: 'add', path: '/status', value: status }];
  try {
    await kube.patchStatus(resource, made.metadata.name!, made.metadata.namespace, replaceStatus, 'json', { fieldManager, safeToRetry: true });
    return undefined;
  } catch (error) {
    return isNotFound(error) ? 'it was deleted meanwhile' : describe(error);
  }
}
