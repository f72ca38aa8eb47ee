import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../scripts/synth/index.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import type { DeviceModel, Snapshot } from '../../../src/engine/model/snapshot.js';
import { Action } from '../../../src/engine/model/trace-columns.js';
import { deviceCapacity } from '../../../src/engine/simulate/capacity.js';
import { replayDevice } from '../../../src/engine/simulate/replay.js';
import { summarizeReplay } from '../../../src/engine/simulate/replay-summary.js';
import { repeatedReplays } from '../../../src/engine/simulate/same-replay.js';
import {
  applyConf,
  describeSettings,
  recordedSettings,
  type SimSettings,
} from '../../../src/engine/simulate/settings.js';
import { cloneSettings, sweepSettings } from '../../../src/engine/simulate/sweep.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'corpus');
const files = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];
const MiB = 1024 * 1024;

/** The sweep's settings plus max_split limits around the file's largest request. */
function candidates(s: Snapshot, d: DeviceModel): SimSettings[] {
  const base = recordedSettings(s.allocatorSettings, '2.6');
  const mb = Math.ceil(largestRequest(d) / MiB);
  const extra = [2048, 4096, Math.max(21, mb - 1), mb + 64].map((v) =>
    applyConf(cloneSettings(base), `max_split_size_mb:${v}`),
  );
  return [...sweepSettings(base), ...extra];
}

/** Read from the trace here, not from the module under test. */
function largestRequest(d: DeviceModel): number {
  let m = 0;
  for (let i = 0; i < d.trace.length; i++)
    if (d.trace.action[i] === Action.alloc) m = Math.max(m, d.trace.size[i]!);
  return m;
}

/** Every run the module calls a repeat, replayed anyway: its figures must be the earlier run's. */
function check(s: Snapshot, capacities: (d: DeviceModel) => number[]): number {
  let repeats = 0;
  for (const d of s.devices) {
    const runs = candidates(s, d);
    const same = repeatedReplays(s, d, runs);
    runs.forEach((set, i) => {
      // A limit at or below the largest request splits differently: never a repeat.
      if (set.maxSplitSize <= largestRequest(d)) expect(same[i]).toBe(-1);
    });
    for (const capacity of capacities(d)) {
      const replay = (set: SimSettings) =>
        summarizeReplay(
          set,
          replayDevice(s, d, { settings: set, capacity, recorded: false, allEvents: false }),
        );
      same.forEach((j, i) => {
        if (j < 0) return;
        repeats++;
        expect(j).toBeLessThan(i);
        expect(replay(runs[i]!)).toEqual({ ...replay(runs[j]!), settings: describeSettings(runs[i]!) });
      });
    }
  }
  return repeats;
}

/** Unlimited, the file's own capacity, and a tight one that forces retries, flushes and ooms. */
function capacities(d: DeviceModel): number[] {
  let peak = 0;
  for (let i = 0; i < d.trace.length; i++) peak = Math.max(peak, d.totals.reserved[i]!);
  return [Number.POSITIVE_INFINITY, deviceCapacity(d, undefined).bytes, Math.round(peak * 0.8)];
}

describe('simulate --sweep: runs found to repeat an earlier one replay identically', () => {
  it.skipIf(files.length === 0)('on the real corpus', () => {
    let repeats = 0;
    for (const file of files) {
      repeats += check(loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, file)))), capacities);
    }
    expect(repeats).toBeGreaterThan(0);
  });

  it('on generated files (OOM, pending frees, private pool, expandable segments)', () => {
    let repeats = 0;
    for (const options of [
      { events: 4000, seed: 1 },
      { events: 4000, seed: 3, oom: true },
      { events: 4000, seed: 5, pendingFrees: true, emptyCacheEvery: 3 },
      { events: 4000, seed: 6, privatePool: true },
      { events: 4000, seed: 2, expandableSegments: true },
    ]) {
      repeats += check(loadSnapshotBytes(generateSnapshotBytes(options).bytes), capacities);
    }
    expect(repeats).toBeGreaterThan(0);
  });
});
