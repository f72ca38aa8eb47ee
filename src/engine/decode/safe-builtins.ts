import { PickledGlobal } from '../values/py-values.js';

/**
 * Python's pickler writes a few plain data types through REDUCE of a builtin (sets and bytes at
 * protocols 0-3, bytearray up to 4). These are data, not code: memlens builds the value itself
 * and never imports anything. Any other global stays an inert placeholder.
 */
type Builder = (args: readonly unknown[]) => unknown;

const BUILDERS: Record<string, Builder> = {
  set: (args) => new Set(asArray(args[0])),
  frozenset: (args) => new Set(asArray(args[0])),
  bytes: (args) => toBytes(args),
  bytearray: (args) => toBytes(args),
};

const MODULES = new Set(['builtins', '__builtin__']);

export function buildSafe(callable: unknown, args: unknown): { value: unknown } | undefined {
  if (!(callable instanceof PickledGlobal) || !Array.isArray(args)) return undefined;
  if (callable.module === '_codecs' && callable.name === 'encode') return encodeCall(args);
  const build = MODULES.has(callable.module) ? BUILDERS[callable.name] : undefined;
  return build ? { value: build(args) } : undefined;
}

function asArray(v: unknown): unknown[] {
  if (v === undefined) return [];
  if (Array.isArray(v)) return v;
  if (v instanceof Set) return [...v];
  return [v];
}

/** bytes()/bytearray() of nothing, of bytes, of a list of ints, or of (str, 'latin-1'). */
function toBytes(args: readonly unknown[]): Uint8Array {
  const [first] = args;
  if (first === undefined) return new Uint8Array(0);
  if (first instanceof Uint8Array) return first.slice();
  if (typeof first === 'string') return latin1Bytes(first);
  return Uint8Array.from(asArray(first).map((x) => Number(x) & 0xff));
}

function encodeCall(args: readonly unknown[]): { value: unknown } | undefined {
  const [text, encoding] = args;
  if (typeof text !== 'string' || (encoding !== 'latin1' && encoding !== 'latin-1')) return undefined;
  return { value: latin1Bytes(text) };
}

function latin1Bytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) & 0xff;
  return out;
}
