import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../src/cli/node-flags.js';
import { CATEGORIES } from '../src/engine/analyses/categories/categories.js';
import { TOTAL_COUNTERS } from '../src/engine/analyses/export/perfetto.js';
import { loadSnapshotBytes } from '../src/engine/load.js';
import { Action } from '../src/engine/model/trace-columns.js';
import { generateSnapshotBytes } from '../src/engine/synth/index.js';

/**
 * `memlens export --format perfetto` checked against the Trace Event Format's rules (known
 * phases, numeric timestamps and counter values, each track's timestamps never decreasing,
 * complete slices with a duration) and against the model: every counter point is the running
 * total after its entry, and every OOM and segment event is an instant.
 */
const CLI = join(import.meta.dirname, '..', 'dist', 'cli', 'main.js');
const CORPUS = join(import.meta.dirname, '..', '..', 'shared', 'corpus');
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

function exportTrace(file: string, out: string): { traceEvents: TraceEvent[] } {
  execFileSync('node', [...NODE_FLAGS, CLI, 'export', file, '--format', 'perfetto', '-o', out], {
    encoding: 'utf8',
  });
  const bytes = readFileSync(out);
  return JSON.parse((out.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8'));
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
    checkCounters(bytes, trace.traceEvents);
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
    it(`corpus ${name}: format rules and exact counters`, () => {
      const file = join(CORPUS, name);
      const trace = exportTrace(file, join(work, `${name}.json`));
      checkFormat(trace.traceEvents);
      checkCounters(new Uint8Array(readFileSync(file)), trace.traceEvents);
    });
  }

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
