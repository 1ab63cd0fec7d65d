// One problem, two users: the store says what is wrong and which setting fixes it; the charm names s3-integrator's
// option or action for the track in use, the CLI names its flags. Neither sees the other's words.
import { expect } from 'chai';
import type { BucketProblem } from '../../src/store/bucket-problem.ts';
import { charmProblemSentence } from '../../src/charm/s3-wording.ts';
import { cliProblemSentence } from '../../src/cli/s3-wording.ts';

const fact = 'something is wrong';
const cases: { remedy: BucketProblem['remedy']; charm: string; cli: string }[] = [
  { remedy: { setting: 'ca-chain' }, charm: "give s3-integrator the endpoint's CA in tls-ca-chain", cli: '--ca-file' },
  { remedy: { setting: 'endpoint', what: 'unreachable' }, charm: 'check the endpoint option of s3-integrator and the network', cli: 'check --endpoint and the network' },
  { remedy: { setting: 'endpoint', what: 'invalid' }, charm: 'fix the endpoint option of s3-integrator', cli: 'fix --endpoint' },
  { remedy: { setting: 'bucket' }, charm: 'fix the bucket option of s3-integrator', cli: '--s3-url' },
  { remedy: { setting: 'credentials', track: 1, what: 'missing', key: 'secret-key' }, charm: 'sync-s3-credentials action of s3-integrator', cli: 'AWS_SECRET_ACCESS_KEY' },
  { remedy: { setting: 'credentials', track: 2, what: 'missing', key: 'access-key' }, charm: 'juju config s3-integrator credentials=<secret-uri>', cli: 'AWS_ACCESS_KEY_ID' },
  { remedy: { setting: 'credentials', track: 2, what: 'denied' }, charm: "check the keys in s3-integrator's credentials secret and the bucket policy", cli: 'the bucket policy' },
  { remedy: { setting: 'credentials', track: 1, what: 'denied' }, charm: 'check the keys given to s3-integrator (sync-s3-credentials)', cli: 'the bucket policy' },
  { remedy: { setting: 'own-bucket', track: 1 }, charm: 'set a bucket name of your own with juju config s3-integrator bucket=<name>; if the bucket is yours, check the keys given to s3-integrator (sync-s3-credentials)', cli: '--s3-url' },
  { remedy: { setting: 'own-bucket', track: 2 }, charm: "set a bucket name of your own with juju config kubeflow-upgrader s3-bucket=<name> (or bucket on s3-integrator); if the bucket is yours, check the keys in s3-integrator's credentials secret", cli: 'pass a bucket of your own in --s3-url; if the bucket is yours, check AWS_ACCESS_KEY_ID' },
  { remedy: { setting: 'region', region: 'eu-west-1' }, charm: 'set region=eu-west-1 on s3-integrator', cli: '--region eu-west-1' },
  { remedy: { setting: 'regional-endpoint' }, charm: 'regional endpoint on s3-integrator', cli: '--endpoint' },
];

describe('S3 problems in the charm\'s and the CLI\'s words', () => {
  for (const { remedy, charm, cli } of cases) {
    it(`${JSON.stringify(remedy)}`, () => {
      const problem: BucketProblem = { kind: 'unknown', fact, remedy };
      const forCharm = charmProblemSentence(problem);
      const forCli = cliProblemSentence(problem);
      expect(forCharm).to.include(`${fact}; `).and.include(charm);
      expect(forCli).to.match(/^Something is wrong; .*\.$/).and.include(cli);
      expect(forCli).to.not.include('s3-integrator');
      expect(forCharm).to.not.match(/--[a-z]/);
    });
  }

  it('a problem with no fix is the fact alone', () => {
    const problem: BucketProblem = { kind: 'unknown', fact: 'S3 answered HTTP 418', remedy: { setting: 'none' } };
    expect(charmProblemSentence(problem)).to.equal('S3 answered HTTP 418');
    expect(cliProblemSentence(problem)).to.equal('S3 answered HTTP 418.');
  });
});
