// npm run demo [-- --quick] [-- --keep] [-- --schedule]: the whole story on one machine — two embedded Kubeflow clusters and an S3
// server; the PACKED charm's real dispatch backs up cluster A and restores into the fresh cluster B; then the two
// clusters' user state and volume files are compared. Exits 0 only when they are the same, 2 on a wrong flag.
// --kubeflow A[:B] makes cluster A serve the Kubeflow CRDs of CKF release A and B those of release B (a blue/green
// upgrade across releases); without it both serve permissive CRDs.
import { parseArgs } from 'node:util';
import { requireSystemTools } from '../scripts/system-tools.ts';

function usage(message: string): never {
  process.stderr.write(`demo: ${message}; usage: npm run demo -- [--quick] [--keep] [--schedule] [--profiles N] [--kubeflow A[:B]]\n`);
  process.exit(2);
}

function parseDemoArgs() {
  try {
    return parseArgs({ options: { quick: { type: 'boolean' }, keep: { type: 'boolean' }, schedule: { type: 'boolean' }, profiles: { type: 'string' }, kubeflow: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true }).values;
  } catch (error) {
    return usage((error as Error).message.split('\n')[0]!.replace(/\. To specify.*$/, ''));
  }
}
const args = parseDemoArgs();
if (args.help) {
  process.stdout.write([
    'npm run demo -- [options]',
    '  --quick        2 profiles and small files (the test uses this)',
    '  --keep         leave clusters A and B and the S3 server running and print how to reach them; Ctrl-C stops them',
    '  --schedule     a last step: the workload container under the real Pebble backs A up every minute; its metrics and the unit status',
    '  --profiles N   profiles on cluster A (default 4, quick 2)',
    '  --kubeflow A[:B]  cluster A serves the Kubeflow CRDs of CKF release A, B those of release B (default A): 1.8, 1.9, 1.10 or 1.11',
    '',
  ].join('\n'));
  process.exit(0);
}
const quick = args.quick === true;
const profiles = args.profiles === undefined ? (quick ? 2 : 4) : Number(args.profiles);
if (!Number.isInteger(profiles) || profiles < 1 || profiles > 50) usage(`--profiles must be a whole number from 1 to 50, not "${args.profiles}"`);
const { isRelease, RELEASES } = await import('../tests/support/cluster/kubeflow/releases.ts');
let releases: { a: import('../tests/support/cluster/kubeflow/releases.ts').Release; b: import('../tests/support/cluster/kubeflow/releases.ts').Release } | undefined;
if (args.kubeflow !== undefined) {
  const [a, b = a] = args.kubeflow.split(':');
  if (!a || !isRelease(a) || !b || !isRelease(b)) usage(`--kubeflow must be A or A:B with A and B among ${RELEASES.join(', ')}, not "${args.kubeflow}"`);
  releases = { a, b };
}
requireSystemTools('demo');

const { runDemo } = await import('./story.ts');
process.exit(await runDemo({ quick, keep: args.keep === true, schedule: args.schedule === true, profiles, ...(releases ? { releases } : {}) }));
