// Preflight: everything a restore checks before its first write; it only reads, decides and spools. The backup is
// chosen and read as every command trusts one (trusted-backup.ts over src/catalog), then its tarball is streamed once
// (archive-scan.ts): every checksum is verified, every item is decided by src/kubeflow/restore-selection.ts (restored,
// skipped or refused, with its category), sealed Secrets are opened (and dropped again) to prove the key, and items
// are spooled per restore step and namespace. Then the target is asked whether it serves every kind and
// version needed.
// Any offender refuses the whole restore, and the refusal lists every one of them — unless skip-refused is set: then
// what the allow-list refuses is left out and listed, and everything else is restored. An archive that fails its
// checksums is refused whatever skip-refused says.
import type { RestoreKube } from './kube-port.ts';
import type { ApiResource, KubeObject } from '../kube/types.ts';
import type { BackupStore } from '../store/backup-store.ts';
import { readBindableRoles } from '../kubeflow/bindable-roles.ts';
import { compareForRestore } from '../kubeflow/restore-order.ts';
import { RestoreInputError, RestoreRefusedError, listOf } from './errors.ts';
import { Spool } from './spool.ts';
import { ArchiveScan } from './archive-scan.ts';
import { readTrustedManifest } from './trusted-backup.ts';
import type { Preflight, PreflightInputs, PreflightRequest, SpooledStep, UnservedStep } from './preflight-types.ts';

export type { Preflight, PreflightInputs, PreflightRequest, PvcClass, SkippedItem, SpooledStep, UnservedStep } from './preflight-types.ts';

export async function runPreflight(kube: RestoreKube, store: BackupStore, request: PreflightRequest, inputs: PreflightInputs = {}): Promise<Preflight> {
  // The target's discovery is needed only at the end, and costs 0.1-0.2 s of round trips: it runs while the archive
  // is read. A failure is not reported here; the lookups at the end ask again and report it.
  void kube.discover().catch(() => undefined);
  // which ClusterRoles an owner may bind on the target (src/kubeflow/bindable-roles.ts), read while the archive is
  const bindableRoles = readBindableRoles(kube);
  bindableRoles.catch(() => undefined);
  const warnings: string[] = [];
  const trust = request.trust ?? {};
  const trusted = await readTrustedManifest(store, request.backupId, trust, warnings);
  const { backupId } = trusted;
  // Chosen Profiles and namespaces are known up front; every item is still checked, only the chosen ones are spooled.
  const chosen = new Set([...request.profiles ?? [], ...request.namespaces ?? []]);
  const scan = new ArchiveScan(trusted, { ...inputs, trust, skipRefused: request.skipRefused === true, protectedNamespaces: request.protectedNamespaces ?? [] }, chosen, await Spool.create());
  try {
    await scan.read(store, await bindableRoles);
    const { offenders, refused } = scan;
    const profileNamespaces = new Set(scan.profiles.keys());
    await scan.refuseNamespacesWithoutProfile(profileNamespaces);
    if (!request.skipRefused) offenders.push(...refused);
    if (offenders.length > 0) {
      throw new RestoreRefusedError(
        `Backup ${backupId} was refused and nothing was restored: ${offenders.length} ${offenders.length === 1 ? 'item breaks' : 'items break'} the restore rules (${listOf(offenders, 50)}).`,
        offenders,
      );
    }
    if (scan.sealProblem) throw new RestoreInputError(`${scan.sealProblem} Nothing was restored.`);

    // Selection: Profiles and namespaces must be in the archive.
    const unknown = [...chosen].filter((name) => !profileNamespaces.has(name));
    if (unknown.length > 0) {
      throw new RestoreInputError(`Backup ${backupId} has no Profile or profile namespace ${listOf(unknown)}; it holds ${listOf([...profileNamespaces].sort())}.`);
    }
    const selected = chosen.size > 0 ? chosen : profileNamespaces;
    const profileResource = await kube.findByResource('kubeflow.org', 'profiles');
    const chosenProfiles = [...scan.profiles.values()].filter((p) => selected.has(p.metadata.name ?? '')).sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
    const target = await targetSteps(kube, backupId, scan, chosenProfiles, profileResource);
    // a dry run reports the kinds the target serves in no version; skip-unserved leaves them out
    const tolerateUnserved = request.dryRun === true || request.skipUnserved === true;
    if (target.unserved.length > 0 && !tolerateUnserved) {
      const described = target.unserved.map(describeUnserved);
      throw new RestoreRefusedError(
        `The target cluster does not serve ${listOf(described, 50)}, which backup ${backupId} holds; install the matching Kubeflow charms (or CRDs) first, leave those kinds out with exclude-resources, or restore the rest with skip-unserved. Nothing was restored.`,
        described.map((m) => `${m}: not served by the target`),
      );
    }
    if (offenders.length > 0) {
      throw new RestoreRefusedError(`Backup ${backupId} was refused and nothing was restored: ${listOf(offenders, 50)}.`, offenders);
    }
    return {
      backupId, manifest: trusted.manifest, authentication: trusted.authentication, warnings, profiles: chosenProfiles, profileResource,
      namespaces: selected, ...target, skipped: scan.skippedIn(selected), refused: request.skipRefused ? refused : [],
      opener: scan.opener, spool: scan.spool, objectsChecked: scan.objectsChecked, ownerUids: scan.ownerUids, pvcClasses: scan.pvcClasses,
    };
  } catch (error) {
    await scan.spool.remove();
    throw error;
  }
}

