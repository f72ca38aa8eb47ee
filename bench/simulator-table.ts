/**
 * The simulator's replay speed inside `npm run bench`: runs simulate-bench.ts (replay alone,
 * decode excluded) with `--sweep` in a fresh process and prints its lines as a Markdown table.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { NODE_FLAGS } from '../src/node/node-flags.js';

interface SimLine {
  device: number | null;
  settings: string;
  entries: number;
  ms: number;
  cpuMs: number;
  eventsPerSecond: number;
}

export function benchSimulator(distBench: string, file: string, label: string, runs: number): void {
  const out = execFileSync(
    process.execPath,
    [
      ...NODE_FLAGS,
      '--expose-gc',
      join(distBench, 'simulate-bench.js'),
      file,
      '--sweep',
      '--runs',
      String(runs),
    ],
    { encoding: 'utf8', maxBuffer: 1 << 20, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  console.log(
    `\nsimulator on ${label}, replay alone (decode excluded; best of ${runs}; target ≥ 5M events/s):\n`,
  );
  console.log('| device | settings | trace entries | wall | CPU | events/s |');
  console.log('|---|---|---|---|---|---|');
  for (const text of out.trim().split('\n')) {
    const l = JSON.parse(text) as SimLine;
    console.log(
      `| ${l.device ?? 'all'} | ${l.settings || '(recorded)'} | ${l.entries.toLocaleString('en-US')} | ${(l.ms / 1000).toFixed(2)} s | ${(l.cpuMs / 1000).toFixed(2)} s | ${(l.eventsPerSecond / 1e6).toFixed(2)}M |`,
    );
  }
}
