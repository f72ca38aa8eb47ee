/**
 * How decoded Python values look in JavaScript.
 *
 * None → null, bool → boolean, int → number (bigint beyond ±(2^53−1)), float → number,
 * str → string, bytes/bytearray → Uint8Array, list → Array, tuple → frozen Array,
 * dict → null-prototype object keyed by String(key), set/frozenset → Set.
 *
 * Opcodes that would import or call something in Python (GLOBAL, STACK_GLOBAL, REDUCE, BUILD,
 * NEWOBJ, INST, OBJ, PERSID, EXT*) never run anything here: they produce the inert objects below,
 * and every one is listed in the decoder's report so the loader can say what the file asked for.
 */
export type PyDict = Record<string, unknown>;

export function newDict(): PyDict {
  return Object.create(null) as PyDict;
}

/** Plain dicts: the decoder's null-prototype objects, or objects from JSON.parse. */
export function isDict(v: unknown): v is PyDict {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === null || proto === Object.prototype;
}

/** A reference to a Python global (module.name) that memlens refuses to import. */
export class PickledGlobal {
  constructor(
    readonly module: string,
    readonly name: string,
    readonly offset: number,
  ) {}
  toString(): string {
    return `${this.module}.${this.name}`;
  }
}

/** A call Python would have made while unpickling (REDUCE, NEWOBJ, INST, OBJ), never made here. */
export class PickledCall {
  state: unknown = undefined;
  constructor(
    readonly callable: unknown,
    readonly args: unknown,
    readonly offset: number,
  ) {}
  toString(): string {
    return `call to ${shortText(this.callable)}`;
  }
}

/** A persistent id (torch.save writes tensors this way) or an extension-registry code. */
export class PickledExternal {
  constructor(
    readonly kind: 'persistent id' | 'extension code' | 'out-of-band buffer',
    readonly value: unknown,
    readonly offset: number,
  ) {}
  toString(): string {
    return `${this.kind} ${shortText(this.value)}`;
  }
}

export type Inert = PickledGlobal | PickledCall | PickledExternal;

export function isInert(v: unknown): v is Inert {
  return v instanceof PickledGlobal || v instanceof PickledCall || v instanceof PickledExternal;
}

export function describeValue(v: unknown): string {
  if (v === null) return 'None';
  if (v === undefined) return 'nothing';
  if (typeof v === 'number') return Number.isInteger(v) ? 'an int' : 'a float';
  if (typeof v === 'bigint') return 'an int';
  if (typeof v === 'string') return 'a str';
  if (typeof v === 'boolean') return 'a bool';
  if (v instanceof Uint8Array) return 'bytes';
  if (Array.isArray(v)) return Object.isFrozen(v) ? 'a tuple' : 'a list';
  if (v instanceof Set) return 'a set';
  if (isInert(v)) return `a ${v.toString()}`;
  if (isDict(v)) return 'a dict';
  return 'an object';
}

/** Text for a value in a message or a label; never throws (dicts have no toString). */
export function shortText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (v === null) return 'None';
  if (isInert(v)) return v.toString();
  return describeValue(v);
}

/** JSON text of a decoded value (bigints as digits); cyclic or too-deep values get a description. */
export function jsonText(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x)) ?? shortText(v);
  } catch {
    return shortText(v);
  }
}
