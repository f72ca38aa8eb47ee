/**
 * An empty array for values of every kind. V8 gives `[]` small-integer elements, changed to any
 * value at the first object pushed; code optimized in one decode for the changed array then met
 * the next decode's fresh one ("not a Smi") and was thrown away, once per file in a worker. An
 * array that starts out holding any value never changes kind.
 */
export function valueList<T = unknown>(): T[] {
  const list: unknown[] = [null];
  list.pop();
  return list as T[];
}
