// Entry point of the kubeflow-upgrader command line (bin/kubeflow-upgrader.js and `npm run cli` start it).
import { runCli } from './run.ts';

const code = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
// Open sockets (keep-alive agents) must not hold the process once the answer is out.
process.exitCode = code;
setImmediate(() => process.exit(code));
