/**
 * `make(key)` computed once per key object (a snapshot, a device model) and dropped with it: a
 * reloaded file's models are new keys, so nothing of the last file is served.
 */
export function oncePer<K extends object, V>(make: (key: K) => V): (key: K) => V {
  const known = new WeakMap<K, V>();
  return (key) => {
    let value = known.get(key);
    if (value === undefined) {
      value = make(key);
      known.set(key, value);
    }
    return value;
  };
}
