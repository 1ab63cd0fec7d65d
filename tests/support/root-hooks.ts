// Mocha root hooks (loaded through .mocharc.json's `require`), around the whole run:
// - before anything starts: the system tools the tests run must be installed. A missing one fails the run with one
//   sentence that names it and the command that installs it, counted as a failure in the summary, never a skip;
// - after everything: whatever tests/support started and nobody stopped (a before-all hook that failed halfway) is
//   stopped, so the run always ends on its own.
import { missingToolsSentence } from '../../scripts/system-tools.ts';
import { stopEverything } from './cleanup.ts';

export const mochaHooks = {
  beforeAll(): void {
    const sentence = missingToolsSentence('test');
    if (sentence !== undefined) throw new Error(sentence);
  },
  async afterAll(): Promise<void> {
    const stopped = await stopEverything();
    if (stopped.length > 0) process.stderr.write(`cleanup: stopped what failed suites left running: ${stopped.join(', ')}\n`);
  },
};
