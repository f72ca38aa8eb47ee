/**
 * Preloaded (`node --import`) into each process the ratio benchmark times, memlens and its
 * yardsticks alike: at exit it writes the process's own CPU time (user + system, all threads) and
 * peak RSS to $MEMLENS_BENCH_USAGE. Node reports no child's rusage, and a shared machine's wall
 * time says little without the CPU time beside it.
 */
import { writeFileSync } from 'node:fs';

const out = process.env.MEMLENS_BENCH_USAGE;
if (out !== undefined && out !== '') {
  process.on('exit', () => {
    const u = process.resourceUsage();
    writeFileSync(
      out,
      JSON.stringify({ cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, maxRssBytes: u.maxRSS * 1024 }),
    );
  });
}
