import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../scripts/synth/index.js';
import { CATEGORIES } from '../../../src/engine/analyses/categories/categories.js';
import { monotonicTimes, TOTAL_COUNTERS } from '../../../src/engine/export/perfetto.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import { Action } from '../../../src/engine/model/trace-columns.js';
import { NODE_FLAGS } from '../../../src/node/node-flags.js';

/**
 * `memlens export --format perfetto` checked against the Trace Event Format's rules (known
 * phases, numeric timestamps and counter values, each track's timestamps never decreasing,
 * complete slices with a duration) and against the model: every counter point is the running
 * total after its entry, and every OOM and segment event is an instant. A downsampled track
 * (more changes than --max-counter-points) draws each time bucket's lowest and highest total
 * exactly, so no peak is lost or moved.
 */
const CLI = join(import.meta.dirname, '..', '..', '..', 'dist', 'cli', 'main.js');
const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'corpus');
const work = mkdtempSync(join(tmpdir(), 'memlens-perfetto-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface TraceEvent {
  ph: string;
  name: string;
  pid: number;
  tid?: number;
  ts?: number;
  dur?: number;
  s?: string;
  args?: Record<string, unknown>;
}

function exportTrace(
  file: string,
  out: string,
  args: string[] = [],
): { traceEvents: TraceEvent[]; stderr: string } {
  const run = spawnSync(
    'node',
    [...NODE_FLAGS, CLI, 'export', file, '--format', 'perfetto', '-o', out, ...args],
    { encoding: 'utf8' },
  );
  expect(run.status, run.stderr).toBe(0);
  const bytes = readFileSync(out);
  const trace = JSON.parse((out.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8'));
  return { ...trace, stderr: run.stderr };
}

/** The format's rules, as ui.perfetto.dev's and chrome://tracing's JSON importers apply them. */
function checkFormat(events: TraceEvent[]): void {
  const lastTs = new Map<string, number>();
  for (const e of events) {
    expect(['M', 'C', 'i', 'X']).toContain(e.ph);
    expect(typeof e.name).toBe('string');
    expect(Number.isInteger(e.pid)).toBe(true);
    if (e.ph === 'M') continue;
    expect(Number.isFinite(e.ts)).toBe(true);
    if (e.ph === 'C') {
      for (const v of Object.values(e.args!)) expect(Number.isFinite(v)).toBe(true);
    }
    if (e.ph === 'i') expect(['g', 'p', 't']).toContain(e.s);
    if (e.ph === 'X') expect(e.dur).toBeGreaterThanOrEqual(0);
    const track = e.ph === 'C' ? `${e.pid} C ${e.name}` : `${e.pid} ${e.tid} ${e.ph}`;
    expect(e.ts!, track).toBeGreaterThanOrEqual(lastTs.get(track) ?? Number.NEGATIVE_INFINITY);
    lastTs.set(track, e.ts!);
  }
}

/** Each counter's points equal the model's running totals after each entry where they change. */
function checkCounters(bytes: Uint8Array, events: TraceEvent[]): void {
  const s = loadSnapshotBytes(bytes);
  for (const d of s.devices) {
    for (const name of TOTAL_COUNTERS) {
      const curve = d.totals[name];
      const expected: number[] = [];
      for (let i = 0; i < curve.length; i++) if (expected.at(-1) !== curve[i]) expected.push(curve[i]!);
      const got = events.filter((e) => e.ph === 'C' && e.pid === d.device && e.name === name);
      expect(
        got.map((e) => e.args!.bytes),
        `device ${d.device} ${name}`,
      ).toEqual(expected);
    }
    const marked = events.filter((e) => e.ph === 'i' && e.pid === d.device);
    let expectedMarks = 0;
    for (let i = 0; i < d.trace.length; i++) {
      const a = d.trace.action[i]!;
      if (a === Action.oom || (a >= Action.segment_alloc && a <= Action.segment_unmap)) expectedMarks++;
    }
    expect(marked.length).toBe(expectedMarks);
    const categories = events.filter((e) => e.ph === 'C' && e.pid === d.device && e.name === 'categories');
    if (d.trace.length > 0) expect(Object.keys(categories[0]!.args!)).toEqual([...CATEGORIES]);
  }
}

describe('memlens export --format perfetto', () => {
  it('a generated OOM run: format rules, exact counters, OOM instant, ProfilerStep slices, gzip', () => {
    const { bytes } = generateSnapshotBytes({ events: 4000, seed: 17, oomCause: 'exhaustion' });
    const file = join(work, 'oom.pickle');
    writeFileSync(file, bytes);
    const trace = exportTrace(file, join(work, 'oom.json.gz'));
    checkFormat(trace.traceEvents);
    // Fewer changes than the default --max-counter-points: exact without asking, and nothing said.
    checkCounters(bytes, trace.traceEvents);
    expect(trace.stderr).not.toMatch(/downsampled/);
    expect(trace.traceEvents.filter((e) => e.ph === 'i' && e.name === 'OOM')).toHaveLength(1);
    const steps = trace.traceEvents.filter((e) => e.ph === 'X' && e.name.startsWith('ProfilerStep#'));
    expect(steps.length).toBeGreaterThan(1);
    // Slices sit on the trace's own clock (time_us), inside the span of its entries.
    const s = loadSnapshotBytes(bytes);
    const times = s.devices[0]!.trace.timeUs;
    expect(steps[0]!.ts).toBeGreaterThanOrEqual(times[0]! - 1e6);
    expect(steps.at(-1)!.ts).toBeLessThanOrEqual(times.at(-1)!);
  });

  for (const name of [
    'ZidongLiu_DeComFL__memory__edd30e0.pickle',
    'Yiyi_LLM-inference__oom_snapshot__61261a2.pickle',
    'THUDM_slime__scripts_0804_3_shapshot_init_model__8ffda8b.pickle',
  ]) {
    it(`corpus ${name}: format rules and exact counters (--full)`, () => {
      const file = join(CORPUS, name);
      const trace = exportTrace(file, join(work, `${name}.json`), ['--full']);
      checkFormat(trace.traceEvents);
      checkCounters(new Uint8Array(readFileSync(file)), trace.traceEvents);
    });
  }

  it('--max-counter-points: each time bucket draws its exact lowest and highest total, said on stderr', () => {
    const { bytes } = generateSnapshotBytes({ events: 30_000, seed: 5 });
    const file = join(work, 'long.pickle');
    writeFileSync(file, bytes);
    const max = 400;
    const trace = exportTrace(file, join(work, 'long.json'), ['--max-counter-points', String(max)]);
    checkFormat(trace.traceEvents);
    expect(trace.stderr).toMatch(
      /^memlens: counter tracks allocated, active[^\n]*downsampled[^\n]*--full[^\n]*\n$/,
    );
    const s = loadSnapshotBytes(bytes);
    let downsampled = 0;
    for (const d of s.devices) {
      const ts = monotonicTimes(d);
      const buckets = max / 4;
      const t0 = ts[0]!;
      const span = ts.at(-1)! - t0;
      // The bucket of a time: `buckets` equal spans of the track's time range, the last one closed.
      const bucketOf = (t: number) =>
        span > 0 ? Math.min(buckets - 1, Math.floor(((t - t0) / span) * buckets)) : 0;
      for (const name of TOTAL_COUNTERS) {
        const curve = d.totals[name];
        const points = trace.traceEvents.filter((e) => e.ph === 'C' && e.pid === d.device && e.name === name);
        let changes = 0;
        for (let i = 0; i < curve.length; i++) if (i === 0 || curve[i] !== curve[i - 1]) changes++;
        if (changes <= max) continue;
        downsampled++;
        expect(points.length).toBeLessThanOrEqual(max);
        // The model's lowest and highest total after the entries of each bucket, and the values at each time.
        const low = new Map<number, number>();
        const high = new Map<number, number>();
        const valuesAt = new Map<number, Set<number>>();
        for (let i = 0; i < curve.length; i++) {
          const b = bucketOf(ts[i]!);
          low.set(b, Math.min(low.get(b) ?? Number.POSITIVE_INFINITY, curve[i]!));
          high.set(b, Math.max(high.get(b) ?? Number.NEGATIVE_INFINITY, curve[i]!));
          valuesAt.set(ts[i]!, (valuesAt.get(ts[i]!) ?? new Set()).add(curve[i]!));
        }
        const drawnLow = new Map<number, number>();
        const drawnHigh = new Map<number, number>();
        for (const p of points) {
          const v = p.args!.bytes as number;
          // Every point is a total the model reaches at that time: nothing averaged or invented.
          expect(valuesAt.get(p.ts!)?.has(v), `${name} ${v} at ${p.ts}`).toBe(true);
          const b = bucketOf(p.ts!);
          drawnLow.set(b, Math.min(drawnLow.get(b) ?? Number.POSITIVE_INFINITY, v));
          drawnHigh.set(b, Math.max(drawnHigh.get(b) ?? Number.NEGATIVE_INFINITY, v));
        }
        expect(drawnHigh, `device ${d.device} ${name}: highest per bucket`).toEqual(high);
        expect(drawnLow, `device ${d.device} ${name}: lowest per bucket`).toEqual(low);
        // The peak is drawn exactly, at the time of the entry that reached it first.
        let peak = 0;
        for (let i = 1; i < curve.length; i++) if (curve[i]! > curve[peak]!) peak = i;
        expect(points.some((p) => p.args!.bytes === curve[peak] && p.ts === ts[peak])).toBe(true);
      }
    }
    expect(downsampled).toBeGreaterThan(0);
    // --full on the same file: every change, exactly, and no note.
    const full = exportTrace(file, join(work, 'long-full.json'), ['--full']);
    checkCounters(bytes, full.traceEvents);
    expect(full.stderr).toBe('');
  });

  it('counter options: bad values and use with table formats are usage errors', () => {
    const file = join(CORPUS, 'ZidongLiu_DeComFL__memory__edd30e0.pickle');
    for (const args of [
      ['--format', 'perfetto', '--max-counter-points', '3', '-o', join(work, 'x.json')],
      ['--format', 'perfetto', '--full', '--max-counter-points', '100', '-o', join(work, 'x.json')],
      ['--format', 'csv', '--full', '-o', join(work, 'x-csv')],
    ]) {
      const run = spawnSync('node', [...NODE_FLAGS, CLI, 'export', file, ...args], { encoding: 'utf8' });
      expect(run.status, args.join(' ')).not.toBe(0);
      // Commander's usage errors print the command's help after their line, as everywhere in memlens.
      expect(run.stderr, args.join(' ')).toMatch(/^(error|memlens): [^\n]*(--full|counter|points)[^\n]*\n/);
    }
  });

  it('a bad input file is a one-line error naming it, and no output is left', () => {
    const bad = join(work, 'bad.pickle');
    writeFileSync(bad, 'not a pickle');
    const out = join(work, 'bad.json');
    let stderr = '';
    try {
      execFileSync('node', [...NODE_FLAGS, CLI, 'export', bad, '--format', 'perfetto', '-o', out], {
        encoding: 'utf8',
        stdio: 'pipe',
      });
    } catch (e) {
      stderr = String((e as { stderr: string }).stderr);
    }
    expect(stderr).toMatch(new RegExp(`^memlens: ${bad}: not a pickle[^\\n]*\\n$`));
    expect(() => readFileSync(out)).toThrow();
  });
});
