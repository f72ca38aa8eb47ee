/**
 * Runs of trace entries are read by a WebAssembly scanner (assembly/entry-scan.ts, driven by
 * src/engine/decode/entry-batches.ts) instead of the JS paths. Whatever the bytes, the result must be
 * exactly what the JS paths give: the same columns, stacks and memo, or the same error. These
 * tests decode each input both ways and compare, and check the scanner really read the runs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { generateSnapshotBytes } from '../../../scripts/synth/generate.js';
import { Unpickler } from '../../../src/engine/decode/unpickler.js';
import { WasmEntryScan } from '../../../src/engine/decode/wasm-entry-scan.js';
import { type PyValue, Shared, shared } from '../../../src/engine/encode/pickle-values.js';
import { concatChunks, PickleWriter } from '../../../src/engine/encode/pickle-writer.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import { rng } from '../../helpers/rng.js';
import { columns } from '../../helpers/trace-columns.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'corpus');
const corpus = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];

/** Columns, or the error message: what a user would get either way. */
function outcome(bytes: Uint8Array, entryScan: boolean): { scanned: number; result: unknown } {
  try {
    const s = loadSnapshotBytes(bytes, { entryScan });
    return { scanned: s.scannedEntries, result: columns(s) };
  } catch (e) {
    return { scanned: 0, result: (e as Error).message };
  }
}

function expectSame(bytes: Uint8Array): number {
  const scanned = outcome(bytes, true);
  const js = outcome(bytes, false);
  expect(js.scanned).toBe(0);
  expect(scanned.result).toEqual(js.result);
  return scanned.scanned;
}

function pickle(value: PyValue, protocol: 2 | 3 | 4 | 5 = 4): Uint8Array {
  const chunks: Uint8Array[] = [];
  new PickleWriter((c) => chunks.push(c), { protocol, identity: 'all' }).dump(value);
  return concatChunks(chunks);
}

/**
 * A trace of one steady shape (long runs) with rare surprises: frame lists shared with recent
 * entries (memo references into the same run), repeated inline strings (references to strs the
 * run memoized), None and empty and one-frame tracebacks, tracebacks of over 1000 frames whose
 * first batch is another's whole list, odd int widths, a key order change.
 */
function steadyTrace(seed: number, n: number): PyValue {
  const r = rng(seed);
  const frames = Array.from({ length: 40 }, (_, i) => ({
    filename: `f${i % 7}.py`,
    line: i,
    name: `fn${i}`,
  }));
  const recent: PyValue[] = [];
  // One str object per action (memo references), and contexts first seen mid-run, so later
  // entries refer to a str an earlier entry of the same run memoized.
  const actions = ['alloc', 'free_requested', 'free_completed'].map((a) => shared(a));
  const contexts = ['ctx0', 'ctx1', 'ctx2'].map((c) => shared(c));
  const trace = Array.from({ length: n }, (_, i) => {
    const pick = r(40);
    let stack: PyValue;
    if (pick === 0) stack = null;
    else if (pick === 1) stack = [];
    else if (pick === 2) stack = [frames[r(40)]!];
    // Over 1000 frames (two APPENDS batches) sharing their first batch with another traceback.
    else if (pick === 3)
      stack = Array.from({ length: r(2) === 0 ? 1000 : 1000 + r(600) }, (_, k) => frames[k % 40]!);
    else if (pick < 8 && recent.length > 0) stack = recent[r(recent.length)]!;
    else stack = Array.from({ length: 5 + r(30) }, () => frames[r(40)]!);
    recent.push(stack);
    if (recent.length > 8) recent.shift();
    const e: Record<string, PyValue> = {
      action: actions[r(3)]!,
      addr: [r(256), r(65536), 0x7f0000000000 + r(1 << 20) * 512, -r(1000)][r(4)]!,
      size: r(20) === 0 ? 2 ** 52 + r(1000) : r(1 << 30),
      stream: r(10) === 0 ? 0x55d0c0ffee00 : 0,
      time_us: 1_700_000_000_000_000 + i * 10,
      compile_context: r(4) === 0 ? contexts[r(3)]! : 'N/A',
      user_metadata: r(30) === 0 ? `m${r(2)}` : '',
      frames: stack,
    };
    if (r(500) === 0) return Object.fromEntries(Object.entries(e).reverse());
    return e;
  });
  return { segments: [], device_traces: [trace] };
}

