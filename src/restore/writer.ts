// The writer: one archived object at a time, created, or judged against what the target holds and reconciled with it
// as the conflict policy says. How the pass treats the target is its one mode (mode.ts). Where a kind needs more than
// create-or-compare (a controller's ServiceAccount, a status written back, a PVC's class and fill mark, …), the kinds
// table says which behaviour (src/kubeflow/write-behaviours.ts) and kind-writes.ts runs it: no kind is named here.
import type { ApiResource, KubeObject, OwnerReference } from '../kube/types.ts';
import { apiVersionOf } from '../kube/types.ts';
import { isAlreadyExists, isConflict } from '../kube/errors.ts';
import { describeObject } from '../kubeflow/identity.ts';
import { replacementFor } from '../kubeflow/restore-changes.ts';
import { writeBehavioursOf } from '../kubeflow/write-behaviours.ts';
import { describe } from '../errors/index.ts';
import { neutralWording } from '../errors/remedy.ts';
import type { RestoreKube } from './kube-port.ts';
import type { Preflight } from './preflight.ts';
import type { ConflictPolicy, RestoreRequest } from './request.ts';
import type { SpooledItem } from './spool.ts';
import { RestoreReport, type Verdict } from './report.ts';
import { unmetFields } from './compare.ts';
import { restorable } from './normalize.ts';
import { droppedFields, dropSentences } from './target-schema.ts';
import { RestoreStoppedError, listOf } from './errors.ts';
import { mergeIntoControllerServiceAccount } from './controller-objects.ts';
import { WebhookUnreachableError } from './webhook-wait.ts';
import type { DryRunAsk } from './dry-run-ask.ts';
import { writes, type WriteMode } from './mode.ts';
import * as kinds from './kind-writes.ts';

export const FIELD_MANAGER = 'kubeflow-upgrader';

/** what the writer needs of the run besides the behaviours' context */
export interface WriterOptions extends kinds.KindWriteContext {
  preflight: Pick<Preflight, 'opener' | 'ownerUids'>;
  request: Pick<RestoreRequest, 'conflictPolicy' | 'waitTimeoutMs' | 'wording'>;
  /** set in a dry run: how its creates are asked of the target */
  ask?: DryRunAsk | undefined;
}

type Record_ = (verdict: Verdict, reason?: string) => Verdict;

export class RestoreWriter {
  readonly report = new RestoreReport();
  readonly warnings: string[] = [];
  readonly conflicts: string[] = [];
  /** a sentence per field the target's schema dropped (dry run: would drop) */
  readonly dropped: string[] = [];
  /** archived uid → uid in the target, for relinking ownerReferences (only for uids some object names as owner) */
  private readonly uids = new Map<string, string>();
  private readonly policy: ConflictPolicy;
  private readonly kube: RestoreKube;
  private readonly mode: WriteMode;

  constructor(private readonly options: WriterOptions) {
    this.kube = options.kube;
    this.mode = options.mode;
    this.policy = options.request.conflictPolicy ?? 'skip';
  }

  /** `item` (of report key `key`) written through `resource`; `live` holds what the target has, where it was listed */
  async applyOne(key: string, resource: ApiResource, item: SpooledItem, live: ReadonlyMap<string, KubeObject>): Promise<Verdict> {
    const archived = item.object;
    const namespace = archived.metadata.namespace ?? '';
    const name = `${describeObject(archived)}`;
    const record: Record_ = (verdict, reason) => {
      this.report.record(key, archived.kind, namespace, verdict, reason);
      return verdict;
    };
    const behaviours = writeBehavioursOf(archived);
    let wanted: KubeObject;
    try {
      wanted = this.relink(this.options.preflight.opener ? this.options.preflight.opener.open(archived) : archived);
      wanted = kinds.mapped(this.options, behaviours, wanted);
      // restored through another served version (conversion None): only apiVersion differs
      const through = apiVersionOf(resource.group, resource.version);
      if (wanted.apiVersion !== through) wanted = { ...wanted, apiVersion: through };
    } catch (error) {
      return record('fail', `${name}: ${(error as Error).message}`);
    }
    const adapted = await kinds.adapted(this.options, behaviours, resource, wanted);
    const verdict = await this.write(resource, item, behaviours, adapted.object, live, record, name);
    if (adapted.note && (verdict === 'create' || verdict === 'update')) this.warnings.push(adapted.note);
    return verdict;
  }

