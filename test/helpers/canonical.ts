/**
 * Canonical JSON (see fixtures/edge/README.md) <-> the pickle decoder's JS value model.
 *
 * Decoder value model:
 *   None -> null, bool -> boolean,
 *   int -> number when |v| <= 2^53-1, else bigint, float -> number,
 *   str -> string, bytes / bytearray -> Uint8Array (either for both),
 *   list -> Array (not frozen), tuple -> frozen Array (Object.isFrozen),
 *   dict -> null-prototype object keyed by Python str(key) (keyText), set / frozenset -> Set.
 *
 * A JS number cannot say whether Python had int 1 or float 1.0, so everything here walks the
 * value together with the expected canonical JSON and lets the expected side decide.
 */
import { keyText } from '../../src/engine/decode/py-key.js';

export type CanonicalFloat = number | 'inf' | '-inf' | 'nan' | '-0.0';

export type Canonical =
  | null
  | boolean
  | { int: string }
  | { float: CanonicalFloat }
  | { str: string }
  | { bytes: string }
  | { bytearray: string }
  | { list: Canonical[] }
  | { tuple: Canonical[] }
  | { dict: [Canonical, Canonical][] }
  | { set: Canonical[] }
  | { frozenset: Canonical[] }
  | { ref: 'self' };

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

type Tag =
  | 'int'
  | 'float'
  | 'str'
  | 'bytes'
  | 'bytearray'
  | 'list'
  | 'tuple'
  | 'dict'
  | 'set'
  | 'frozenset'
  | 'ref';

const TAGS: ReadonlySet<string> = new Set<Tag>([
  'int',
  'float',
  'str',
  'bytes',
  'bytearray',
  'list',
  'tuple',
  'dict',
  'set',
  'frozenset',
  'ref',
]);

/** The tag of a canonical node ('null' / 'bool' for the bare JSON literals), or null if malformed. */
function tagOf(exp: unknown): Tag | 'null' | 'bool' | null {
  if (exp === null) return 'null';
  if (typeof exp === 'boolean') return 'bool';
  if (typeof exp !== 'object' || Array.isArray(exp)) return null;
  const keys = Object.keys(exp);
  if (keys.length !== 1 || !TAGS.has(keys[0]!)) return null;
  return keys[0] as Tag;
}

function field<T>(exp: unknown, tag: Tag): T {
  return (exp as Record<string, unknown>)[tag] as T;
}

function isDict(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === null;
}

function fmtFloat(v: number): string {
  return Object.is(v, -0) ? '-0.0' : String(v);
}

function short(s: string, max = 40): string {
  const j = JSON.stringify(s);
  return j.length > max ? `${j.slice(0, max)}…" (length ${s.length})` : j;
}

/** A short description of a decoded JS value, for mismatch messages. */
export function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  switch (typeof v) {
    case 'boolean':
      return `boolean ${v}`;
    case 'number':
      return `number ${fmtFloat(v)}`;
    case 'bigint':
      return `bigint ${v}n`;
    case 'string':
      return `string ${short(v)}`;
    case 'function':
      return 'function';
    case 'symbol':
      return 'symbol';
  }
  if (Array.isArray(v)) {
    return Object.isFrozen(v)
      ? `tuple (frozen array, length ${v.length})`
      : `list (array, length ${v.length})`;
  }
  if (v instanceof Uint8Array) return `${v.constructor.name}(${v.length})`;
  if (v instanceof Set) return `Set(${v.size})`;
  if (v instanceof Map) return `Map(${v.size})`;
  if (isDict(v)) return `dict (null-prototype object, ${Object.keys(v).length} keys)`;
  const proto = Object.getPrototypeOf(v) as { constructor?: { name?: string } } | null;
  return `object with prototype ${proto?.constructor?.name ?? '?'}`;
}

