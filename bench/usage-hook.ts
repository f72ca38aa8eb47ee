/**
 * Preloaded (`node --import`) into each process the ratio benchmark times, memlens and its
 * yardsticks alike: at exit it writes the process's own CPU time (user + system, all threads) and
 * peak RSS to $MEMLENS_BENCH_USAGE. Node reports no child's rusage, and a shared machine's wall
 * time says little without the CPU time beside it.
 *
 * Node runs it in worker threads too. On Linux each JS thread's own CPU time is also written
 * (the main thread's at exit, a worker's as it posts each message: a pool's worker is ended,
 * not exited): the busiest thread's is the least wall time the process could take on idle cores,
 * which a loaded machine's wall time cannot show (its scheduler shares a core per session).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { isMainThread, parentPort, threadId } from 'node:worker_threads';

const out = process.env.MEMLENS_BENCH_USAGE;

/** This thread's CPU time in ms (utime + stime, in 10 ms ticks), or null off Linux. */
function threadCpuMs(): number | null {
  try {
    const fields = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

if (out !== undefined && out !== '') {
  if (isMainThread)
    process.on('exit', () => {
      const u = process.resourceUsage();
      writeFileSync(
        out,
        JSON.stringify({
          cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000,
          maxRssBytes: u.maxRSS * 1024,
          threadMs: threadCpuMs(),
        }),
      );
    });
  else if (parentPort !== null) {
    const port = parentPort;
    const post = port.postMessage.bind(port);
    port.postMessage = (value: unknown, transfer?: Parameters<typeof post>[1]) => {
      // Before posting: once its last reply is in, the pool may end this thread at once.
      writeFileSync(`${out}.thread-${threadId}`, JSON.stringify({ threadMs: threadCpuMs() }));
      post(value, transfer);
    };
  }
}