  /** `wanted` (the archived object as the restore writes it) created, or the live one reconciled with it */
  private async write(
    resource: ApiResource, item: SpooledItem, b: kinds.Behaviours, wanted: KubeObject, live: ReadonlyMap<string, KubeObject>, record: Record_, name: string,
  ): Promise<Verdict> {
    const archived = item.object;
    const liveKey = `${archived.metadata.namespace ?? ''}/${archived.metadata.name}`;
    if (b.has('merge-into-controller-object')) return this.mergeServiceAccount(resource, wanted, live.get(liveKey), record, name);
    let existing = live.get(liveKey);
    if (!existing) {
      if (this.mode === 'dry-run') {
        const asIs = kinds.suspension(b, item, wanted)?.create ?? wanted;
        return this.options.ask!.create(this.kube, this.options.webhookWait, FIELD_MANAGER, this.dropped, resource, item, asIs, record, name);
      }
      // the conflict scan only looks for conflicts
      if (this.mode === 'conflict-scan') return record('create');
      try {
        const sent = kinds.toCreate(this.options, b, item, resource, wanted);
        const made = await this.options.webhookWait.write(name, () => this.kube.create(resource, sent, { safeToRetry: true, fieldManager: FIELD_MANAGER }));
        this.dropped.push(...dropSentences(archived, droppedFields(sent, made), false));
        this.remember(item.uid, made);
        const unfinished = await kinds.afterCreate(this.options, b, item, resource, wanted, made, name);
        if (unfinished) return record(unfinished.verdict, unfinished.reason);
        const pin = kinds.pinOf(b, item, wanted);
        return record('create', pin === undefined ? undefined : kinds.pinReason(name, pin));
      } catch (error) {
        if (error instanceof WebhookUnreachableError) return record('fail', error.message);
        if (!isAlreadyExists(error)) return record('fail', `${name}: ${describe(error)}`);
        // Made meanwhile (by a controller, or by a previous attempt whose answer was lost): judge it like any existing object.
        existing = await this.kube.tryGet(resource, archived.metadata.name!, archived.metadata.namespace);
        if (!existing) return record('fail', `${name}: it was reported to exist and then was not found`);
      }
    }
    return this.reconcile(resource, item, b, wanted, existing, record, name);
  }

