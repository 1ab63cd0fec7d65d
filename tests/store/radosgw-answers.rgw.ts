// radosgw's answers (radosgw-answers.ts) on a real Ceph RADOS Gateway: the truth the s3rver model is checked against.
import { startRgw } from '../support/rgw/server.ts';
import { describeRadosgwAnswers } from './radosgw-answers.ts';

describeRadosgwAnswers('a real radosgw', (bucket) => startRgw({ buckets: [bucket] }));
