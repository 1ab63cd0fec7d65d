// The pre-upgrade-check action: go / no-go for an in-place `juju refresh`, with every reason at once so that an
// operator fixes them all in one round. A no-go is a result, not a failed action: scripts read `verdict`.
import { charmWording } from '../remedy-wording.ts';
import type { ActionContext } from '../action-context.ts';
import { guardOptionsOf } from '../guard.ts';
import { charmProblemSentence } from '../s3-wording.ts';
import { describeInline } from '../../errors/index.ts';

export async function run(ctx: ActionContext<'pre-upgrade-check'>): Promise<void> {
  const kube = await ctx.kube();
  let guard;
  try {
    guard = await guardOptionsOf(ctx.config);
  } catch (error) {
    ctx.fail(`The charm's ${describeInline(error)}; fix it with juju config and retry.`);
  }
  const [{ preUpgradeCheck, preflightActionResults }, { checkBucket }] = await Promise.all([import('../../guard/preflight.ts'), import('../../store/s3-client.ts')]);
  const maxBackupAgeMs = ctx.config['max-backup-age'] * 1000;
  await ctx.progress('checking the guard, S3, the newest backup, the protected CRDs and the Profiles');
  const result = await preUpgradeCheck({
    wording: charmWording,
    kube,
    guard,
    maxBackupAgeMs,
    // Not ctx.s3(): an S3 that is not ready is one reason among others, not the end of the check.
    checkS3: async () => {
      const settings = await s3Settings(ctx);
      const check = await checkBucket(settings);
      if (!check.ok) throw new Error(charmProblemSentence(check.problem));
    },
    newestCompleteBackup: async () => {
      // From S3, not from what this unit remembers: the check must see what a restore would see, and with a key choose
      // as restore-state's latest does (only authenticated backups, by their manifests).
      const settings = await s3Settings(ctx);
      const [{ newestForCheck }, { openBackupStore }] = await Promise.all([import('../../catalog/latest.ts'), import('../../store/open.ts')]);
      return newestForCheck(openBackupStore(settings), await ctx.encryptionKey());
    },
  });
  // Already action-set keys (`reasons.0`, `crds.0.name`): set as they are, not flattened again.
  await ctx.charm.tools.actionSet(preflightActionResults(result));
  await ctx.log('INFO', `pre-upgrade-check: ${result.verdict}${result.reasons.length ? ` (${result.reasons.join(' ')})` : ''}`);
  for (const warning of result.warnings) await ctx.log('WARNING', warning);
}

async function s3Settings(ctx: ActionContext<'pre-upgrade-check'>) {
  const { readS3Readiness } = await import('../s3.ts');
  const readiness = await readS3Readiness(ctx.charm);
  switch (readiness.state) {
    case 'ready':
      return readiness.settings;
    case 'no-relation':
      throw new Error('S3 is not configured: relate this charm to s3-integrator');
    case 'waiting':
      throw new Error(readiness.message);
    case 'invalid':
      throw new Error(readiness.problem);
  }
}
