import { defineConfig } from 'vitest/config';
import { NODE_FLAGS } from './src/cli/node-flags.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // CLI tests spawn node; on a loaded 2-core CI machine a spawn can take seconds.
    testTimeout: 60_000,
    // Same exit-deadlock workaround as the CLI (see src/cli/main.ts).
    execArgv: [...NODE_FLAGS],
  },
});