function hexOf(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

function bytesOf(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function floatOf(f: CanonicalFloat): number {
  switch (f) {
    case 'inf':
      return Number.POSITIVE_INFINITY;
    case '-inf':
      return Number.NEGATIVE_INFINITY;
    case 'nan':
      return Number.NaN;
    case '-0.0':
      return -0;
    default:
      return f;
  }
}

function canonFloat(v: number): { float: CanonicalFloat } {
  if (Number.isNaN(v)) return { float: 'nan' };
  if (v === Number.POSITIVE_INFINITY) return { float: 'inf' };
  if (v === Number.NEGATIVE_INFINITY) return { float: '-inf' };
  if (Object.is(v, -0)) return { float: '-0.0' };
  return { float: v };
}

// ------------------------------------------------------------------------------------------------
// canonical -> JS value

/**
 * Builds the JS value the decoder is expected to produce for a canonical node (ints become numbers
 * or bigints, tuples are frozen, dicts are null-prototype objects keyed by String(key), ...).
 */
export function toJsValue(expected: unknown): unknown {
  return build(expected, undefined, '$');
}

function build(exp: unknown, parent: unknown, path: string): unknown {
  const tag = tagOf(exp);
  switch (tag) {
    case null:
      throw new Error(`${path}: invalid canonical node ${JSON.stringify(exp)}`);
    case 'null':
    case 'bool':
      return exp;
    case 'int': {
      const big = BigInt(field<string>(exp, 'int'));
      return big <= MAX_SAFE && big >= -MAX_SAFE ? Number(big) : big;
    }
    case 'float':
      return floatOf(field<CanonicalFloat>(exp, 'float'));
    case 'str':
      return field<string>(exp, 'str');
    case 'bytes':
    case 'bytearray':
      return bytesOf(field<string>(exp, tag));
    case 'ref':
      if (parent === undefined) throw new Error(`${path}: {"ref": "self"} outside any container`);
      return parent;
    case 'list':
    case 'tuple': {
      const out: unknown[] = [];
      field<unknown[]>(exp, tag).forEach((item, i) => {
        out.push(build(item, out, `${path}[${i}]`));
      });
      return tag === 'tuple' ? Object.freeze(out) : out;
    }
    case 'set':
    case 'frozenset': {
      const out = new Set<unknown>();
      field<unknown[]>(exp, tag).forEach((item, i) => {
        out.add(build(item, out, `${path}{${i}}`));
      });
      return out;
    }
    case 'dict': {
      const out = Object.create(null) as Record<string, unknown>;
      for (const [k, v] of field<[unknown, unknown][]>(exp, 'dict')) {
        const key = keyText(build(k, out, `${path}<key>`));
        out[key] = build(v, out, `${path}[${JSON.stringify(key)}]`);
      }
      return out;
    }
  }
}

/** The property name a decoded dict uses for a canonical key: String() of the key's JS value. */
export function dictKeyOf(expectedKey: unknown): string {
  return keyText(toJsValue(expectedKey));
}

/**
 * The entries of an expected dict as the decoder's object must hold them: keyed by String(key),
 * later duplicates overwriting earlier ones, and in JS property order (array-index-like keys such
 * as "7" first, ascending, then the rest in insertion order).
 */
function expectedDictModel(entries: [unknown, unknown][]): Record<string, unknown> {
  const model = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of entries) model[dictKeyOf(k)] = v;
  return model;
}

// ------------------------------------------------------------------------------------------------
// matcher

/**
 * Compares a decoded value with the expected canonical JSON. Returns null when they match, or a
 * message `<path>: <what differs>` for the first mismatch found (path like `$.list[3]["key"]`).
 *
 * `{"ref": "self"}` matches only the very object of the innermost enclosing container.
 */
export function matchesCanonical(value: unknown, expected: unknown): string | null {
  return match(value, expected, '$', undefined);
}

function match(value: unknown, exp: unknown, path: string, parent: unknown): string | null {
  const tag = tagOf(exp);
  const got = () => describeValue(value);
  switch (tag) {
    case null:
      return `${path}: invalid canonical node ${JSON.stringify(exp)?.slice(0, 80)}`;

    case 'null':
      return value === null ? null : `${path}: expected None (null), got ${got()}`;

    case 'bool':
      return value === exp ? null : `${path}: expected ${exp} (boolean), got ${got()}`;

    case 'int': {
      const s = field<string>(exp, 'int');
      const big = BigInt(s);
      const safe = big <= MAX_SAFE && big >= -MAX_SAFE;
      if (typeof value === 'number') {
        if (!Number.isInteger(value)) return `${path}: expected int ${s}, got float ${fmtFloat(value)}`;
        if (Object.is(value, -0)) return `${path}: expected int ${s}, got -0 (a float?)`;
        if (!safe) return `${path}: expected int ${s} as a bigint (|v| > 2^53-1), got number ${value}`;
        return BigInt(value) === big ? null : `${path}: expected int ${s}, got ${value}`;
      }
      if (typeof value === 'bigint') {
        if (value !== big) return `${path}: expected int ${s}, got bigint ${value}n`;
        return safe ? `${path}: expected int ${s} as a number (|v| <= 2^53-1), got bigint ${value}n` : null;
      }
      return `${path}: expected int ${s}, got ${got()}`;
    }

    case 'float': {
      const f = floatOf(field<CanonicalFloat>(exp, 'float'));
      if (typeof value !== 'number') return `${path}: expected float ${fmtFloat(f)}, got ${got()}`;
      if (Number.isNaN(f) ? Number.isNaN(value) : Object.is(value, f)) return null;
      return `${path}: expected float ${fmtFloat(f)}, got ${fmtFloat(value)}`;
    }

    case 'str': {
      const s = field<string>(exp, 'str');
      if (typeof value !== 'string') return `${path}: expected str ${short(s)}, got ${got()}`;
      if (value === s) return null;
      let i = 0;
      while (i < s.length && i < value.length && s.charCodeAt(i) === value.charCodeAt(i)) i++;
      return (
        `${path}: expected str ${short(s)}, got ${short(value)} ` +
        `(lengths ${s.length} vs ${value.length}, first difference at UTF-16 index ${i})`
      );
    }

    case 'bytes':
    case 'bytearray': {
      const hex = field<string>(exp, tag);
      if (!(value instanceof Uint8Array))
        return `${path}: expected ${tag} of ${hex.length / 2}, got ${got()}`;
      const h = hexOf(value);
      if (h === hex) return null;
      if (h.length !== hex.length) {
        return `${path}: expected ${tag} of length ${hex.length / 2}, got length ${value.length}`;
      }
      let i = 0;
      while (h.slice(2 * i, 2 * i + 2) === hex.slice(2 * i, 2 * i + 2)) i++;
      return `${path}: ${tag} differ at index ${i}: expected 0x${hex.slice(2 * i, 2 * i + 2)}, got 0x${h.slice(2 * i, 2 * i + 2)}`;
    }

    case 'ref':
      if (parent === undefined) return `${path}: {"ref": "self"} outside any container`;
      return value === parent
        ? null
        : `${path}: expected a reference to the enclosing container itself, got ${got()}`;

    case 'list':
    case 'tuple': {
      const items = field<unknown[]>(exp, tag);
      if (!Array.isArray(value) || Object.isFrozen(value) !== (tag === 'tuple')) {
        const want = tag === 'tuple' ? 'tuple (frozen array)' : 'list (unfrozen array)';
        return `${path}: expected ${want} of length ${items.length}, got ${got()}`;
      }
      if (value.length !== items.length) {
        return `${path}: expected ${tag} of length ${items.length}, got length ${value.length}`;
      }
      for (let i = 0; i < items.length; i++) {
        const m = match(value[i], items[i], `${path}[${i}]`, value);
        if (m !== null) return m;
      }
      return null;
    }

    case 'set':
    case 'frozenset': {
      const items = field<unknown[]>(exp, tag);
      if (!(value instanceof Set)) return `${path}: expected ${tag} of ${items.length} (a Set), got ${got()}`;
      if (value.size !== items.length) {
        return `${path}: expected ${tag} of size ${items.length}, got Set of size ${value.size}`;
      }
      const pool = [...value];
      const used = new Array<boolean>(pool.length).fill(false);
      for (let i = 0; i < items.length; i++) {
        let found = -1;
        let firstMiss: string | null = null;
        for (let j = 0; j < pool.length && found < 0; j++) {
          if (used[j]) continue;
          const m = match(pool[j], items[i], `${path}{${j}}`, value);
          if (m === null) found = j;
          else firstMiss ??= m;
        }
        if (found < 0) {
          return (
            `${path}: no element of the Set matches expected ${tag} element ` +
            `${JSON.stringify(items[i])?.slice(0, 120)}` +
            (firstMiss === null ? '' : ` (e.g. ${firstMiss})`)
          );
        }
        used[found] = true;
      }
      return null;
    }

    case 'dict': {
      const entries = field<[unknown, unknown][]>(exp, 'dict');
      if (!isDict(value)) {
        return `${path}: expected dict of ${entries.length} (null-prototype object), got ${got()}`;
      }
      let model: Record<string, unknown>;
      try {
        model = expectedDictModel(entries);
      } catch (e) {
        return `${path}: invalid expected dict key: ${(e as Error).message}`;
      }
      const want = Object.keys(model);
      const have = Object.keys(value);
      for (const k of want) {
        if (!Object.hasOwn(value, k)) return `${path}: missing key ${JSON.stringify(k)}`;
      }
      for (const k of have) {
        if (!Object.hasOwn(model, k)) return `${path}: unexpected key ${JSON.stringify(k)}`;
      }
      for (let i = 0; i < want.length; i++) {
        if (want[i] !== have[i]) {
          return (
            `${path}: key order differs at position ${i}: expected ${JSON.stringify(want[i])}, ` +
            `got ${JSON.stringify(have[i])}`
          );
        }
      }
      for (const k of want) {
        const m = match(value[k], model[k], `${path}[${JSON.stringify(k)}]`, value);
        if (m !== null) return m;
      }
      return null;
    }
  }
}

// ------------------------------------------------------------------------------------------------
// JS value -> canonical

/**
 * Converts a decoded JS value into canonical JSON, for readable diffs:
 * `expect(canonicalize(value, expected)).toEqual(expected)`.
 *
 * `hint` (normally the expected canonical JSON) is walked alongside and decides what JS cannot:
 * whether a number is an int or a float, bytes vs bytearray, set vs frozenset, the Python keys of a
 * dict, and the order of dict entries and set elements when the value matches. Without a hint,
 * integral numbers become ints, Uint8Array becomes bytes, Set becomes set, dict keys become str,
 * and set elements are sorted by their JSON text (UTF-16 order, which can differ from Python's).
 * Values outside the model come out as {"unknown": "<description>"}.
 */
export function canonicalize(value: unknown, hint?: unknown): unknown {
  return canon(value, hint, []);
}

function canon(value: unknown, hint: unknown, stack: unknown[]): unknown {
  const tag = tagOf(hint);
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'bigint') return { int: value.toString() };
  if (typeof value === 'number') {
    if (tag === 'float') return canonFloat(value);
    if (Number.isInteger(value) && !Object.is(value, -0)) return { int: String(value) };
    return canonFloat(value);
  }
  if (typeof value === 'string') return { str: value };
  if (value instanceof Uint8Array)
    return tag === 'bytearray' ? { bytearray: hexOf(value) } : { bytes: hexOf(value) };

  const isContainer = Array.isArray(value) || value instanceof Set || isDict(value);
  if (!isContainer) return { unknown: describeValue(value) };
  if (stack.length > 0 && stack[stack.length - 1] === value) return { ref: 'self' };
  if (stack.includes(value)) return { ref: 'ancestor' };
  const inner = [...stack, value];

  if (Array.isArray(value)) {
    const hints = tag === 'list' || tag === 'tuple' ? field<unknown[]>(hint, tag) : [];
    const items = value.map((x, i) => canon(x, hints[i], inner));
    return Object.isFrozen(value) ? { tuple: items } : { list: items };
  }

  if (value instanceof Set) {
    const kind = tag === 'frozenset' ? 'frozenset' : 'set';
    const hints = tag === 'set' || tag === 'frozenset' ? [...field<unknown[]>(hint, tag)] : [];
    const used = new Array<boolean>(hints.length).fill(false);
    const out: { c: unknown; order: number }[] = [];
    for (const x of value) {
      let order = -1;
      for (let j = 0; j < hints.length && order < 0; j++) {
        if (!used[j] && match(x, hints[j], '$', value) === null) {
          used[j] = true;
          order = j;
        }
      }
      out.push({ c: canon(x, order >= 0 ? hints[order] : undefined, inner), order });
    }
    // Matched elements keep the hint's order; the rest follow, sorted by JSON text.
    const text = (c: unknown) => JSON.stringify(c);
    out.sort((a, b) => {
      if (a.order >= 0 && b.order >= 0) return a.order - b.order;
      if (a.order >= 0 || b.order >= 0) return a.order >= 0 ? -1 : 1;
      const ta = text(a.c);
      const tb = text(b.c);
      return ta < tb ? -1 : ta > tb ? 1 : 0;
    });
    return { [kind]: out.map((o) => o.c) };
  }

  // dict
  const dict = value as Record<string, unknown>;
  const keys = Object.keys(dict);
  const hintEntries = tag === 'dict' ? field<[unknown, unknown][]>(hint, 'dict') : [];
  const byKey = new Map<string, [unknown, unknown]>();
  for (const entry of hintEntries) {
    try {
      const k = dictKeyOf(entry[0]);
      // like the decoder's object: the first occurrence fixes the position, the last one wins
      byKey.set(k, entry);
    } catch {
      // malformed hint key: ignore it
    }
  }
  let order = keys;
  if (tag === 'dict') {
    // If the value has exactly the keys the expected dict implies, in the JS property order it
    // implies, report the entries in Python insertion order so that an exact match compares equal.
    const hinted = [...byKey.keys()];
    const model = Object.keys(Object.fromEntries(hinted.map((k) => [k, 0])));
    if (model.length === keys.length && model.every((k, i) => k === keys[i])) order = hinted;
  }
  return {
    dict: order.map((k) => {
      const h = byKey.get(k);
      return [h === undefined ? { str: k } : h[0], canon(dict[k], h?.[1], inner)];
    }),
  };
}
