/**
 * Node flags memlens runs with (the bin's shebang passes the same): see the note in main.ts.
 * Scripts and tests that start the CLI with `process.execPath` pass these.
 */
export const NODE_FLAGS = ['--no-concurrent-recompilation'] as const;
