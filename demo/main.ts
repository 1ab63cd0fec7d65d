// npm run demo [-- --quick] [-- --keep]: the whole story on one machine — two embedded Kubeflow clusters and an S3
// server; the PACKED charm's real dispatch backs up cluster A and restores into the fresh cluster B; then the two
// clusters' user state and volume files are compared. Exits 0 only when they are the same, 2 on a wrong flag.
import { parseArgs } from 'node:util';
import { requireSystemTools } from '../scripts/system-tools.ts';

function usage(message: string): never {
  process.stderr.write(`demo: ${message}; usage: npm run demo -- [--quick] [--keep] [--profiles N]\n`);
  process.exit(2);
}

function parseDemoArgs() {
  try {
    return parseArgs({ options: { quick: { type: 'boolean' }, keep: { type: 'boolean' }, profiles: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true }).values;
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
    '  --profiles N   profiles on cluster A (default 4, quick 2)',
    '',
  ].join('\n'));
  process.exit(0);
}
const quick = args.quick === true;
const profiles = args.profiles === undefined ? (quick ? 2 : 4) : Number(args.profiles);
if (!Number.isInteger(profiles) || profiles < 1 || profiles > 50) usage(`--profiles must be a whole number from 1 to 50, not "${args.profiles}"`);
requireSystemTools('demo');

const { runDemo } = await import('./story.ts');
process.exit(await runDemo({ quick, keep: args.keep === true, profiles }));