describe('the WebAssembly entry scanner', () => {
  it('reads almost every entry of a generated training trace, exactly as the JS paths do', () => {
    const { bytes } = generateSnapshotBytes({ events: 20000, seed: 3 });
    const scanned = expectSame(bytes);
    const entries = loadSnapshotBytes(bytes).traceColumns.length;
    expect(scanned).toBeGreaterThan(entries * 0.9);
  });

  for (const seed of [1, 2, 3]) {
    for (const protocol of [2, 4, 5] as const) {
      it(`steady traces with rare surprises (seed ${seed}, protocol ${protocol}): same as JS and as JSON`, () => {
        const value = steadyTrace(seed, 3000);
        const bytes = pickle(value, protocol);
        const scanned = expectSame(bytes);
        // Protocol 2 memoizes with BINPUT, which the scanner leaves to JS.
        if (protocol !== 2) expect(scanned).toBeGreaterThan(1000);
        const text = JSON.stringify(value, (_, v) => (v instanceof Shared ? v.value : v));
        const json = loadSnapshotBytes(new TextEncoder().encode(text));
        expect(columns(loadSnapshotBytes(bytes))).toEqual(columns(json));
      });
    }
  }

  it('gives the same result when the input arrives in small chunks of odd sizes', () => {
    const { bytes } = generateSnapshotBytes({ events: 5000, seed: 9 });
    const whole = columns(loadSnapshotBytes(bytes));
    for (const size of [997, 4096, 65537]) {
      const vm = new Unpickler(1024);
      for (let at = 0; at < bytes.length; at += size) vm.push(bytes.slice(at, at + size));
      const decoded = vm.finish();
      expect(decoded.scannedEntries).toBeGreaterThan(0);
      expect(decoded.trace.length).toBe(loadSnapshotBytes(bytes).traceColumns.length);
    }
    expect(columns(loadSnapshotBytes(bytes))).toEqual(whole);
  });

  it('gives the same result or the same error on 300 corrupted generated files', () => {
    const { bytes } = generateSnapshotBytes({ events: 2000, seed: 11 });
    const r = rng(7);
    for (let k = 0; k < 300; k++) {
      const b = bytes.slice();
      // Corrupt the trace (past the segments) where the scanner works.
      const from = Math.floor(b.length / 3);
      for (let m = 0; m <= r(3); m++) b[from + r(b.length - from)] = r(256);
      expectSame(b);
    }
  });

  it('gives the same result or the same error for memo references past 2^31 (the scanner writes them as i32)', () => {
    const bytes = pickle(steadyTrace(5, 2000));
    const LONG_BINGET = 0x6a;
    const at: number[] = [];
    for (let p = Math.floor(bytes.length / 4); p < bytes.length - 4; p++)
      if (bytes[p] === LONG_BINGET) at.push(p);
    expect(at.length).toBeGreaterThan(100);
    // Traceback references are written as -2 - index: 0x7fffffff and up would wrap to a key.
    for (const index of [0x7ffffffe, 0x7fffffff, 0x80000000, 0xffffffff]) {
      for (let k = 0; k < at.length; k += Math.ceil(at.length / 25)) {
        const b = bytes.slice();
        new DataView(b.buffer).setUint32(at[k]! + 1, index, true);
        expectSame(b);
      }
    }
  });

  it('gives the same result or the same error for references to recent, own and future memo slots', () => {
    // Around a reference, the memo holds entry dicts, inline strs, tracebacks and frame dicts of
    // the last few entries, and nothing yet past its own slots: every kind a reference can
    // wrongly point at, in the run or before it.
    const bytes = pickle(steadyTrace(6, 1500));
    const LONG_BINGET = 0x6a;
    const MEMOIZE = 0x94;
    const memoized = new Int32Array(bytes.length + 1);
    const at: number[] = [];
    for (let p = 0; p < bytes.length; p++) {
      memoized[p + 1] = memoized[p]! + (bytes[p] === MEMOIZE ? 1 : 0);
      if (p > bytes.length / 4 && p < bytes.length - 4 && bytes[p] === LONG_BINGET) at.push(p);
    }
    for (let k = 0; k < at.length; k += Math.ceil(at.length / 15)) {
      for (const d of [-40, -9, -3, -2, -1, 0, 1, 5]) {
        const b = bytes.slice();
        new DataView(b.buffer).setUint32(at[k]! + 1, Math.max(0, memoized[at[k]!]! + d), true);
        expectSame(b);
      }
    }
  });

  it('reads the rest of the file in JS if the scanner ever fails (a WebAssembly trap)', () => {
    const { bytes } = generateSnapshotBytes({ events: 3000, seed: 4 });
    const js = columns(loadSnapshotBytes(bytes, { entryScan: false }));
    let calls = 0;
    const original = WasmEntryScan.prototype.scan;
    const spy = vi.spyOn(WasmEntryScan.prototype, 'scan').mockImplementation(function (
      this: WasmEntryScan,
      ...args
    ) {
      // Fails on its tenth run, after some entries were read by it.
      if (++calls === 10) throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded');
      return original.apply(this, args);
    });
    try {
      const s = loadSnapshotBytes(bytes);
      expect(calls).toBe(10);
      expect(s.scannedEntries).toBeGreaterThan(0);
      expect(columns(s)).toEqual(js);
    } finally {
      spy.mockRestore();
    }
  });

  // An instance per decode cost more than decoding a small file (`memlens run` decodes thousands).
  it('reuses one instance for decodes one after another, each read exactly as a fresh one reads it', () => {
    const inputs = [
      generateSnapshotBytes({ events: 3000, seed: 5 }).bytes,
      pickle(steadyTrace(6, 2000), 5),
      generateSnapshotBytes({ events: 1000, seed: 7 }).bytes,
      pickle(steadyTrace(8, 2000), 4),
    ];
    const fresh = inputs.map((b) => columns(loadSnapshotBytes(b, { entryScan: false })));
    loadSnapshotBytes(inputs[0]!);
    const wasm = (globalThis as unknown as { WebAssembly: { Instance: new () => object } }).WebAssembly;
    const instantiate = vi.spyOn(wasm, 'Instance');
    try {
      for (const [k, b] of [...inputs, ...inputs].entries()) {
        const s = loadSnapshotBytes(b);
        expect(s.scannedEntries).toBeGreaterThan(500);
        expect(columns(s)).toEqual(fresh[k % inputs.length]);
      }
      expect(instantiate).not.toHaveBeenCalled();
    } finally {
      instantiate.mockRestore();
    }
  });

  for (const file of corpus) {
    it(`corpus ${file}: same columns and stacks as the JS paths`, () => {
      expectSame(new Uint8Array(readFileSync(join(CORPUS, file))));
    });
  }
});

describe('the embedded WebAssembly module', () => {
  it('is the one assembly/entry-scan.ts compiles to (run node scripts/build-wasm.mjs after editing it)', () => {
    const root = join(import.meta.dirname, '..', '..', '..');
    const r = spawnSync(process.execPath, [join(root, 'scripts', 'build-wasm.mjs'), '--check'], {
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  }, 60_000);
});
