// A test process that starts radosgw and ends without stopping it (process.exit, or SIGTERM), for server.rgw.ts. It
// prints {"pids": [...], "directory": "..."} once radosgw answers, then ends as argv[2] says. (upstream:
// github.com/ceph/ceph src/ceph_mon.cc, src/ceph_osd.cc, src/rgw/rgw_main.cc: the daemons run in the foreground with
// `-f`, as this process's children, so that its exit handler can kill them.)
import { startRgw } from './server.ts';

const rgw = await startRgw({ buckets: ['left-behind'] });
process.stdout.write(`${JSON.stringify({ pids: rgw.pids, directory: rgw.directory })}\n`);
if (process.argv[2] === 'SIGTERM') process.kill(process.pid, 'SIGTERM');
else process.exit(0);
