// What ./dispatch runs. Kept tiny: it turns on Node's compile cache (a hook runs every few minutes; re-parsing a
// megabyte of bundled SDK each time is most of its cost), then loads the charm. Exits explicitly: keep-alive sockets
// of HTTP clients must not hold a hook open.
import { enableCompileCache } from 'node:module';
import { join } from 'node:path';

try {
  enableCompileCache(join(process.env.JUJU_CHARM_DIR ?? process.cwd(), '.node-compile-cache'));
} catch {
  // A read-only charm directory only costs speed.
}
const { main } = await import('./main.ts');
process.exit(await main(process.env));
