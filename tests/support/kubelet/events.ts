// Warning events as the components' event recorders write them: one Event per object, reason and message, counted
// again (count + 1, a new lastTimestamp) when the same one recurs instead of written twice.
// Upstream: kubernetes/kubernetes staging/src/k8s.io/client-go/tools/record/events_cache.go (EventCorrelator: the
// eventLogger's de-duplication by involved object, type, reason and message) and tools/record/event.go (the Event's
// name `<object>.<unique suffix>`, source.component). Aggregation of similar messages and the spam filter are not
// simulated: no test records ten distinct messages about one object.
import { randomBytes } from 'node:crypto';
import type { KubeObject } from '../../../src/kube/types.ts';
import type { InProcessApi } from '../cluster/contract.ts';
import { now } from './objects.ts';
import { EVENTS } from './refs.ts';

export type RecordWarning = (object: KubeObject, reason: string, message: string, component: string) => void;

export function warningRecorder(api: InProcessApi): RecordWarning {
  return (object, reason, message, component) => {
    const namespace = object.metadata.namespace ?? '';
    const at = now();
    const same = api.list(EVENTS, { namespace }).find((e) => {
      const ev = e as { involvedObject?: { uid?: string }; reason?: string; message?: string };
      return ev.involvedObject?.uid === object.metadata.uid && ev.reason === reason && ev.message === message;
    });
    if (same) {
      api.mergePatch(EVENTS, same.metadata.name ?? '', namespace, { count: ((same as { count?: number }).count ?? 1) + 1, lastTimestamp: at });
      return;
    }
    api.create(EVENTS, {
      apiVersion: 'v1', kind: 'Event',
      metadata: { name: `${object.metadata.name}.${randomBytes(8).toString('hex')}`, namespace },
      involvedObject: { apiVersion: object.apiVersion, kind: object.kind, name: object.metadata.name, namespace, uid: object.metadata.uid },
      reason, message, type: 'Warning', source: { component },
      firstTimestamp: at, lastTimestamp: at, count: 1,
    } as KubeObject);
  };
}
