import type { Command } from 'commander';

export type Register = (program: Command) => void;

/**
 * Each command's module, loaded only when that command runs: importing all of them pulls in the
 * whole engine (about 290 modules, each an open file while Node loads it), which made start-up
 * slower than it needs to be and failed outright under `ulimit -n 64`. Help and the default
 * command (a bare FILE means `diagnose`) decide what else to load.
 */
export const COMMANDS: ReadonlyArray<{ names: readonly string[]; load: () => Promise<Register> }> = [
  { names: ['diagnose'], load: async () => (await import('./commands/diagnose.js')).diagnoseCommand },
  { names: ['summary'], load: async () => (await import('./commands/summary.js')).summaryCommand },
  { names: ['peak'], load: async () => (await import('./commands/peak.js')).peakCommand },
  { names: ['events', 'blocks'], load: async () => (await import('./commands/tables.js')).tableCommands },
  { names: ['oom'], load: async () => (await import('./commands/oom.js')).oomCommand },
  { names: ['view'], load: async () => (await import('./commands/view.js')).viewCommand },
  { names: ['frag'], load: async () => (await import('./commands/frag.js')).fragCommand },
  { names: ['diff'], load: async () => (await import('./commands/diff.js')).diffCommand },
  { names: ['slice'], load: async () => (await import('./commands/slice.js')).sliceCommand },
  {
    names: ['categories'],
    load: async () => (await import('./commands/categories.js')).categoriesCommand,
  },
  { names: ['simulate'], load: async () => (await import('./commands/simulate.js')).simulateCommand },
  { names: ['leaks'], load: async () => (await import('./commands/leaks.js')).leaksCommand },
  { names: ['gc'], load: async () => (await import('./commands/gc.js')).gcCommand },
  { names: ['cycles'], load: async () => (await import('./commands/cycles.js')).cyclesCommand },
  { names: ['run'], load: async () => (await import('./commands/run.js')).runCommand },
  { names: ['export'], load: async () => (await import('./commands/export.js')).exportCommand },
  { names: ['sql'], load: async () => (await import('./commands/sql.js')).sqlCommand },
  { names: ['record'], load: async () => (await import('./commands/record.js')).recordCommand },
  { names: ['report'], load: async () => (await import('./commands/report.js')).reportCommand },
  { names: ['check'], load: async () => (await import('./commands/check.js')).checkCommand },
];

/**
 * The commands the arguments can reach: the one named, diagnose for a bare FILE, all for help,
 * none for the version (it needs no command, and loading them all made it ~4x `node -e 0`).
 */
export function commandsFor(args: readonly string[]): typeof COMMANDS {
  const first = args.find((a) => !a.startsWith('-'));
  if (first === undefined && args.some(isVersionFlag)) return [];
  if (first === undefined || first === 'help') return COMMANDS;
  const named = COMMANDS.filter((c) => c.names.includes(first));
  return named.length > 0 ? named : COMMANDS.filter((c) => c.names.includes('diagnose'));
}

function isVersionFlag(arg: string): boolean {
  return arg === '--version' || arg === '-V';
}
