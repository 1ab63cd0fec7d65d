// The fix for a bucket problem in the CLI's terms: the flags (or the AWS CLI's environment variables) that set it.
import { problemSentence, type BucketProblem, type S3Remedy } from '../store/bucket-problem.ts';

function cliRemedy(remedy: S3Remedy): string {
  switch (remedy.setting) {
    case 'ca-chain':
      return "pass the endpoint's CA with --ca-file, or use the right scheme";
    case 'endpoint':
      return remedy.what === 'invalid' ? 'fix --endpoint' : 'check --endpoint and the network';
    case 'bucket':
      return 'create it or fix the bucket of --s3-url';
    case 'own-bucket':
      return 'pass a bucket of your own in --s3-url; if the bucket is yours, check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and the bucket policy';
    case 'credentials':
      return remedy.what === 'missing'
        ? 'set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY'
        : 'check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and the bucket policy';
    case 'region':
      return `pass --region ${remedy.region}`;
    case 'regional-endpoint':
      return "pass the bucket's --region and its regional --endpoint";
    case 'none':
      return '';
  }
}

/** The problem as the CLI prints it: one sentence, capitalised and ended. */
export function cliProblemSentence(problem: BucketProblem): string {
  const sentence = problemSentence(problem, cliRemedy);
  return `${sentence[0]!.toUpperCase()}${sentence.slice(1)}.`;
}
