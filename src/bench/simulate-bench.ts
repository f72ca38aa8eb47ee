/**
 * Simulator throughput, replay alone (decode excluded):
 *   node dist/bench/simulate-bench.js FILE [--set key:value,...] [--runs N]
 * prints one JSON line per device and settings: {device, settings, entries, decodeMs, ms, cpuMs,
 * eventsPerSecond} (best of N runs; events/s from wall time).
 * Run as `npm run build && node --expose-gc dist/bench/simulate-bench.js bench/cache/synth-1GB-seed1-v1.pickle`.
 */
import { fileSize, readChunks } from '../cli/read-file.js';
import { loadSnapshot } from '../engine/load.js';
import { replayDevice } from '../engine/simulate/replay.js';
import { applyConf, DEFAULT_TORCH_VERSION, recordedSettings } from '../engine/simulate/settings.js';
import { cloneSettings } from '../engine/simulate/sweep.js';

async function main(): Promise<void> {
  const [file, ...rest] = process.argv.slice(2);
  if (file === undefined) throw new Error('usage: simulate-bench FILE [--set key:value,...] [--runs N]');
  const set = flag(rest, '--set');
  const runs = Number(flag(rest, '--runs') ?? 3);
  const t0 = performance.now();
  const s = await loadSnapshot(readChunks(file), { sizeHint: await fileSize(file) });
  const decodeMs = performance.now() - t0;
  const recorded = recordedSettings(s.allocatorSettings, DEFAULT_TORCH_VERSION);
  const variants = [recorded];
  if (set !== undefined) variants.push(applyConf(cloneSettings(recorded), set));
  for (const d of s.devices) {
    for (const settings of variants) {
      let best = Number.POSITIVE_INFINITY;
      let bestCpu = Number.POSITIVE_INFINITY;
      for (let r = 0; r < runs; r++) {
        (globalThis as { gc?: () => void }).gc?.();
        const start = performance.now();
        const cpu = process.cpuUsage();
        replayDevice(s, d, {
          settings,
          capacity: Number.POSITIVE_INFINITY,
          recorded: false,
          allEvents: false,
        });
        best = Math.min(best, performance.now() - start);
        // CPU time as well: on a shared machine wall time also counts other processes' turns.
        const used = process.cpuUsage(cpu);
        bestCpu = Math.min(bestCpu, (used.user + used.system) / 1000);
      }
      const entries = d.trace.length;
      process.stdout.write(
        `${JSON.stringify({
          device: d.device,
          settings: set !== undefined && settings !== recorded ? set : 'recorded',
          entries,
          decodeMs: Math.round(decodeMs),
          ms: Math.round(best),
          cpuMs: Math.round(bestCpu),
          eventsPerSecond: Math.round(entries / (best / 1000)),
        })}\n`,
      );
    }
  }
}

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
