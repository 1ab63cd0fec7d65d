// Watching a hardened Job (a volume mover, a control-plane copy) until its Pod runs, and saying why it did not. A Job whose Pod cannot start gives no sign of it
// on the Job itself: the reason sits in the Pod's container status (ErrImagePull, ImagePullBackOff; kubernetes
// pkg/kubelet/images/image_manager.go, which also records each failed pull as a "Failed" event on the Pod), in its
// PodScheduled condition (Unschedulable, from the scheduler), or, when no Pod could be made at all, in a FailedCreate
// Event on the Job ("Error creating: <why>", kubernetes pkg/controller/controller_utils.go), which is where a
// ResourceQuota refusal ends up.
import type { KubeObject } from '../kube/types.ts';
import { webhookCallFailure } from '../kube/errors.ts';
import { EVENTS, PODS, type VolumeKube } from './kube-port.ts';

/**
 * The settings that fix a Pod that cannot start, named by whoever runs the Job: the image setting that names `image`
 * (volume-mover-image, control-plane-rclone-image ...), and the resources setting if the Job has one.
 */
export interface StartRemedies {
  imageSetting: (image: string) => string;
  resourcesSetting?: string;
}

interface ContainerStatus {
  name?: string;
  image?: string;
  state?: { waiting?: { reason?: string; message?: string }; running?: unknown; terminated?: unknown };
}
interface PodStatus {
  phase?: string;
  conditions?: { type?: string; status?: string; reason?: string; message?: string }[];
  containerStatuses?: ContainerStatus[];
  initContainerStatuses?: ContainerStatus[];
}

const PULL_FAILURES = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull', 'RegistryUnavailable']);

/** A Pod has started once a container ran or the Pod left Pending. */
export function podStarted(pod: KubeObject): boolean {
  const status = (pod.status ?? {}) as PodStatus;
  if (status.phase && status.phase !== 'Pending') return true;
  return [...(status.containerStatuses ?? []), ...(status.initContainerStatuses ?? [])].some((c) => c.state?.running || c.state?.terminated);
}

/**
 * What keeps one Job's Pod from starting, as it is seen over several looks: the kubelet alternates ErrImagePull (with
 * the registry's answer) and ImagePullBackOff (without it), so the most telling message seen so far is kept.
 */
export class StartObserver {
  /** the last ErrImagePull (or other failure with the registry's answer) seen, with that reason */
  private pullError: { reason: string; message: string } | undefined;
  private lastPull: { image: string; reason: string; message: string } | undefined;

  constructor(
    private readonly kube: VolumeKube, private readonly namespace: string, private readonly jobName: string, private readonly remedies: StartRemedies,
  ) {}

  /** true once the Job's Pod runs (or ran) */
  async look(): Promise<boolean> {
    return this.observe(await this.kube.list(PODS, this.namespace, `job-name=${this.jobName}`));
  }

