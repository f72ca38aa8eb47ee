/**
 * Simulator throughput, replay alone (decode excluded):
 *   node dist-tools/bench/simulate-bench.js FILE [--set key:value,...] [--sweep] [--runs N]
 * prints one JSON line per device and settings: {device, settings, entries, decodeMs, ms, cpuMs,
 * eventsPerSecond} (best of N runs; events/s from wall time). `--sweep` times every setting of
 * `memlens simulate --sweep`, then the whole `simulate(--sweep)` call (recorded run, fidelity,
 * sweep) as one line with settings "simulate --sweep".
 * Run as `npm run build && node --expose-gc dist-tools/bench/simulate-bench.js bench/cache/synth-1GB-seed1-v1.pickle`.
 */

import { loadSnapshot } from '../src/engine/load/index.js';
import type { DeviceModel } from '../src/engine/model/index.js';
import {
  applyConf,
  cloneSettings,
  DEFAULT_TORCH_VERSION,
  describeSettings,
  recordedSettings,
  replayDevice,
  type SimSettings,
  simulate,
  sweepSettings,
} from '../src/engine/simulate/index.js';
import { fileSize, readChunks } from '../src/node/files/read-file.js';

interface Timing {
  ms: number;
  cpuMs: number;
}

async function main(): Promise<void> {
  const [file, ...rest] = process.argv.slice(2);
  if (file === undefined)
    throw new Error('usage: simulate-bench FILE [--set key:value,...] [--sweep] [--runs N]');
  const set = flag(rest, '--set');
  const sweep = rest.includes('--sweep');
  const runs = Number(flag(rest, '--runs') ?? 3);
  const t0 = performance.now();
  const s = await loadSnapshot(readChunks(file), { sizeHint: await fileSize(file) });
  const decodeMs = Math.round(performance.now() - t0);
  const recorded = recordedSettings(s.allocatorSettings, DEFAULT_TORCH_VERSION);
  const variants = sweep ? sweepSettings(recorded) : [recorded];
  if (set !== undefined) variants.push(applyConf(cloneSettings(recorded), set));
  const entries = s.devices.reduce((n, d) => n + d.trace.length, 0);
  const print = (device: number | null, settings: string, n: number, t: Timing): void => {
    const eventsPerSecond = Math.round(n / (t.ms / 1000));
    const line = { device, settings, entries: n, decodeMs, ms: Math.round(t.ms), cpuMs: Math.round(t.cpuMs) };
    process.stdout.write(`${JSON.stringify({ ...line, eventsPerSecond })}\n`);
  };
  for (const d of s.devices) {
    for (const settings of variants) {
      const name = settings === recorded && !sweep ? 'recorded' : describeSettings(settings);
      print(
        d.device,
        name,
        d.trace.length,
        best(runs, () => replay(d, settings)),
      );
    }
  }
  if (sweep)
    print(
      null,
      'simulate --sweep',
      entries,
      best(runs, () => simulate(s, s.devices, { sweep: true })),
    );

  function replay(d: DeviceModel, settings: SimSettings): void {
    replayDevice(s, d, { settings, capacity: Number.POSITIVE_INFINITY, recorded: false, allEvents: false });
  }
}

/** Best wall and CPU time of `runs` calls. */
function best(runs: number, f: () => void): Timing {
  const out = { ms: Number.POSITIVE_INFINITY, cpuMs: Number.POSITIVE_INFINITY };
  for (let r = 0; r < runs; r++) {
    (globalThis as { gc?: () => void }).gc?.();
    const start = performance.now();
    const cpu = process.cpuUsage();
    f();
    out.ms = Math.min(out.ms, performance.now() - start);
    // CPU time as well: on a shared machine wall time also counts other processes' turns.
    const used = process.cpuUsage(cpu);
    out.cpuMs = Math.min(out.cpuMs, (used.user + used.system) / 1000);
  }
  return out;
}

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
