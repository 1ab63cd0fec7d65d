// radosgw's answers (radosgw-answers.ts) on s3rver answering as radosgw (tests/support/s3/radosgw-answers.ts): the same
// cases as on a real radosgw (radosgw-answers.rgw.ts, `npm run test:rgw`), so `npm test` sees them without Ceph.
import { startS3Server } from '../support/s3/server.ts';
import { describeRadosgwAnswers } from './radosgw-answers.ts';

describeRadosgwAnswers('s3rver answering as radosgw', async (bucket) => ({ ...(await startS3Server({ buckets: [bucket], radosgw: true })), region: 'default' }));
