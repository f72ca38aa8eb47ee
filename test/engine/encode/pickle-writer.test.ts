import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  PyFloat,
  PyTuple,
  type PyValue,
  pyFloat,
  pyTuple,
  Shared,
  StreamedList,
  shared,
  streamedList,
} from '../../../src/engine/encode/pickle-values.js';
import { concatChunks, PickleWriter, pickleDumps } from '../../../src/engine/encode/pickle-writer.js';

const hasPython = spawnSync('python3', ['--version']).status === 0;

/**
 * Rebuilds a value in Python from a tagged JSON description and pickles it with CPython.
 * Keys are interned (one object per distinct key, like literal or json keys), value strings are
 * fresh objects, `r` entries are one shared object: the identity model the writer implements.
 */
const PY_BUILD = `
import sys, json, pickle
keys, refs = {}, {}
def b(n):
    if not isinstance(n, list): return n
    t = n[0]
    if t == 'i': return int(n[1])
    if t == 'f': return float(n[1])
    if t == 's': return n[1]
    if t == 'k': return keys.setdefault(n[1], n[1])
    if t == 'b': return bytes.fromhex(n[1])
    if t == 'l': return [b(x) for x in n[1]]
    if t == 't': return tuple(b(x) for x in n[1])
    if t == 'd': return {b(k): b(v) for k, v in n[1]}
    if t == 'r':
        if len(n) == 2: return refs[n[1]]
        refs[n[1]] = v = b(n[2])
        return v
    raise ValueError(t)
req = json.loads(sys.stdin.read())
out = []
for case in req['cases']:
    out.append(pickle.dumps(b(case), protocol=req['protocol']).hex())
print(json.dumps(out))
`;

type Desc = null | boolean | (string | number | Desc | Desc[] | [Desc, Desc][])[];

function describeValue(v: PyValue, refs: Map<Shared, number>, key = false): Desc {
  if (v === null || typeof v === 'boolean') return v;
  if (typeof v === 'string') return [key ? 'k' : 's', v];
  if (typeof v === 'bigint') return ['i', v.toString()];
  if (typeof v === 'number') return Number.isInteger(v) ? ['i', BigInt(v).toString()] : floatDesc(v);
  if (v instanceof PyFloat) return floatDesc(v.value);
  if (v instanceof PyTuple) return ['t', v.items.map((x) => describeValue(x, refs))];
  if (v instanceof StreamedList) return ['l', [...v.items].map((x) => describeValue(x, refs))];
  if (v instanceof Uint8Array) return ['b', Buffer.from(v).toString('hex')];
  if (v instanceof Shared) {
    const seen = refs.get(v);
    if (seen !== undefined) return ['r', seen];
    refs.set(v, refs.size);
    return ['r', refs.size - 1, describeValue(v.value, refs, key)];
  }
  if (Array.isArray(v)) return ['l', v.map((x: PyValue) => describeValue(x, refs))];
  const entries: [PyValue, PyValue][] =
    v instanceof Map ? [...v.entries()] : Object.entries(v as Record<string, PyValue>);
  return [
    'd',
    entries.map(([k, x]) => [describeValue(k, refs, true), describeValue(x, refs)] as [Desc, Desc]),
  ];
}

function floatDesc(x: number): Desc {
  if (Number.isNaN(x)) return ['f', 'nan'];
  if (!Number.isFinite(x)) return ['f', x > 0 ? 'inf' : '-inf'];
  return ['f', Object.is(x, -0) ? '-0.0' : String(x)];
}

