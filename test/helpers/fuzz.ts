import { SnapshotError } from '../../src/engine/base/errors.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';

/**
 * Mutation fuzzing of the loader: every input must either load or fail with a SnapshotError (a
 * one-line message for the user); anything else (TypeError, RangeError, a hang) is a memlens bug.
 */
export interface FuzzFailure {
  seed: number;
  mutation: string;
  error: string;
}

export interface FuzzResult {
  cases: number;
  loaded: number;
  rejected: number;
  slowestMs: number;
  failures: FuzzFailure[];
}

/** Small deterministic PRNG (mulberry32) so a failing case can be replayed from its seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Mutation = (input: Uint8Array, r: () => number) => Uint8Array;

const int = (r: () => number, n: number): number => Math.floor(r() * n);

const MUTATIONS: Record<string, Mutation> = {
  truncate: (b, r) => b.slice(0, int(r, b.length)),
  flipBytes: (b, r) => {
    const out = b.slice();
    const n = 1 + int(r, 8);
    for (let i = 0; i < n; i++) out[int(r, out.length)] = int(r, 256);
    return out;
  },
  flipOpcode: (b, r) => {
    // Bytes right after a MEMOIZE/MARK are usually opcodes: hitting them stresses the VM more.
    const out = b.slice();
    for (let tries = 0; tries < 64; tries++) {
      const i = int(r, out.length - 1);
      if (out[i] === 0x94 || out[i] === 0x28) {
        out[i + 1] = int(r, 256);
        break;
      }
    }
    return out;
  },
  deleteRange: (b, r) => {
    const at = int(r, b.length);
    const len = 1 + int(r, 64);
    return concat(b.subarray(0, at), b.subarray(Math.min(b.length, at + len)));
  },
  duplicateRange: (b, r) => {
    const at = int(r, b.length);
    const len = 1 + int(r, 256);
    return concat(b.subarray(0, at + len), b.subarray(at));
  },
  randomTail: (b, r) => {
    const at = int(r, b.length);
    const tail = new Uint8Array(1 + int(r, 512)).map(() => int(r, 256));
    return concat(b.subarray(0, at), tail);
  },
  bigLength: (b, r) => {
    // A length field claiming gigabytes: must be refused or reported as truncation, not allocated.
    const out = b.slice();
    const i = int(r, out.length - 5);
    out[i] = [0x58, 0x8b, 0x42, 0x8d][int(r, 4)]!;
    out[i + 1] = 0xff;
    out[i + 2] = 0xff;
    out[i + 3] = 0xff;
    out[i + 4] = 0x7f;
    return out;
  },
};

export const MUTATION_NAMES = Object.keys(MUTATIONS);

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

export function mutate(input: Uint8Array, seed: number): { bytes: Uint8Array; mutation: string } {
  const r = rng(seed);
  const mutation = MUTATION_NAMES[int(r, MUTATION_NAMES.length)]!;
  return { bytes: MUTATIONS[mutation]!(input, r), mutation };
}

/** Runs `cases` mutations spread over `inputs`; seeds are firstSeed, firstSeed+1, ... */
export function fuzz(inputs: Uint8Array[], cases: number, firstSeed = 1): FuzzResult {
  const result: FuzzResult = { cases, loaded: 0, rejected: 0, slowestMs: 0, failures: [] };
  for (let k = 0; k < cases; k++) {
    const seed = firstSeed + k;
    const { bytes, mutation } = mutate(inputs[k % inputs.length]!, seed);
    const t0 = performance.now();
    try {
      loadSnapshotBytes(bytes);
      result.loaded++;
    } catch (e) {
      if (e instanceof SnapshotError && !e.message.includes('\n')) result.rejected++;
      else
        result.failures.push({
          seed,
          mutation,
          error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
        });
    }
    result.slowestMs = Math.max(result.slowestMs, performance.now() - t0);
  }
  return result;
}