  private async reconcile(
    resource: ApiResource, item: SpooledItem, b: kinds.Behaviours, wanted: KubeObject, existing: KubeObject, record: Record_, name: string,
  ): Promise<Verdict> {
    const archived = item.object;
    const dry = !writes(this.mode);
    const unfinished = await kinds.finishInterruptedCreate(this.options, b, item, resource, wanted, existing, name);
    if (unfinished) {
      if (unfinished.verdict === 'update' && !dry) this.remember(item.uid, existing);
      return record(unfinished.verdict, unfinished.reason);
    }
    for (let attempt = 0; ; attempt++) {
      const differs = unmetFields(wanted, existing);
      if (differs.length === 0) {
        this.remember(item.uid, existing);
        return record('unchanged');
      }
      const what = `${name} differs from the backup in ${listOf(differs, 5)}`;
      if (this.policy === 'skip') {
        this.remember(item.uid, existing);
        return record('skip', `${what} (conflict-policy=skip keeps the live object)`);
      }
      if (this.policy === 'fail') {
        this.conflicts.push(name);
        if (dry) return record('fail', `${what} (conflict-policy=fail)`);
        record('fail', `${what} (conflict-policy=fail)`);
        throw new RestoreStoppedError(`conflict-policy=fail: ${what}; the restore stopped there — rerun with conflict-policy=skip or update.`);
      }
      // a binding of another role is never updated into this one (role-ref.ts): kept as it is, and said once
      const otherRole = kinds.refusedUpdate(b, wanted, existing);
      if (otherRole) {
        this.remember(item.uid, existing);
        return record('fail', `${name}: not updated: ${otherRole}; the live binding is kept — delete it and rerun to restore the backup's`);
      }
      // what the target set that its API server refuses to see change (restore-changes.ts, keepOnUpdate)
      const kept = replacementFor(wanted, existing);
      const replacement: KubeObject = { ...kept, metadata: { ...kept.metadata, resourceVersion: existing.metadata.resourceVersion } };
      try {
        // What the server would keep (its dryRun=All answer) is what the live object is compared with: a field the
        // target's schema prunes is no difference, so a rerun after pruning writes nothing.
        const answer = await this.options.webhookWait.write(name, () => this.kube.replace(resource, replacement, { dryRun: true, fieldManager: FIELD_MANAGER }));
        const fields = droppedFields(replacement, answer);
        const drops = dropSentences(archived, fields, dry);
        if (unmetFields(restorable(answer), existing).length === 0) {
          this.dropped.push(...drops);
          this.remember(item.uid, existing);
          return record('unchanged', fields.length ? `${name} holds what the target keeps of the backup (${listOf(fields, 5)} dropped by its schema)` : undefined);
        }
        if (dry) {
          this.dropped.push(...drops);
          return record('update', `${what} (conflict-policy=update overwrites it)`);
        }
        const updated = await this.options.webhookWait.write(name, () => this.kube.replace(resource, replacement, { fieldManager: FIELD_MANAGER }));
        this.dropped.push(...dropSentences(archived, droppedFields(replacement, updated), false));
        this.remember(item.uid, updated);
        return record('update', `${what} (conflict-policy=update)`);
      } catch (error) {
        if (error instanceof WebhookUnreachableError) return record('fail', error.message);
        if (!isConflict(error) || attempt >= 3) return record('fail', `${name}: ${describe(error)}`);
        const fresh = await this.kube.tryGet(resource, archived.metadata.name!, archived.metadata.namespace);
        if (!fresh) return record('fail', `${name}: it was deleted while being updated`);
        existing = fresh;
      }
    }
  }

  private mergeServiceAccount(resource: ApiResource, wanted: KubeObject, known: KubeObject | undefined, record: Record_, name: string): Promise<Verdict> {
    const { request } = this.options;
    const writer = {
      kube: this.kube, dry: !writes(this.mode), fieldManager: FIELD_MANAGER, waitTimeoutMs: request.waitTimeoutMs ?? 300_000,
      wording: request.wording ?? neutralWording, warn: (w: string) => void this.warnings.push(w),
    };
    return mergeIntoControllerServiceAccount(writer, resource, wanted, known, record, name);
  }

  /** non-controller ownerReferences point at the restored owners' new uids; references to owners not restored are dropped */
  private relink(object: KubeObject): KubeObject {
    const owners = object.metadata.ownerReferences;
    if (!owners) return object;
    const kept: OwnerReference[] = [];
    for (const owner of owners) {
      const uid = this.uids.get(owner.uid);
      if (uid) kept.push({ ...owner, uid });
    }
    if (kept.length) object.metadata.ownerReferences = kept;
    else delete object.metadata.ownerReferences;
    return object;
  }

  private remember(archivedUid: string | undefined, live: KubeObject): void {
    if (archivedUid && live.metadata.uid && this.options.preflight.ownerUids.has(archivedUid)) this.uids.set(archivedUid, live.metadata.uid);
  }
}
