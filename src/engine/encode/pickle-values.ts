/**
 * The value model the pickle and JSON writers accept.
 *
 * Plain JS values map onto Python ones (null → None, number → int when integral else float,
 * bigint → int, string → str, Uint8Array → bytes, array → list, plain object / Map → dict).
 * The wrappers below express what JS cannot: a float that is integral, a tuple, an object that
 * several places refer to (Python identity), and a list whose items are produced lazily.
 */

/** A Python float, even when the number is integral (`pyFloat(0)` pickles as `0.0`). */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** A Python tuple. */
export class PyTuple {
  constructor(readonly items: readonly PyValue[]) {}
}

/**
 * One Python object referred to from several places. The writer pickles it the first time and
 * refers to it by memo index afterwards, as CPython does for any object seen twice.
 * The memo slot lives on the wrapper itself rather than in a table inside the writer, so that
 * a writer streaming gigabytes keeps no per-object state: once the caller drops a wrapper it
 * is garbage, and the writer never held it.
 */
export class Shared {
  /** Id of the writer that memoized this object, and the memo index it got there. */
  writerId = 0;
  memoIndex = -1;
  constructor(readonly value: PyValue) {}
}

/** A list whose items come from an iterator, pickled in batches without being held. */
export class StreamedList {
  constructor(readonly items: Iterable<PyValue>) {}
}

export type PyDict = { readonly [key: string]: PyValue };

export type PyValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | PyFloat
  | PyTuple
  | Shared
  | StreamedList
  | readonly PyValue[]
  | ReadonlyMap<PyValue, PyValue>
  | PyDict;

export function pyFloat(x: number): PyFloat {
  return new PyFloat(x);
}

export function pyTuple(items: readonly PyValue[]): PyTuple {
  return new PyTuple(items);
}

export function shared(value: PyValue): Shared {
  return new Shared(value);
}

export function streamedList(items: Iterable<PyValue>): StreamedList {
  return new StreamedList(items);
}