  private observe(pods: KubeObject[]): boolean {
    for (const pod of pods) {
      if (podStarted(pod)) return true;
      const status = (pod.status ?? {}) as PodStatus;
      for (const c of [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])]) {
        const waiting = c.state?.waiting;
        if (!waiting?.reason || !PULL_FAILURES.has(waiting.reason)) continue;
        this.lastPull = { image: c.image ?? 'its image', reason: waiting.reason, message: waiting.message ?? '' };
        if (waiting.reason !== 'ImagePullBackOff' && waiting.message) this.pullError = { reason: waiting.reason, message: waiting.message };
      }
    }
    return false;
  }

  /** Why the Pod has not started: the image, the scheduler, the Job's FailedCreate event, or no Pod at all. */
  async reason(): Promise<string> {
    const pods = await this.kube.list(PODS, this.namespace, `job-name=${this.jobName}`);
    this.observe(pods); // the latest state counts too, not only what the earlier looks saw
    if (this.lastPull) {
      const { image, reason } = this.lastPull;
      // Seen only backing off: the registry's answer is in the kubelet's "Failed" event on the Pod.
      this.pullError ??= await this.pullFailureEvent(pods);
      const why = this.pullError ? `${this.pullError.reason}: ${oneLine(pullCause(this.pullError.message))}` : reason;
      return `its image ${image} could not be pulled (${why}); make the image reachable from the nodes or set ${this.remedies.imageSetting(image)} to a copy in a registry they can reach`;
    }
    for (const pod of pods) {
      const scheduled = ((pod.status ?? {}) as PodStatus).conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
      if (scheduled) return `the scheduler cannot place its Pod (${scheduled.reason ?? 'Unschedulable'}: ${oneLine(scheduled.message ?? 'no reason given')})`;
    }
    if (pods.length > 0) {
      const status = (pods[0]!.status ?? {}) as PodStatus;
      // e.g. CreateContainerConfigError when a Secret it needs is missing
      const waiting = [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])]
        .map((c) => c.state?.waiting).find((w) => w?.reason && !['ContainerCreating', 'PodInitializing'].includes(w.reason));
      const why = waiting ? ` (${waiting.reason}${waiting.message ? `: ${oneLine(waiting.message)}` : ''})` : '';
      return `its Pod ${pods[0]!.metadata.name} is still ${status.phase ?? 'Pending'}${why}`;
    }
    const refusal = await this.failedCreate();
    if (refusal) return describeRefusal(refusal, this.remedies.resourcesSetting);
    return 'no Pod was created for it';
  }

  private async pullFailureEvent(pods: KubeObject[]): Promise<{ reason: string; message: string } | undefined> {
    const names = new Set(pods.map((p) => p.metadata.name));
    const events = await this.kube.list(EVENTS, this.namespace).catch(() => []);
    const failed = events.filter((e) => {
      const ev = e as { involvedObject?: { kind?: string; name?: string }; reason?: string; message?: string };
      return ev.involvedObject?.kind === 'Pod' && names.has(ev.involvedObject.name) && ev.reason === 'Failed' && ev.message?.startsWith('Failed to pull image');
    }).sort((a, b) => eventTime(a).localeCompare(eventTime(b))).at(-1) as { message?: string } | undefined;
    if (!failed?.message) return undefined;
    return { reason: 'ErrImagePull', message: failed.message.replace(/^Failed to pull image "[^"]*": /, '') };
  }

  private async failedCreate(): Promise<string | undefined> {
    const events = await this.kube.list(EVENTS, this.namespace);
    const mine = events.filter((e) => {
      const involved = (e as { involvedObject?: { kind?: string; name?: string } }).involvedObject;
      return involved?.kind === 'Job' && involved.name === this.jobName && (e as { reason?: string }).reason === 'FailedCreate';
    });
    const latest = mine.sort((a, b) => eventTime(a).localeCompare(eventTime(b))).at(-1);
    return (latest as { message?: string } | undefined)?.message;
  }
}

function eventTime(event: KubeObject): string {
  const e = event as { lastTimestamp?: string; eventTime?: string };
  return e.lastTimestamp ?? e.eventTime ?? event.metadata.creationTimestamp ?? '';
}

/** containerd's pull errors repeat the image twice before the cause ("failed to … "<image>": failed to … "<image>": <cause>"). */
function pullCause(message: string): string {
  return message.replace(/^(failed to (pull and unpack image|resolve reference) "[^"]*": )+/, '');
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim().replace(/\.$/, '');
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

/**
 * The API server's quota refusals name the quota: `failed quota: <name>: must specify limits.cpu for: mover` (a
 * resource the quota tracks is not set) or `exceeded quota: <name>, requested: …, used: …, limited: …` (kubernetes
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go).
 */
export function describeRefusal(message: string, resourcesSetting?: string): string {
  const why = oneLine(message.replace(/^Error creating:\s*/, ''));
  const missing = /failed quota: ([^:]+): must specify (.+)$/.exec(why);
  if (missing) {
    const fix = resourcesSetting ? `set ${resourcesSetting} to requests and limits that fit the quota` : 'exempt the namespace from that quota';
    return `ResourceQuota ${missing[1]} refuses its Pod: it must specify ${missing[2]}; ${fix}`;
  }
  const exceeded = /exceeded quota: ([^,]+), (requested: .+)$/.exec(why);
  if (exceeded) return `ResourceQuota ${exceeded[1]} refuses its Pod (${exceeded[2]}); ${resourcesSetting ? `lower ${resourcesSetting} or raise the quota` : 'raise the quota'}`;
  // a Pod admission webhook the API server cannot call (failurePolicy Fail): in a fresh cluster Katib's Pod mutator
  // matches every Pod of a profile namespace until katib-controller is Ready (src/kube/errors.ts unreachableWebhook)
  const webhook = webhookCallFailure(why);
  if (webhook) return `admission webhook "${webhook.name}" cannot be called, so no Pod can be made in this namespace (${webhook.why}); its operator is likely still starting: once its Pod is Ready, run this again`;
  return `the Job cannot create its Pod: ${why}`;
}