/** The target must serve every kind and version the chosen objects need: the steps it serves, in restore order. */
async function targetSteps(
  kube: RestoreKube, backupId: string, scan: ArchiveScan, chosenProfiles: readonly KubeObject[], profileResource: ApiResource | undefined,
): Promise<Pick<Preflight, 'steps' | 'unserved' | 'mappings'>> {
  const missing: string[] = [];
  for (const version of new Set(chosenProfiles.map((p) => p.apiVersion.split('/')[1] ?? ''))) {
    if (!profileResource || !profileResource.versions.includes(version)) missing.push(`profiles.kubeflow.org/${version}`);
  }
  if (missing.length > 0) {
    throw new RestoreRefusedError(
      `The target cluster does not serve ${listOf(missing)}, which backup ${backupId} needs; install the matching Kubeflow charms (or CRDs) first. Nothing was restored.`,
      missing.map((m) => `${m}: not served by the target`),
    );
  }
  const steps: SpooledStep[] = [];
  const unserved: UnservedStep[] = [];
  const mappings: string[] = [];
  const ordered = [...scan.pending.values()].sort(compareForRestore);
  for (const step of ordered) {
    const served = await kube.findByResource(step.group, step.resource);
    for (const version of step.versions.keys()) {
      const key = `${step.key}@${version}`;
      let through = version;
      if (served && !served.versions.includes(version)) {
        // Another served version of the kind, when the CRD converts with None: the objects are the same there but
        // for apiVersion, and the target's schema for that version judges each on the write.
        const mapped = await mappedVersion(kube, served);
        if (mapped) {
          through = mapped;
          mappings.push(`${step.key} ${version} → ${mapped}`);
        }
      }
      if (!served || !served.versions.includes(through)) {
        unserved.push({ what: `${step.key}/${version}`, key: step.key, spoolKey: key, count: scan.spool.count(key) });
        continue;
      }
      if (![...step.kinds].every((k) => k === served.kind)) {
        scan.offenders.push(`${step.key}: the archive files ${listOf([...step.kinds])} objects there, but the target serves ${served.kind}`);
        continue;
      }
      steps.push({
        key: step.key, group: step.group, resource: step.resource, target: { ...served, version: through }, count: scan.spool.count(key),
        ...(through !== version ? { archivedVersion: version } : {}),
      });
    }
  }
  return { steps, unserved, mappings };
}

export function spoolKey(step: SpooledStep): string {
  return `${step.key}@${step.archivedVersion ?? step.target.version}`;
}

/** `mxjobs.kubeflow.org/v1 (3 objects)` */
export function describeUnserved(step: UnservedStep): string {
  return `${step.what} (${step.count} object${step.count === 1 ? '' : 's'})`;
}

/**
 * The version the target serves a custom resource through when the archived one is not served: its preferred
 * version, if the CRD converts with None (kubernetes/apiextensions-apiserver pkg/apiserver/conversion/nop_converter.go:
 * only apiVersion changes, so the same object is valid there as far as its schema says). Built-in kinds, Webhook
 * conversion and a CRD this client may not read: undefined (no mapping).
 */
async function mappedVersion(kube: RestoreKube, served: ApiResource): Promise<string | undefined> {
  if (served.group === '' || !served.group.includes('.')) return undefined;
  const crds = await kube.findByResource('apiextensions.k8s.io', 'customresourcedefinitions').catch(() => undefined);
  if (!crds) return undefined;
  const crd = await kube.tryGet(crds, `${served.resource}.${served.group}`).catch(() => undefined);
  if (!crd) return undefined;
  const strategy = (crd.spec as { conversion?: { strategy?: string } } | undefined)?.conversion?.strategy ?? 'None';
  return strategy === 'None' ? served.version : undefined;
}