function python(script: string, input: string | Uint8Array): string {
  const r = spawnSync('python3', ['-c', script], { input, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`python3 failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

function cpythonDumps(values: PyValue[], protocol: number): Uint8Array[] {
  const cases = values.map((v) => describeValue(v, new Map()));
  const out = JSON.parse(python(PY_BUILD, JSON.stringify({ protocol, cases }))) as string[];
  return out.map((h) => new Uint8Array(Buffer.from(h, 'hex')));
}

function hex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

function frame(name: string, line: number): Shared {
  return shared({ name, filename: `/src/${name}.py`, line });
}

function representativeValues(): [string, PyValue][] {
  const f1 = frame('forward', 10);
  const f2 = frame('backward', 20);
  const stack = shared([f1, f2, f1]);
  const ints: PyValue[] = [
    0,
    1,
    127,
    128,
    255,
    256,
    65535,
    65536,
    2 ** 31 - 1,
    2 ** 31,
    2 ** 32,
    -1,
    -128,
    -129,
    -(2 ** 31),
    -(2 ** 31) - 1,
    2 ** 53 - 1,
    2 ** 53,
    -(2 ** 53),
    2n ** 63n - 1n,
    2n ** 63n,
    -(2n ** 63n),
    -(2n ** 63n) - 1n,
    2n ** 64n,
    2n ** 100n,
    -(2n ** 100n),
    255n,
    -(2n ** 39n),
    2n ** 2048n + 1n,
    -(2n ** 2050n),
    140500535853056,
    1783874667632574,
  ];
  return [
    [
      'nested dicts with shared sub-dicts',
      {
        a: [
          { frames: stack, size: 1 },
          { frames: stack, size: 2 },
        ],
        b: f2,
      },
    ],
    ['ints', ints],
    ['floats', [0.5, pyFloat(0), pyFloat(-0), 1e308, Number.NaN, Infinity, -Infinity, 5e-324, pyFloat(3)]],
    [
      'unicode',
      ['é', 'ü'.repeat(200), '😀', '\ud800x', '日本語', '', '', 'a', 'a', 'ab', 'ab', 'ÿ', 'Ā', 'Ā'],
    ],
    ['empty containers', [[], {}, new Map(), pyTuple([]), [[]], { x: {} }]],
    ['tuples', [pyTuple([1]), pyTuple([1, 'x']), pyTuple([1, 2, 3]), pyTuple([1, 2, 3, 4]), pyTuple([0, 0])]],
    [
      'singletons',
      [true, false, null, new Uint8Array(), new Uint8Array(), new Uint8Array([7]), new Uint8Array([7])],
    ],
    ['list 1', [42]],
    ['list 1000', range(1000)],
    ['list 1001', range(1001)],
    ['list 2500', range(2500).map((i) => `s${i}`)],
    ['dict 1', { only: 1 }],
    ['dict 1000', dictOf(1000)],
    ['dict 1001', dictOf(1001)],
    ['dict 2500', dictOf(2500)],
    [
      'map keys',
      new Map<PyValue, PyValue>([
        [1, 'a'],
        ['k', 2],
        [pyTuple([0, 1]), 3],
      ]),
    ],
    ['several frames', range(30000).map((i) => ({ i, s: `v${i}`, f: i * 0.5, big: 2 ** 40 + i }))],
    ['large string and bytes', ['x'.repeat(70000), new Uint8Array(70000).fill(3), 'tail', 'é'.repeat(40000)]],
    ['bytes sizes', [new Uint8Array(255), new Uint8Array(256), new Uint8Array(65535)]],
  ];
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

function dictOf(n: number): Record<string, number> {
  const d: Record<string, number> = {};
  for (let i = 0; i < n; i++) d[`key_${i}`] = i;
  return d;
}

/** Deterministic random values (xorshift), exercising frame boundaries at varied positions. */
function randomValue(seed: number, depth = 0): PyValue {
  let s = seed | 0 || 1;
  const next = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
  const pool: Shared[] = [];
  const gen = (d: number): PyValue => {
    const r = next();
    if (d > 3 || r < 0.35) return scalar(next);
    if (r < 0.45 && pool.length > 0) return pool[Math.floor(next() * pool.length)]!;
    if (r < 0.6) {
      const sh = shared({ name: `f${pool.length}`, line: Math.floor(next() * 5000) });
      pool.push(sh);
      return sh;
    }
    const n = Math.floor(next() * (next() < 0.1 ? 1500 : 8));
    if (r < 0.8) return Array.from({ length: n }, () => gen(d + 1));
    const o: Record<string, PyValue> = {};
    for (let i = 0; i < n; i++) o[`k${Math.floor(next() * 50)}`] = gen(d + 1);
    return o;
  };
  return gen(depth);
}

function scalar(next: () => number): PyValue {
  const r = next();
  if (r < 0.2) return Math.floor(next() * 2 ** (next() * 52));
  if (r < 0.3) return -Math.floor(next() * 2 ** (next() * 52));
  if (r < 0.4) return next() * 1000;
  if (r < 0.7) return 'x'.repeat(Math.floor(next() * 300)) + String(Math.floor(next() * 9));
  if (r < 0.8) return next() < 0.5;
  if (r < 0.9) return null;
  return pyTuple([Math.floor(next() * 1e6), 'é']);
}

describe('pickle writer (no python)', () => {
  it('writes the protocol header, a frame and STOP', () => {
    expect(hex(pickleDumps('abc'))).toBe('8004950700000000000000' + '8c03616263' + '942e');
    expect(hex(pickleDumps(null))).toBe('80044e2e');
    expect(hex(pickleDumps(1, { protocol: 2 }))).toBe('80024b012e');
  });

  it('streams a list with the same bytes as the materialized list', () => {
    for (const n of [0, 1, 2, 999, 1000, 1001, 2000, 2001]) {
      const items = range(n).map((i) => ({ i, s: `v${i}` }));
      const direct = pickleDumps(items);
      const streamed = pickleDumps(streamedList(items.values()));
      expect(hex(streamed)).toBe(hex(direct));
    }
  });

  it('gives the same bytes whatever the chunk size, and chunks are bounded', () => {
    const value = representativeValues().map(([, v]) => v);
    const whole = pickleDumps(value);
    for (const chunkSize of [1024, 65536, 1 << 22]) {
      const chunks: Uint8Array[] = [];
      new PickleWriter((c) => chunks.push(c), { chunkSize }).dump(value);
      expect(hex(concatChunks(chunks))).toBe(hex(whole));
      const largest = Math.max(...chunks.map((c) => c.length));
      expect(largest).toBeLessThanOrEqual(chunkSize + 4 * 65536 + 200000);
    }
  });

  it('pickles a shared object once and refers to it by memo index', () => {
    const f = shared({ name: 'x' });
    const bytes = pickleDumps([f, f, f]);
    const gets = [...bytes].filter((b) => b === 0x68).length;
    expect(gets).toBeGreaterThanOrEqual(2);
    expect([...bytes].filter((b) => b === 0x7d).length).toBe(1);
  });

  it('rejects values Python has no equivalent for', () => {
    expect(() => pickleDumps({ a: undefined } as unknown as PyValue)).toThrow(/undefined/);
    expect(() => pickleDumps(new Uint8Array(2), { protocol: 2 })).toThrow(/protocol 3/);
    expect(() => pickleDumps((() => 1) as unknown as PyValue)).toThrow(TypeError);
  });
});

describe.skipIf(!hasPython)('pickle writer against CPython', () => {
  const cases = representativeValues();

  for (const protocol of [4, 2, 3, 5] as const) {
    it(`writes the same bytes as pickle.dumps(protocol=${protocol})`, () => {
      const values = cases.map(([, v]) => v).filter((v) => protocol >= 3 || !containsBytes(v));
      const expected = cpythonDumps(values, protocol);
      values.forEach((v, i) => {
        expect(hex(pickleDumps(v, { protocol })), `case ${i} protocol ${protocol}`).toBe(hex(expected[i]!));
      });
    });
  }

  it('matches CPython on random values, including frame boundaries', () => {
    const values = range(25).map((i) => randomValue(1000 + i));
    const expected = cpythonDumps(values, 4);
    values.forEach((v, i) => {
      expect(hex(pickleDumps(v)), `random case ${i}`).toBe(hex(expected[i]!));
    });
  });

  it("matches CPython's identity semantics in 'all' mode for reused plain objects", () => {
    const sub = { a: 1, b: 'two' };
    const inner = [sub];
    const s = shared(sub);
    const si = shared([s]);
    const expected = cpythonDumps([[s, s, si, si]], 4)[0]!;
    const got = pickleDumps([sub, sub, inner, inner], { identity: 'all' });
    expect(hex(got)).toBe(hex(expected));
  });

  it('produces files pickle.load reads back to the intended value', () => {
    const value = { frames: [frame('f', 1), frame('g', 2)], n: [2n ** 70n, -5, 0.25], t: pyTuple([0, 0]) };
    for (const protocol of [2, 4, 5] as const) {
      const bytes = pickleDumps(value, { protocol });
      const out = python(
        `import sys, pickle; v = pickle.load(sys.stdin.buffer); print(repr(v))`,
        bytes,
      ).trim();
      expect(out).toBe(
        "{'frames': [{'name': 'f', 'filename': '/src/f.py', 'line': 1}, {'name': 'g', 'filename': '/src/g.py', 'line': 2}], " +
          "'n': [1180591620717411303424, -5, 0.25], 't': (0, 0)}",
      );
    }
  });
});

function containsBytes(v: PyValue): boolean {
  if (v instanceof Uint8Array) return true;
  if (Array.isArray(v)) return v.some((x: PyValue) => containsBytes(x));
  return false;
}
