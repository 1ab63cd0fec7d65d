// s3rver in a process of its own for profiling a client by hand (the scale bench starts its own):
//   node --import tsx bench/support/s3-process.ts <s3.json>   — writes the S3Target there, runs until SIGTERM.
import { writeFileSync } from 'node:fs';
import { startS3Server } from '../../tests/support/s3/server.ts';

const file = process.argv[2];
if (!file) throw new Error('usage: s3-process.ts <s3.json>');
const server = await startS3Server({ buckets: ['bench'] });
writeFileSync(file, JSON.stringify({ endpoint: server.endpoint, accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey, bucket: 'bench' }));
process.stdout.write(`s3 ready at ${server.endpoint}\n`);
const stop = () => void server.stop().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
