import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // CLI tests spawn node; on a loaded 2-core CI machine a spawn can take seconds.
    testTimeout: 60_000,
  },
});
