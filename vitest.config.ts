import { defineConfig } from 'vitest/config';
import { NODE_FLAGS } from './src/node/node-flags.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // CLI tests spawn node; on a loaded 2-core CI machine a spawn can take seconds.
    testTimeout: 60_000,
    // The e2e tests poll for what the page's worker computes (decode, analyses); with other test
    // files running beside them on 2 cores that can take well over the 1 s default.
    expect: { poll: { timeout: 15_000 } },
    // Same exit-deadlock workaround as the CLI (see src/cli/main.ts).
    execArgv: [...NODE_FLAGS],
  },
});
