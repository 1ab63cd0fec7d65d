// The fix for a bucket problem in the charm's terms: every S3 setting reaches the charm through s3-integrator, so
// each remedy names the option or action of s3-integrator (on the track in use) that changes it.
import { problemSentence, type BucketProblem, type S3Remedy } from '../store/bucket-problem.ts';
import { credentialsFix } from '../store/settings.ts';

/** Where the keys in use came from, by track. */
function keysOf(track: 1 | 2 | undefined): string {
  return track === 2 ? "the keys in s3-integrator's credentials secret" : track === 1 ? 'the keys given to s3-integrator (sync-s3-credentials)' : 'the credentials';
}

function charmRemedy(remedy: S3Remedy): string {
  switch (remedy.setting) {
    case 'ca-chain':
      return "give s3-integrator the endpoint's CA in tls-ca-chain, or use the right scheme";
    case 'endpoint':
      return remedy.what === 'invalid' ? 'fix the endpoint option of s3-integrator' : 'check the endpoint option of s3-integrator and the network';
    case 'bucket':
      return 'create it or fix the bucket option of s3-integrator';
    case 'own-bucket': {
      // Track 1 keeps the first bucket any consumer asked for (s3-integrator src/charm.py): only its option moves it.
      const own = remedy.track === 1
        ? 'set a bucket name of your own with juju config s3-integrator bucket=<name>'
        : 'set a bucket name of your own with juju config kubeflow-upgrader s3-bucket=<name> (or bucket on s3-integrator)';
      return `${own}; if the bucket is yours, check ${keysOf(remedy.track)} and the bucket policy`;
    }
    case 'credentials': {
      if (remedy.what === 'missing') return credentialsFix(remedy.track);
      return `check ${keysOf(remedy.track)} and the bucket policy`;
    }
    case 'region':
      return `set region=${remedy.region} on s3-integrator`;
    case 'regional-endpoint':
      return "set the bucket's region and its regional endpoint on s3-integrator";
    case 'none':
      return '';
  }
}

/** The problem as the unit's status and the actions say it. */
export function charmProblemSentence(problem: BucketProblem): string {
  return problemSentence(problem, charmRemedy);
}
