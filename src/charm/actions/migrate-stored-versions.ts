// The migrate-stored-versions action: rewrites the objects of one CRD (or every protected one) into the storage
// version, then trims status.storedVersions. The engine's checkpoint goes to the unit's state after every page, so a
// rerun after a timeout or a crash continues where the last one stopped instead of starting over.
import { z } from 'zod';
import type { ActionContext } from '../action-context.ts';
import type { MigrationCheckpoint } from '../../guard/migrate.ts';
import { describe } from '../../errors/index.ts';

export const CHECKPOINT_KEY = 'migrate-stored-versions-checkpoint';

const Checkpoint = z.object({ crd: z.string(), storageVersion: z.string(), after: z.string(), rewritten: z.number().int().min(0) });

async function savedCheckpoint(ctx: ActionContext<'migrate-stored-versions'>): Promise<MigrationCheckpoint | undefined> {
  const raw = await ctx.stateGet(CHECKPOINT_KEY);
  if (!raw) return undefined;
  try {
    const parsed = Checkpoint.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    // An unreadable checkpoint only costs a restart from the first object: rewriting is idempotent.
    return undefined;
  }
}

export async function run(ctx: ActionContext<'migrate-stored-versions'>): Promise<void> {
  const kube = await ctx.kube();
  const { migrateStoredVersions } = await import('../../guard/migrate.ts');
  const resumeFrom = await savedCheckpoint(ctx);
  if (resumeFrom) await ctx.progress(`resuming ${resumeFrom.crd} after ${resumeFrom.after} (${resumeFrom.rewritten} objects already rewritten)`);
  let result;
  try {
    result = await migrateStoredVersions(kube, {
      crd: ctx.params.crd,
      protectedGroups: ctx.config['protected-crd-groups'],
      ...(resumeFrom ? { resumeFrom } : {}),
      onProgress: (progress) => void ctx.progress(progress.message),
      onCheckpoint: (checkpoint) => ctx.stateSet({ [CHECKPOINT_KEY]: checkpoint ? JSON.stringify(checkpoint) : '' }),
    });
  } catch (error) {
    const sentence = describe(error);
    ctx.fail(/[.]$/.test(sentence) ? sentence : `The migration stopped: ${sentence}; run migrate-stored-versions again to continue.`);
  }
  await ctx.setResults({
    migrated: result.migrated,
    summary: result.summary,
    crds: result.crds.map((crd) => ({
      name: crd.crd,
      'storage-version': crd.storageVersion,
      'stored-versions-before': crd.storedVersionsBefore.join(','),
      'stored-versions-after': crd.storedVersionsAfter.join(','),
      rewritten: crd.rewritten,
      changed: crd.changed,
    })),
  });
}
